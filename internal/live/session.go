package live

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"servesim/internal/exitcode"
	"servesim/internal/httpload"
	"servesim/internal/outfile"
	"servesim/internal/tracev2"
)

// sideOutputs are the files opened before t0 (so a bad path fails before
// any request): the ITL CSV and the /metrics time series.
type sideOutputs struct {
	itlFile *os.File
	itl     *tracev2.ITLWriter
	metFile *os.File
	scraper *scraper
}

func openSide(cfg *config, s *setup, log *slog.Logger) (*sideOutputs, error) {
	o := &sideOutputs{}
	if cfg.itlOut != "" {
		f, err := os.Create(cfg.itlOut)
		if err != nil {
			return nil, fmt.Errorf("--itl-output: %w", err)
		}
		o.itlFile = f
		if o.itl, err = tracev2.NewITLWriter(f); err != nil {
			o.close()
			return nil, err
		}
	}
	if cfg.scrape {
		// A client of its own, so a scrape never takes a connection the
		// load client kept warm for a request.
		c, err := httpload.NewClient(httpload.Config{BaseURL: cfg.url, APIKey: cfg.apiKey, Headers: cfg.headers,
			InsecureSkipVerify: cfg.insecure, MaxConns: 2})
		if err != nil {
			o.close()
			return nil, exitcode.Usagef("--server-url: %v", err)
		}
		var w io.Writer // nil: no time series
		if cfg.metricsOut != "" {
			f, err := os.Create(cfg.metricsOut)
			if err != nil {
				o.close()
				return nil, fmt.Errorf("--metrics-output: %w", err)
			}
			o.metFile, w = f, f
		} else {
			log.Info("--scrape-metrics: no time series file with the trace on stdout (give --metrics-output); the deltas go to the trailer")
		}
		o.scraper, err = newScraper(c, w, log)
		if err != nil {
			o.close()
			return nil, err
		}
	}
	return o, nil
}

// close closes the side files; safe to call twice.
func (o *sideOutputs) close() error {
	var errs []error
	if o.itlFile != nil {
		errs = append(errs, o.itlFile.Close())
		o.itlFile = nil
	}
	if o.metFile != nil {
		errs = append(errs, o.metFile.Close())
		o.metFile = nil
	}
	if o.scraper != nil {
		o.scraper.c.Close()
	}
	return errors.Join(errs...)
}

// openTrace starts the trace: the header goes out at once.
func openTrace(cfg *config, stdio IO, h *tracev2.Header, cols tracev2.Columns) (*tracev2.TraceWriter, error) {
	return tracev2.Create(cfg.traceOut, stdio.Out, h, cols, !cfg.blisHeader)
}

// levelOutcome is what one recorded run measured: the sweep's row of it.
type levelOutcome struct {
	tally     *tally
	stats     httpload.Stats
	saturated bool   // stopped early: the server fell behind without bound
	reason    string // why, in numbers
}

// saveResult writes --result-json (whole or not at all).
func saveResult(cfg *config, tr traffic, s *setup, tal *tally, rows *resultRows, t0 time.Time, stdio IO) error {
	backend := "openai"
	if cfg.chat {
		backend = "openai-chat"
	}
	data, err := writeResult(cfg.result, resultInfo{model: s.model, backend: backend, maxConcurrency: cfg.maxConc,
		facts: tr.bench(), t0: t0, end: time.Now(), goodput: cfg.goodput.set()}, tal, rows)
	if err != nil {
		return err
	}
	return writeWhole(cfg.result.path, "--result-json", data, stdio)
}

// writeWhole writes data to path ("-" = stdout) so that a file appears
// whole or not at all; flag names the output in errors.
func writeWhole(path, flag string, data []byte, stdio IO) error {
	if path == "" || path == "-" {
		if _, err := stdio.Out.Write(data); err != nil {
			return fmt.Errorf("%s: %w", flag, err)
		}
		return nil
	}
	out, err := outfile.Create(path)
	if err != nil {
		return fmt.Errorf("%s: %w", flag, err)
	}
	defer out.Abort()
	if _, err := out.Write(data); err != nil {
		return fmt.Errorf("%s: %w", flag, err)
	}
	return out.Commit()
}
