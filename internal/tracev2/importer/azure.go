package importer

import (
	"io"
	"time"

	"servesim/internal/tracev2"
)

// azureRow binds one row of the Azure LLM inference trace by column name.
// Values stay text so that errors can quote them exactly.
type azureRow struct {
	Timestamp string `csv:"TIMESTAMP"`
	Context   string `csv:"ContextTokens"`
	Generated string `csv:"GeneratedTokens"`
}

// azureLayouts are the accepted TIMESTAMP forms. The 2023 files write
// "2023-11-16 18:17:03.9799600" (7 fractional digits, no zone); the 2024
// files add a zone offset. Go parses any number of fractional digits after
// the seconds even though the layouts do not spell them. No zone means UTC.
func azureLayouts() [4]string {
	return [4]string{
		"2006-01-02 15:04:05",
		"2006-01-02 15:04:05Z07:00",
		"2006-01-02T15:04:05",
		"2006-01-02T15:04:05Z07:00",
	}
}

// Azure imports the Azure LLM inference trace (2023; the 2024 files share the
// columns) — CSV with TIMESTAMP (wall clock), ContextTokens, GeneratedTokens.
//
// Mapping: arrival_time_us = TIMESTAMP − first row's TIMESTAMP, rounded to
// the µs (the files carry 100 ns ticks); send_time_us = arrival_time_us;
// input_tokens = ContextTokens; output_tokens = GeneratedTokens; request_id =
// 0-based row index; status ok; streaming false; chunk times 0 (not
// measured). created_at is the first TIMESTAMP (taken as UTC). A row earlier
// than the first row is an error: arrivals are offsets from the first row.
type Azure struct {
	src    *csvSource[azureRow]
	client string
	t0     time.Time
	t0Text string
	hdr    *tracev2.Header
	row    azureRow
	stream
}

// NewAzure reads the column row and the first data row of an Azure trace.
// name is the file name used in errors ("" or "-" for stdin) and to derive
// the client id (AzureLLMInferenceTrace_code.csv -> azure-code).
func NewAzure(name string, r io.Reader, opts Options) (*Azure, error) {
	src, err := newCSVSource[azureRow](name, r, []string{"TIMESTAMP", "ContextTokens", "GeneratedTokens"})
	if err != nil {
		return nil, err
	}
	a := &Azure{
		src:    src,
		client: clientID(opts, "azure", name, "AzureLLMInferenceTrace"),
		hdr:    newHeader(),
	}
	if err := a.start(a.read); err != nil {
		return nil, err
	}
	return a, nil
}

// Header describes the imported trace; CreatedAt is the first TIMESTAMP.
func (a *Azure) Header() *tracev2.Header { return a.hdr.Clone() }

func (a *Azure) read() (tracev2.Record, error) {
	if err := a.src.next(&a.row); err != nil {
		return tracev2.Record{}, err
	}
	row := &a.row
	ts, ok := parseAzureTime(row.Timestamp)
	if !ok {
		return tracev2.Record{}, a.src.errField("TIMESTAMP",
			quote(row.Timestamp)+" is not a timestamp (want YYYY-MM-DD hh:mm:ss[.fraction][zone])")
	}
	in, prob := parseCount(row.Context, false)
	if prob != "" {
		return tracev2.Record{}, a.src.errField("ContextTokens", quote(row.Context)+" "+prob)
	}
	out, prob := parseCount(row.Generated, false)
	if prob != "" {
		return tracev2.Record{}, a.src.errField("GeneratedTokens", quote(row.Generated)+" "+prob)
	}
	if a.t0Text == "" {
		a.t0, a.t0Text = ts, row.Timestamp
		a.hdr.CreatedAt = tracev2.FormatCreatedAt(ts)
	}
	d := ts.Sub(a.t0)
	if d < 0 {
		return tracev2.Record{}, a.src.errField("TIMESTAMP", quote(row.Timestamp)+
			" is earlier than the first row's "+quote(a.t0Text)+
			" (arrivals are offsets from the first row; sort the file by TIMESTAMP)")
	}
	arrival := int64(d.Round(time.Microsecond) / time.Microsecond)
	if tracev2.IsEpoch(arrival) {
		return tracev2.Record{}, a.src.errField("TIMESTAMP", quote(row.Timestamp)+
			" is too far after the first row's "+quote(a.t0Text)+": the offset "+probEpoch)
	}
	return tracev2.Record{
		RequestID:     int64(a.src.records - 1),
		ClientID:      a.client,
		InputTokens:   in,
		OutputTokens:  out,
		ArrivalTimeUs: arrival,
		SendTimeUs:    arrival,
		Status:        "ok",
	}, nil
}

func parseAzureTime(s string) (time.Time, bool) {
	for _, layout := range azureLayouts() {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}
