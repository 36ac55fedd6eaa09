package server

import (
	"net/http"
	"testing"
)

// What the tests of package server_test use: they run the server with the
// adapters that import package server (server/workersqueue), which the
// tests of package server cannot import.

// TestServer is a Server behind httptest (see newTestServer).
type TestServer = testServer

// Resp is a response read whole.
type Resp = resp

// SSEEvent is one Server-Sent Event.
type SSEEvent = sseEvent

var (
	NewTestServer = newTestServer
	ApprovalGraph = approvalGraph
	ReadSSE       = readSSE
)

func (ts *testServer) Do(who, method, path string, body any) Resp {
	ts.t.Helper()
	return ts.do(who, method, path, body)
}
func (ts *testServer) DoWith(who, method, path string, body any, h http.Header) Resp {
	ts.t.Helper()
	return ts.doWith(who, method, path, body, h)
}
func (ts *testServer) Must(who, method, path string, body any, status int) Resp {
	ts.t.Helper()
	return ts.must(who, method, path, body, status)
}
func (ts *testServer) NewThread(who string, body any) ThreadView {
	ts.t.Helper()
	return ts.newThread(who, body)
}
func (ts *testServer) Wait(who string, run RunView) RunView { ts.t.Helper(); return ts.wait(who, run) }
func (ts *testServer) Stream(t *testing.T, who, path, lastID string) *http.Response {
	t.Helper()
	return ts.stream(t, who, path, lastID)
}
func (r resp) JSON(t testing.TB, v any)     { t.Helper(); r.json(t, v) }
func (r resp) Problem(t testing.TB) Problem { t.Helper(); return r.problem(t) }
