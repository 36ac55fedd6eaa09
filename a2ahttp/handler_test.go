package a2ahttp_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/a2ahttp"
)

// TestHandlerEchoesTheRequestID: JSON-RPC 2.0 ids are strings, numbers or
// null, and the response carries the request's id as it was sent. Before,
// the handler read ids as integers: a string id (the Python A2A client
// sends UUIDs) was refused as a parse error and null came back as 0. An id
// of another kind is an invalid request, answered with id null.
func TestHandlerEchoesTheRequestID(t *testing.T) {
	var c counts
	hs := serveB(t, &c)
	for _, tc := range []struct {
		name, id string // id "" leaves the member out
		wantID   string
		wantCode int // 0: a result
	}{
		{"string", `"3f1c9a-uuid"`, `"3f1c9a-uuid"`, 0},
		{"integer", `7`, `7`, 0},
		{"big integer", `12345678901234567890`, `12345678901234567890`, 0},
		{"fraction", `1.5`, `1.5`, 0},
		{"null", `null`, `null`, 0},
		{"absent", ``, `null`, 0},
		{"object", `{"x": 1}`, `null`, -32600},
		{"array", `[1]`, `null`, -32600},
		{"boolean", `true`, `null`, -32600},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := `{"jsonrpc": "2.0", "method": "tasks/get", "params": {"id": "nope"}`
			if tc.id != "" {
				body += `, "id": ` + tc.id
			}
			body += `}`
			resp, err := http.Post(hs.URL+a2ahttp.EndpointPath, "application/json", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var r struct {
				ID    json.RawMessage `json:"id"`
				Error *struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
				t.Fatal(err)
			}
			if string(r.ID) != tc.wantID {
				t.Errorf("response id %s, want %s", r.ID, tc.wantID)
			}
			// tasks/get of an unknown task answers -32001: the request was
			// read and served.
			code := -32001
			if tc.wantCode != 0 {
				code = tc.wantCode
			}
			if r.Error == nil || r.Error.Code != code {
				t.Errorf("response error %+v, want code %d", r.Error, code)
			}
		})
	}
}

// TestHandlerRefusesAnOversizedRequest: a request over MaxResponseBytes
// is refused saying so, not as truncated JSON.
func TestHandlerRefusesAnOversizedRequest(t *testing.T) {
	var c counts
	hs := serveB(t, &c)
	body := `{"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": {"kind": "message", "messageId": "m", "role": "user", "parts": [{"kind": "text", "text": "` +
		strings.Repeat("a", a2ahttp.MaxResponseBytes) + `"}]}}}`
	resp, err := http.Post(hs.URL+a2ahttp.EndpointPath, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatal(err)
	}
	if r.Error == nil || r.Error.Code != -32600 || !strings.Contains(r.Error.Message, "over 8388608 bytes") {
		t.Errorf("response error %+v, want -32600 saying the request is over 8388608 bytes", r.Error)
	}
	if c.sends.Load() != 1 { // the handler counted the post; no run started
		t.Errorf("posts %d", c.sends.Load())
	}
}
