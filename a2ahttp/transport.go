// Package a2ahttp is the A2A transport over HTTP: the agent card from
// /.well-known/agent-card.json and JSON-RPC posted to the agent's
// endpoint, for the a2a_call node type of package
// github.com/ilmek-go/ilmek/nodes/a2a.
//
//	t, err := a2ahttp.New("https://bot.example.com", a2ahttp.WithHeader("Authorization", "Bearer "+token))
//	desk, err := a2a.Connect(ctx, t)
//
// It uses net/http alone: the client package of github.com/a2aproject/a2a-go
// holds a gRPC transport beside its JSON-RPC one, so importing it would
// bring gRPC into every build. It is a module of its own, as every
// transport of the node families is, so the core module's packages stay
// free of transports.
package a2ahttp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/ilmek-go/ilmek/nodes/a2a"
)

// CardPath is where an agent publishes its card, from its origin.
const CardPath = "/.well-known/agent-card.json"

// MaxResponseBytes bounds what the transport reads of one response.
const MaxResponseBytes = 8 << 20

// MaxErrorExcerpt bounds how much of the body of a response with an HTTP
// status other than 2xx the error quotes.
const MaxErrorExcerpt = 512

// Option configures New.
type Option func(*Transport)

// WithHeader adds a header to every request (an Authorization, say). The
// headers go only to the origin New was given: a card that names an
// endpoint on another origin is refused (ErrOtherOrigin) rather than sent
// the credentials; pass that endpoint to New to post there.
func WithHeader(key, value string) Option {
	return func(t *Transport) { t.header.Add(key, value) }
}

// WithClient sets the HTTP client (default http.DefaultClient).
func WithClient(c *http.Client) Option { return func(t *Transport) { t.client = c } }

// ErrOtherOrigin is matched (errors.Is) by the error of a transport with
// headers (WithHeader) whose agent card names an endpoint on another origin
// (scheme and host) than the one New was given: the headers, often
// credentials, are not sent there.
var ErrOtherOrigin = errors.New("the agent card names an endpoint on another origin than the transport's")

// Transport is an a2a.Transport over HTTP.
type Transport struct {
	origin  string // scheme://host of New's URL
	cardURL string
	client  *http.Client
	header  http.Header

	mu       sync.Mutex
	endpoint string
}

var _ a2a.Transport = (*Transport)(nil)

// New returns the transport of the agent at agentURL: its origin
// ("https://bot.example.com", whose card is at CardPath and whose endpoint
// the card names), its card's URL (a path ending in .json), or its JSON-RPC
// endpoint (any other path; the card is still read from the origin).
func New(agentURL string, opts ...Option) (*Transport, error) {
	u, err := url.Parse(agentURL)
	if err != nil {
		return nil, fmt.Errorf("a2ahttp: agent URL %q: %w", agentURL, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("a2ahttp: agent URL %q is not an http or https URL; pass the agent's origin, card URL or endpoint", agentURL)
	}
	t := &Transport{client: http.DefaultClient, header: http.Header{}}
	origin := &url.URL{Scheme: u.Scheme, Host: u.Host}
	t.origin = originOf(agentURL)
	switch {
	case strings.HasSuffix(u.Path, ".json"):
		t.cardURL = u.String()
	default:
		t.cardURL = origin.JoinPath(CardPath).String()
		if u.Path != "" && u.Path != "/" {
			t.endpoint = u.String()
		}
	}
	for _, o := range opts {
		o(t)
	}
	return t, nil
}

// AgentCard fetches the agent's card; the card's url becomes the endpoint
// unless New was given one.
func (t *Transport) AgentCard(ctx context.Context) (*a2a.AgentCard, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.cardURL, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	var card a2a.AgentCard
	if err := t.do(req, &card, "agent card"); err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.endpoint == "" && card.URL != "" {
		if len(t.header) > 0 {
			if o := originOf(card.URL); o != t.origin {
				return nil, fmt.Errorf("a2ahttp: the agent card at %s names endpoint %s: %w (%s), which the transport's headers are for; pass the endpoint to New if it should have them", t.cardURL, card.URL, ErrOtherOrigin, t.origin)
			}
		}
		t.endpoint = card.URL
	}
	return &card, nil
}

// originOf returns the scheme://host of rawURL ("" when it has none).
func originOf(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return ""
	}
	return (&url.URL{Scheme: strings.ToLower(u.Scheme), Host: strings.ToLower(u.Host)}).String()
}

