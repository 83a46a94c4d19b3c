package main

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/ggufx/internal/ggmlref"
)

// The committed ggufx/zz_grids.go is exactly what ggml's library gives today: every table entry
// recovered from crafted blocks and checked as it was read.
func TestGridsAreGgmls(t *testing.T) {
	l := ggmlref.Load(t)
	tab, err := Recover(l)
	require.NoError(t, err)
	tab.Describe = describe(l.Path)
	committed, err := os.ReadFile("../../zz_grids.go")
	require.NoError(t, err)
	assert.Equal(t, string(Source(tab)), string(committed), "go generate ./ggufx/ rewrites it")
}

// Facts every reader of the format knows, which the recovery must find: the sign table's eighth
// bit is the parity of the seven others, IQ4_NL's values are sorted, and UE4M3 of 0x38 (2^0) is
// 0.5 (ggml halves the scale as it doubles the E2M1 values).
func TestRecoveredFacts(t *testing.T) {
	tab, err := Recover(ggmlref.Load(t))
	require.NoError(t, err)
	for s, v := range tab.KSigns {
		parity := 0
		for j := range 7 {
			parity ^= s >> j & 1
		}
		assert.Equal(t, uint8(s|parity<<7), v, "ksigns %d", s)
	}
	for j := 1; j < 16; j++ {
		assert.Less(t, tab.KValues[j-1], tab.KValues[j])
	}
	assert.Equal(t, float32(0.5), tab.UE4M3[0x38])
	assert.Zero(t, tab.UE4M3[0])
}
