package sqlite

import (
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// leaseFunc adapts a Lease to the func() the tests release it with.
func leaseFunc(l checkpoint.Lease, err error) (func(), error) {
	if err != nil {
		return nil, err
	}
	return l.Release, nil
}
