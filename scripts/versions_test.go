package scripts

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pinned reads the version of each component the README's version table names from where the
// build takes it: the go.mod files, scripts/fetch-ort.sh, scripts/fetch-ggml.sh, onnxx's oldest
// supported release and scripts/peers-requirements.txt. The keys are the first word of a row's
// first cell, as the version table and current.sh's table write them.
func pinned(t *testing.T, root string) map[string]string {
	t.Helper()
	read := func(rel string) string {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		require.NoError(t, err)
		return string(b)
	}
	find := func(rel, pattern string) string {
		m := regexp.MustCompile(pattern).FindStringSubmatch(read(rel))
		require.NotNil(t, m, "%s: no match for %s", rel, pattern)
		return m[1]
	}
	req := func(rel, mod string) string {
		return find(rel, `(?m)^\s*(?:require\s+)?`+regexp.QuoteMeta(mod)+` (v\S+)`)
	}
	p := map[string]string{
		"Go":             find("go.mod", `(?m)^go (\S+)$`),
		"ONNX":           find("scripts/fetch-ort.sh", `(?m)^default=(\S+)$`),
		"ONNX-oldest":    find("onnxx/init.go", `(?m)^const oldestRuntimeVersion = "(\S+)"$`),
		"onnxruntime_go": req("onnxx/ortgo/go.mod", "github.com/yalue/onnxruntime_go"),
		"GoMLX":          req("gomlxx/go.mod", "github.com/gomlx/gomlx"),
		"GoMLX-compute":  req("gomlxx/go.mod", "github.com/gomlx/compute"),
		"arrow-go":       req("go.mod", "github.com/apache/arrow-go/v18"),
		"Gonum":          req("go.mod", "gonum.org/v1/gonum"),
		"Gorgonia":       req("go.mod", "gorgonia.org/tensor"),
		"ggml's":         find("scripts/fetch-ggml.sh", `(?m)^version=(\S+)$`),
	}
	s := bufio.NewScanner(strings.NewReader(read("scripts/peers-requirements.txt")))
	for s.Scan() {
		if name, v, ok := strings.Cut(s.Text(), "=="); ok && !strings.HasPrefix(name, "#") {
			p[name] = v
		}
	}
	p["torch"] = find("scripts/peers-requirements-torch.txt", `(?m)^torch==(\S+)$`)
	return p
}

// table returns the rows (cells) of the Markdown table that follows the line holding marker in
// the file rel, header and rule left out.
func table(t *testing.T, root, rel, marker string) [][]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, rel))
	require.NoError(t, err)
	md := string(b)
	i := strings.Index(md, marker)
	require.GreaterOrEqual(t, i, 0, "%s has no %q", rel, marker)
	var rows [][]string
	started := false
	for _, line := range strings.Split(md[i:], "\n")[1:] {
		line = strings.TrimSpace(line) // a table in a list item is indented
		if !strings.HasPrefix(line, "|") {
			if started {
				break
			}
			continue
		}
		started = true
		if strings.HasPrefix(line, "|---") {
			continue
		}
		rows = append(rows, splitCells(line))
	}
	require.Greater(t, len(rows), 1, "%s: no table after %q", rel, marker)
	return rows[1:]
}

var backticked = regexp.MustCompile("`([^`]+)`")

// TestVersionTable: every version the README's table of what dlpack-go is built and tested with
// names in backticks in its "built and tested with" column is the one the build takes (go.mod
// files, fetch scripts, peers-requirements.txt), and every pinned component has its row.
func TestVersionTable(t *testing.T) {
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	want := pinned(t, root)
	seen := map[string]bool{}
	for _, row := range table(t, root, "README.md", "<!-- versions: checked by TestVersionTable -->") {
		require.Len(t, row, 4, "README version table row %v", row)
		key := strings.Fields(row[0])[0]
		got := backticked.FindAllStringSubmatch(row[1], -1)
		require.NotEmpty(t, got, "README version table, %s: no `version` in %q", row[0], row[1])
		switch key {
		case "ONNX":
			require.Len(t, got, 2, "ONNX Runtime: the default and the oldest release tested")
			assert.Equal(t, want["ONNX"], got[0][1], "ONNX Runtime")
			assert.Equal(t, want["ONNX-oldest"], got[1][1], "ONNX Runtime's oldest tested")
			seen["ONNX-oldest"] = true
		case "GoMLX":
			if strings.Contains(row[0], "compute") {
				key = "GoMLX-compute"
			}
			assert.Equal(t, want[key], got[0][1], row[0])
		case "NumPy":
			assert.Equal(t, want["numpy"], got[len(got)-1][1], "NumPy, the venv's")
			key = "numpy"
		case "PyTorch":
			assert.Equal(t, want["torch"], got[1][1], "PyTorch, the torch venv's")
			key = "torch"
		default:
			v, ok := want[key]
			if !ok {
				v, ok = want[strings.ToLower(key)]
				key = strings.ToLower(key)
			}
			if ok {
				assert.Equal(t, v, got[0][1], row[0])
			}
		}
		seen[key] = true
	}
	for _, k := range []string{"Go", "ONNX", "ONNX-oldest", "onnxruntime_go", "GoMLX", "GoMLX-compute", "arrow-go", "Gonum",
		"Gorgonia", "ggml's", "numpy", "torch", "pyarrow", "onnxruntime", "safetensors", "gguf"} {
		assert.True(t, seen[k], "README's version table has no row for %s", k)
	}
}

// TestCurrentTables: the tables of scripts/current.sh pasted into README.md and CONTRIBUTING.md
// name, in their "pinned" column, what the build pins today (a bump without a new run of
// current.sh fails here).
func TestCurrentTables(t *testing.T) {
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	want := pinned(t, root)
	for _, rel := range []string{"README.md", "CONTRIBUTING.md"} {
		rows := table(t, root, rel, "<!-- current.sh: checked by TestCurrentTables -->")
		assert.GreaterOrEqual(t, len(rows), 10, rel)
		for _, row := range rows {
			require.Len(t, row, 4, "%s current.sh row %v", rel, row)
			key := strings.Fields(row[0])[0]
			if strings.Contains(row[0], "compute") {
				key = "GoMLX-compute"
			}
			v, ok := want[key]
			if !ok {
				continue // Debian's packages: what apt installed
			}
			assert.Equal(t, v, strings.Fields(row[1])[0], "%s: %s", rel, row[0])
		}
	}
}
