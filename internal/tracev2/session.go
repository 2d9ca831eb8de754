package tracev2

// Session modes of a client (Client.SessionMode): how later session rounds
// and closed-loop users' next requests are sent.
const (
	SessionFixed      = "fixed"       // each at its own time
	SessionClosedLoop = "closed-loop" // after the previous answer plus think time
)
