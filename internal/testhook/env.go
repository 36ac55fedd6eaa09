//go:build ilmektest

package testhook

import "os"

// A child program a test built with the tag checks its writes when its
// parent asked for it (SetVerifyWrites sets the variable).
func init() { verifyWrites.Store(os.Getenv(VerifyWritesEnv) == "1") }
