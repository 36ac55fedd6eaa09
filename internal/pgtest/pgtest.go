// Package pgtest is the one place tests find their PostgreSQL server.
package pgtest

import (
	"os"
	"testing"
)

// EnvDSN names the server the PostgreSQL tests run against (a
// postgres:// URL).
const EnvDSN = "ILMEK_POSTGRES_DSN"

// DSN returns the test server's connection string. Without one the test
// skips with a one-line notice, unless CI=true: in CI a missing server is a
// failure (.ci/run sets the variable).
func DSN(t testing.TB) string {
	t.Helper()
	d := os.Getenv(EnvDSN)
	if d == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set; CI must run the PostgreSQL tests (.ci/run sets it)", EnvDSN)
		}
		t.Skipf("%s not set: skipping the PostgreSQL tests (see README, \"PostgreSQL tests\")", EnvDSN)
	}
	return d
}
