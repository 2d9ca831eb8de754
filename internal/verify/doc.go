// Package verify checks a simulated capacity plan on the live server: it
// reads a sweep's max-rate answer (the JSON of run sweep --find max-rate),
// probes the server at a few rates around the predicted capacity (observe's
// sweep levels, internal/live, with their over-saturation stop), fits the
// latency model on those probes (calibrate fit's path, internal/calibrate),
// runs the plan again on the fitted model (run sweep's path,
// internal/replay), and reports predicted against measured capacity, the
// corrected answer and the fitted coefficients as text, JSON, Markdown or
// HTML.
//
// It owns only the joining of those steps and its page; every step is
// another package's. It never writes to stdout or stderr on its own and
// never imports a flag library.
package verify
