package pyfind_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/dlpack-go/dlpack/pyfind"
)

// fakePython puts on $PATH a python3 that exits with code for any script.
func fakePython(t *testing.T, code int) string {
	dir := t.TempDir()
	py := filepath.Join(dir, "python3")
	if err := os.WriteFile(py, []byte("#!/bin/sh\nexit "+string(rune('0'+code))+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	return py
}

func TestInterpreter(t *testing.T) {
	t.Setenv("PYTHON", "/opt/mine/bin/python")
	assert.Equal(t, "/opt/mine/bin/python", pyfind.Interpreter("numpy"), "$PYTHON is taken as it is")

	t.Setenv("PYTHON", "")
	venv := fakePython(t, 0)
	assert.Equal(t, venv, pyfind.Interpreter("numpy"), "python3 on $PATH that imports the modules")

	broken := fakePython(t, 1)
	if _, err := os.Stat(pyfind.Debian); err == nil {
		// Debian's, given NumPy by scripts/setup.sh, when $PATH's lacks the modules
		assert.Equal(t, pyfind.Debian, pyfind.Interpreter("numpy"))
	}
	assert.Equal(t, broken, pyfind.Interpreter("no_such_module_anywhere"),
		"with no interpreter that has the modules, $PATH's, to report what is missing")

	t.Setenv("PATH", t.TempDir())
	assert.Equal(t, pyfind.Debian, pyfind.Interpreter("numpy"), "without python3 on $PATH, Debian's")
}
