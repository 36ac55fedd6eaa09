package studio

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// FetchPublished fetches the published version of the document named name
// from the studio mounted at base (for example "https://studio.internal/studio"),
// for a service to hot-load with runtime.Load or a go:generate step to
// write to a file. It returns the document's bytes and its fingerprint.
// Authenticate the request through c (its Transport), as the studio's
// Authenticate hook expects; nil means http.DefaultClient. A studio's
// problem is returned as a *Problem, which errors.As finds.
func FetchPublished(ctx context.Context, c *http.Client, base, name string) (body []byte, fingerprint string, err error) {
	if c == nil {
		c = http.DefaultClient
	}
	if err := checkName(name); err != nil {
		return nil, "", fmt.Errorf("studio: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(base, "/")+"/api/published/"+url.PathEscape(name), nil)
	if err != nil {
		return nil, "", fmt.Errorf("studio: fetching %q from %s: %w", name, base, err)
	}
	res, err := c.Do(req)
	if err != nil {
		return nil, "", fmt.Errorf("studio: fetching %q from %s: %w", name, base, err)
	}
	defer res.Body.Close()
	body, err = io.ReadAll(io.LimitReader(res.Body, 64<<20))
	if err != nil {
		return nil, "", fmt.Errorf("studio: reading %q from %s: %w", name, base, err)
	}
	if res.StatusCode != http.StatusOK {
		p := &Problem{}
		if json.Unmarshal(body, p) != nil || p.Status == 0 {
			return nil, "", fmt.Errorf("studio: fetching %q from %s: status %d", name, base, res.StatusCode)
		}
		return nil, "", p
	}
	return body, res.Header.Get("Ilmek-Fingerprint"), nil
}

// Error makes a Problem an error: its title and detail.
func (p *Problem) Error() string {
	return "studio: " + p.Title + ": " + p.Detail
}
