package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The example runs end to end (it needs NumPy, ONNX for Python and the ONNX Runtime library, as
// CI installs them: it fails, not skips, without them) and its claims hold.
func TestExample(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(&out), "output so far:\n%s", out.String())
	text := out.String()
	t.Log("\n" + text)
	assert.Contains(t, text, "tensors [dense.bias dense.weight embed.weight]")
	assert.Contains(t, text, "read-only view of the mapping: true")
	assert.Contains(t, text, "read where they are mapped: Y = [0 3.25 0 2.5]\n")
	assert.Contains(t, text, "Y = [0 3.25 0 2.5], equal to Gonum's: true")
	assert.NotContains(t, text, ": false")
}

// $PYTHON chooses the interpreter; one that cannot run stops the example with an error that says
// what is needed and how to choose another.
func TestExampleSaysWhatIsMissing(t *testing.T) {
	t.Setenv("PYTHON", "/nonexistent/python3")
	var out bytes.Buffer
	err := run(&out)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "(/nonexistent/python3: apt-get install python3-numpy python3-onnx, or set $PYTHON")
	assert.Empty(t, out.String())
}
