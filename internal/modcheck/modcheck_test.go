package modcheck

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/internal/refcheck"
)

// module is one go.mod of the checkout: its directory and its module path.
type module struct{ dir, path string }

// modules is every module of the checkout, the longest path first, so that the first one whose
// path prefixes an import path is the module holding that package.
type modules []module

// owner is the module that holds the package at importPath, or nil if none of the checkout's does.
func (ms modules) owner(importPath string) *module {
	for i, m := range ms {
		if importPath == m.path || strings.HasPrefix(importPath, m.path+"/") {
			return &ms[i]
		}
	}
	return nil
}

// crosses reports whether a file of module in may not import importPath: a package with an
// internal element in its path that another module of the checkout holds.
func (ms modules) crosses(in *module, importPath string) bool {
	internal := slices.Contains(strings.Split(importPath, "/"), "internal")
	owner := ms.owner(importPath)
	return internal && owner != nil && owner.path != in.path
}

// scan walks the checkout below root, as the go command sees it (no testdata, nor directories
// whose names start with . or _), and returns its modules and its .go files.
func scan(t *testing.T, root string) (modules, []string) {
	t.Helper()
	var ms modules
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		switch {
		case d.IsDir() && path != root && (name == "testdata" || name == "node_modules" ||
			strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")):
			return filepath.SkipDir
		case name == "go.mod":
			ms = append(ms, module{filepath.Dir(path), modulePath(t, path)})
		case strings.HasSuffix(name, ".go") && !d.IsDir():
			files = append(files, path)
		}
		return nil
	})
	require.NoError(t, err)
	slices.SortFunc(ms, func(a, b module) int { return len(b.path) - len(a.path) })
	return ms, files
}

// modulePath reads the module directive of a go.mod.
func modulePath(t *testing.T, goMod string) string {
	t.Helper()
	b, err := os.ReadFile(goMod)
	require.NoError(t, err)
	for line := range strings.Lines(string(b)) {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`)
		}
	}
	t.Fatalf("%s has no module directive", goMod)
	return ""
}

// TestInternalImportsStayInTheirModule: no .go file of the checkout, tests included, imports an
// internal package of another of the checkout's modules (see the package doc for why). No module
// is exempt: the test-only nested modules (ggufx/internal/parsercheck, internal/gopeers) stand
// under the root's internal/ trees but import only the root's public packages too.
func TestInternalImportsStayInTheirModule(t *testing.T) {
	root, err := refcheck.RepoRoot()
	require.NoError(t, err)
	ms, files := scan(t, root)
	var paths []string
	for _, m := range ms {
		paths = append(paths, m.path)
	}
	const rootPath = "github.com/dlpack-go/dlpack"
	for _, want := range []string{rootPath, rootPath + "/onnxx/ortgo", rootPath + "/gomlxx",
		rootPath + "/arrowx/duckdbx", rootPath + "/internal/gopeers", rootPath + "/ggufx/internal/parsercheck"} {
		require.Contains(t, paths, want, "modules found below %s", root)
	}

	checked := 0
	for _, file := range files {
		rel, err := filepath.Rel(root, file)
		require.NoError(t, err)
		// The file's module is the one whose directory is the longest prefix of the file's.
		var in *module
		for i, m := range ms {
			if strings.HasPrefix(file, m.dir+string(filepath.Separator)) && (in == nil || len(m.dir) > len(in.dir)) {
				in = &ms[i]
			}
		}
		if in == nil {
			continue // a .go file outside every module (none today) is no module's import
		}
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ImportsOnly)
		require.NoError(t, err, rel)
		for _, imp := range f.Imports {
			p, err := strconv.Unquote(imp.Path.Value)
			require.NoError(t, err, rel)
			if ms.crosses(in, p) {
				t.Errorf("%s (module %s) imports %s, an internal package of module %s",
					rel, in.path, p, ms.owner(p).path)
			}
		}
		checked++
	}
	t.Logf("%d .go files of %d modules checked", checked, len(ms))
}

// TestCrosses: the rule lets a module import its own internal packages and the other modules'
// public ones, and nothing else internal of the checkout.
func TestCrosses(t *testing.T) {
	const d = "github.com/dlpack-go/dlpack"
	ms := modules{{"", d + "/ggufx/internal/parsercheck"}, {"", d + "/internal/gopeers"},
		{"", d + "/onnxx/ortgo"}, {"", d + "/gomlxx"}, {"", d}}
	ortgo, gopeers, rootMod := ms.owner(d+"/onnxx/ortgo"), ms.owner(d+"/internal/gopeers"), ms.owner(d)
	for _, tc := range []struct {
		in      *module
		imports string
		crosses bool
	}{
		{ortgo, d + "/onnxx/internal/modeltest", true},
		{ortgo, d + "/internal/errs", true},
		{ortgo, d + "/onnxx/ortgo/internal/errs", false},
		{ortgo, d + "/onnxx/ortgo/internal/models", false},
		{ortgo, d + "/core", false},
		{ortgo, d + "/onnxx", false},
		{ortgo, "github.com/yalue/onnxruntime_go/internal/x", false},
		{gopeers, d + "/internal/refcheck", true},
		{gopeers, d + "/internal/gopeers", false},
		{gopeers, d + "/ggufx/internal/parsercheck", true},
		{rootMod, d + "/internal/errs", false},
		{rootMod, d + "/gomlxx/internal/errs", true},
		{rootMod, d + "/internal/gopeers", true},
	} {
		assert.Equal(t, tc.crosses, ms.crosses(tc.in, tc.imports), "%s importing %s", tc.in.path, tc.imports)
	}
}