// Post sends one JSON-RPC request to the endpoint (fetching the card first
// when the endpoint is not known yet). A JSON-RPC error is in the response,
// not an error of Post; an HTTP status other than 2xx is.
func (t *Transport) Post(ctx context.Context, r *a2a.Request) (*a2a.Response, error) {
	t.mu.Lock()
	endpoint := t.endpoint
	t.mu.Unlock()
	if endpoint == "" {
		if _, err := t.AgentCard(ctx); err != nil {
			return nil, err
		}
		t.mu.Lock()
		endpoint = t.endpoint
		t.mu.Unlock()
		if endpoint == "" {
			return nil, fmt.Errorf("a2ahttp: the agent card at %s names no url to post to; pass the endpoint to New", t.cardURL)
		}
	}
	body, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("a2ahttp: encode %s: %w", r.Method, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	var res a2a.Response
	if err := t.do(req, &res, r.Method); err != nil {
		return nil, err
	}
	return &res, nil
}

// StatusError is a response with an HTTP status other than 2xx: the
// request (What: "agent card", or the JSON-RPC method posted), its URL,
// the status, and the first MaxErrorExcerpt bytes of the body, white space
// trimmed. Nothing is journaled for it, so a retry or a later run sends
// again; errors.As finds it through the agent's and the node's errors.
type StatusError struct {
	What, URL  string
	StatusCode int
	// Status is the status line's text ("503 Service Unavailable").
	Status string
	Body   []byte
	// Truncated is set when Body is the start of a longer body.
	Truncated bool
}

// Error names the request, its URL and the status, and quotes the body.
func (e *StatusError) Error() string {
	return fmt.Sprintf("a2ahttp: %s: HTTP %s, %s", label(e.What, e.URL), e.Status, quoteExcerpt(e.Body, e.Truncated))
}

// label is how an error names a request: "agent card <url>", or
// "<method> at <url>".
func label(what, url string) string {
	if what == "agent card" {
		return what + " " + url
	}
	return what + " at " + url
}

// do sends req with the transport's headers and decodes a 2xx JSON body
// into v; what is "agent card" or the JSON-RPC method.
func (t *Transport) do(req *http.Request, v any, kind string) error {
	what := label(kind, req.URL.String())
	for k, vs := range t.header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	res, err := t.client.Do(req)
	if err != nil {
		return fmt.Errorf("a2ahttp: %s: %w", what, err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, MaxResponseBytes+1))
	if err != nil {
		return fmt.Errorf("a2ahttp: %s: read the response: %w", what, err)
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		body, cut := excerpt(data)
		return &StatusError{What: kind, URL: req.URL.String(), StatusCode: res.StatusCode, Status: res.Status, Body: body, Truncated: cut}
	}
	if len(data) > MaxResponseBytes {
		return fmt.Errorf("a2ahttp: %s: the response is over %d bytes", what, MaxResponseBytes)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("a2ahttp: %s: the response is not JSON of the expected shape: %w", what, err)
	}
	return nil
}

// excerpt is the first MaxErrorExcerpt bytes of body, surrounding white
// space trimmed, cut at a character's boundary, and whether it cut.
func excerpt(body []byte) ([]byte, bool) {
	b := bytes.TrimSpace(body)
	if len(b) <= MaxErrorExcerpt {
		return bytes.Clone(b), false
	}
	cut := b[:MaxErrorExcerpt]
	for k := 1; k < utf8.UTFMax && k <= len(cut); k++ {
		if at := len(cut) - k; utf8.RuneStart(cut[at]) {
			if !utf8.FullRune(cut[at:]) {
				cut = cut[:at]
			}
			break
		}
	}
	return bytes.Clone(cut), true
}

// quoteExcerpt quotes an excerpt as a Go string, so that control
// characters and invalid UTF-8 are escaped, and says when it was cut.
func quoteExcerpt(b []byte, cut bool) string {
	switch {
	case len(b) == 0 && !cut:
		return "with an empty body"
	case cut:
		return fmt.Sprintf("body %s (its first %d bytes)", strconv.Quote(string(b)), len(b))
	}
	return "body " + strconv.Quote(string(b))
}
