package live

import (
	"context"

	"servesim/internal/exitcode"
)

// ServedModels lists the models the server at in.URL serves (GET
// /v1/models), sending no completion: a command checks what it will ask
// for before any traffic. Only the server fields of in are read.
func ServedModels(ctx context.Context, in Config) ([]string, error) {
	headers, err := parseHeaders(in.Headers)
	if err != nil {
		return nil, err
	}
	if in.URL == "" {
		return nil, exitcode.Usagef("--server-url is required")
	}
	info, err := probeServer(ctx, &config{url: in.URL, apiKey: in.APIKey, insecure: in.Insecure, headers: headers})
	return info.models, err
}
