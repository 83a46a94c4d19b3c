package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The tour runs end to end (it needs the ONNX Runtime library and NumPy, as CI installs them:
// it fails, not skips, without them) and its proofs hold.
func TestTour(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, tour(&out), "tour output so far:\n%s", out.String())
	text := out.String()
	t.Log("\n" + text)

	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`1 Gonum → Gorgonia .*copied: no .*same address 0x[0-9a-f]+: true`),
		regexp.MustCompile(`Gorgonia wrote X\[1,1\] = -50, Gonum reads -50\n`),
		regexp.MustCompile(`2 core → ONNX Runtime .*\d+ bytes of ONNX written in Go`),
		regexp.MustCompile(`input X: copied: no \(ZeroCopyOnly\), ORT read it at Gonum's address 0x[0-9a-f]+`),
		regexp.MustCompile(`output Y: .*\*mat\.Dense \(RunWith\), copied: no; Y = \[4\.5 4 10\.5 0\] = Gonum's .*: true`),
		regexp.MustCompile(`3 core → \.npy → NumPy .*NumPy \d+\.\d+\.\d+ np\.load: \[4\.5 4 10\.5 0\], equal: true`),
		regexp.MustCompile(`numpyx\.Map, copied: no .*read-only: true, equal: true`),
		regexp.MustCompile(`4 core → GPU (.*no GPU here: skipped the GPU hop \(errors\.Is\(err, gpu\.ErrNoDevice\)\)|→ core .*equal: true)`),
	} {
		assert.Regexp(t, want, text)
	}
	assert.NotContains(t, text, ": false")
	lines := strings.Count(text, "\n")
	assert.True(t, lines >= 9 && lines <= 25, "the tour should stay short: %d lines", lines)
}

// Without NumPy the tour stops at the NumPy hop with an error that says what to run, instead of
// pretending; the hops before it still ran and said so. $PYTHON chooses the interpreter.
func TestTourSaysWhatIsMissing(t *testing.T) {
	t.Setenv("PYTHON", "/nonexistent/python3")
	var out bytes.Buffer
	err := tour(&out)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "NumPy not found in /nonexistent/python3 — run scripts/setup.sh")
	assert.Contains(t, err.Error(), "or set $PYTHON to an interpreter with NumPy")
	assert.Contains(t, out.String(), "2 core → ONNX Runtime")
	assert.NotContains(t, out.String(), "3 core → .npy")
	assert.NotContains(t, out.String(), "done:")
}
