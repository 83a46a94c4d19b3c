// Package notebooks holds the example notebooks; its test checks the rules of README.md that a
// notebook can break without failing to run (scripts/notebooks.sh runs them).
package notebooks

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type notebook struct {
	Cells []struct {
		Type           string          `json:"cell_type"`
		Source         []string        `json:"source"`
		Outputs        []any           `json:"outputs"`
		ExecutionCount json.RawMessage `json:"execution_count"`
	} `json:"cells"`
	Metadata struct {
		Kernelspec struct {
			Name string `json:"name"`
		} `json:"kernelspec"`
	} `json:"metadata"`
	Format int `json:"nbformat"`
}

var importCell = regexp.MustCompile(`(?m)^import\s*[("]`)

// pythonPath is a Go string that is an interpreter's name or path ("python3", "/usr/bin/python3"):
// users have venvs, conda and pyenv, and package pyfind picks among them.
var pythonPath = regexp.MustCompile(`"(\S*/)?python[0-9.]*"`)

func TestNotebooksFollowTheRules(t *testing.T) {
	names, err := filepath.Glob("*.ipynb")
	require.NoError(t, err)
	require.NotEmpty(t, names)
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			assert.Regexp(t, `^\d\d-[a-z0-9-]+\.ipynb$`, name)
			assert.Contains(t, string(readme), "`"+name+"`", "listed in README.md")
			b, err := os.ReadFile(name)
			require.NoError(t, err)
			var nb notebook
			require.NoError(t, json.Unmarshal(b, &nb))
			assert.Equal(t, 4, nb.Format)
			assert.Equal(t, "go-dlpack", nb.Metadata.Kernelspec.Name)
			require.NotEmpty(t, nb.Cells)
			assert.Contains(t, strings.Join(nb.Cells[0].Source, ""), "unimplemented type: core.Elements[float32] <*ast.IndexExpr>",
				"the first cell says what the kernel's error on a generic call means")
			code := 0
			for i, c := range nb.Cells {
				if c.Type != "code" {
					continue
				}
				src := strings.Join(c.Source, "")
				assert.Empty(t, c.Outputs, "cell %d: committed with outputs", i)
				assert.Equal(t, "null", string(c.ExecutionCount), "cell %d: committed executed", i)
				if code == 0 {
					assert.Regexp(t, `^import \(`, src, "the first code cell holds the imports")
					assert.NotRegexp(t, `"\.\.?/`, src, "import this repository by its module path, not a relative path")
					if strings.Contains(src, `"github.com/dlpack-go/dlpack/core"`) {
						assert.Contains(t, src, `"github.com/dlpack-go/dlpack/display"`, "tensors show through package display")
					}
				} else {
					assert.NotRegexp(t, importCell, src, "cell %d: imports belong in the first code cell", i)
				}
				assert.NotRegexp(t, pythonPath, src, "cell %d: run Python with pyfind.Interpreter, not a named interpreter", i)
				code++
			}
			assert.Greater(t, code, 1)
		})
	}
}

// The notebooks' README opens with the table of generic functions and their non-generic twins, and
// says what the kernel's error on a generic call means.
func TestREADMEOpensWithTheTwins(t *testing.T) {
	b, err := os.ReadFile("README.md")
	require.NoError(t, err)
	md := string(b)
	table := strings.Index(md, "\n| generic | non-generic twin |\n")
	require.GreaterOrEqual(t, table, 0, "README.md has no table \"| generic | non-generic twin |\"")
	assert.Less(t, table, strings.Index(md, "\n## "), "the table comes before the first section")
	assert.Less(t, strings.Index(md, "\n|"), table+1, "it is the first table")
	for _, twin := range []string{"memory.At(t, i, j)", "memory.SetAt(t, 2.5, i, j)", "t.Float64s()", "t.ReadOnlyFloat32s()", "core.FromFloat64s(xs, 2, 3)"} {
		assert.Contains(t, md, twin)
	}
	assert.Contains(t, md, "repl.go:1:11: unimplemented type: core.Elements[float32] <*ast.IndexExpr>")
}
