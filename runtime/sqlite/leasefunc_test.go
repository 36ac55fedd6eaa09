package sqlite

import "github.com/ilmek-go/ilmek/runtime"

// leaseFunc adapts a Lease to the func() the tests release it with.
func leaseFunc(l runtime.Lease, err error) (func(), error) {
	if err != nil {
		return nil, err
	}
	return l.Release, nil
}
