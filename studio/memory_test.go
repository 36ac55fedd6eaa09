package studio_test

import (
	"testing"

	"github.com/ilmek-go/ilmek/studio"
	"github.com/ilmek-go/ilmek/studio/repotest"
)

func TestMemoryRepository(t *testing.T) {
	repotest.Run(t, func(*testing.T) studio.Repository { return studio.NewMemory() })
}
