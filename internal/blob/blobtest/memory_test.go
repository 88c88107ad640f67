package blobtest

import (
	"testing"

	"github.com/benchline/benchline/internal/blob"
)

func TestMemoryConformance(t *testing.T) {
	Conformance(t, func(t *testing.T) blob.Store { return NewMemory() })
}
