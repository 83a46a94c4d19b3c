package scripts

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The table of today's figures at the top of BENCHMARKS.md names, in its command column, the
// `go test` command that reproduces each row. TestBenchmarksTable holds that column to the code,
// so that a benchmark renamed, moved or deleted (or a package moved) breaks this test rather
// than leaving the table pointing at nothing.

// benchRow is one row of a figures table: its line in the file, the row's first cell and its
// command (the code span of the command column, `\|` unescaped).
type benchRow struct {
	line    int
	path    string
	command string
}

// splitCells splits a Markdown table line into its cells, on the pipes that are not escaped
// (`\|` stays in the cell, as `|`).
func splitCells(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(line, "|")
	if strings.HasSuffix(line, "|") && !strings.HasSuffix(line, `\|`) {
		line = line[:len(line)-1]
	}
	var cells []string
	var cell strings.Builder
	for i := 0; i < len(line); i++ {
		switch {
		case line[i] == '\\' && i+1 < len(line) && line[i+1] == '|':
			cell.WriteByte('|')
			i++
		case line[i] == '|':
			cells = append(cells, strings.TrimSpace(cell.String()))
			cell.Reset()
		default:
			cell.WriteByte(line[i])
		}
	}
	return append(cells, strings.TrimSpace(cell.String()))
}

// figureRows returns the rows of every table in md whose header has a "command" column.
func figureRows(md string) ([]benchRow, error) {
	var rows []benchRow
	lines := strings.Split(md, "\n")
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(strings.TrimSpace(lines[i]), "|") {
			continue
		}
		header := splitCells(lines[i])
		col := -1
		for j, h := range header {
			if strings.EqualFold(h, "command") {
				col = j
			}
		}
		// Skip the whole table: its delimiter row and body.
		j := i + 1
		for ; j < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[j]), "|"); j++ {
			if col < 0 || j == i+1 {
				continue
			}
			cells := splitCells(lines[j])
			if len(cells) != len(header) {
				return nil, fmt.Errorf("line %d has %d cells, its table's header %d", j+1, len(cells), len(header))
			}
			cmd := cells[col]
			if len(cmd) < 2 || cmd[0] != '`' || cmd[len(cmd)-1] != '`' || strings.Count(cmd, "`") != 2 {
				return nil, fmt.Errorf("line %d: the command cell %q is not one code span", j+1, cmd)
			}
			rows = append(rows, benchRow{line: j + 1, path: cells[0], command: cmd[1 : len(cmd)-1]})
		}
		i = j - 1
	}
	return rows, nil
}

// shellWords splits a command line into words, honouring single and double quotes.
func shellWords(s string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				w.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, inWord = c, true
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unclosed %c quote in %q", quote, s)
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}

// goTestBoolFlags are the go test flags, in a table's commands, that take no value word.
var goTestBoolFlags = map[string]bool{
	"benchmem": true, "race": true, "short": true, "v": true, "failfast": true, "json": true, "msan": true,
	"asan": true, "cover": true, "trimpath": true, "x": true, "n": true, "a": true,
}

// goTestCommand is what a table's command asks of `go test`: its -bench pattern and packages.
type goTestCommand struct {
	bench    string
	packages []string
	dir      string // go -C's directory, where the packages are; "" for the repository's root
}

// parseGoTest reads a `go test` command line (environment assignments may come first).
func parseGoTest(cmd string) (goTestCommand, error) {
	var out goTestCommand
	words, err := shellWords(cmd)
	if err != nil {
		return out, err
	}
	for len(words) > 0 && regexp.MustCompile(`^[A-Z_][A-Z0-9_]*=`).MatchString(words[0]) {
		words = words[1:]
	}
	// go -C dir test ...: a nested module's benchmarks, run in its directory
	if len(words) > 3 && words[0] == "go" && words[1] == "-C" {
		out.dir, words = words[2], append([]string{"go"}, words[3:]...)
	}
	if len(words) < 2 || words[0] != "go" || words[1] != "test" {
		return out, fmt.Errorf("%q is not a `go test` command", cmd)
	}
	for i := 2; i < len(words); i++ {
		word := words[i]
		if !strings.HasPrefix(word, "-") {
			out.packages = append(out.packages, word)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(word, "-"), "=")
		name = strings.TrimPrefix(name, "test.")
		if !hasValue && !goTestBoolFlags[name] {
			if i+1 == len(words) {
				return out, fmt.Errorf("flag %s of %q has no value", word, cmd)
			}
			i++
			value = words[i]
		}
		if name == "bench" {
			out.bench = value
		}
	}
	if out.bench == "" {
		return out, fmt.Errorf("%q runs no benchmark (no -bench)", cmd)
	}
	if len(out.packages) == 0 {
		return out, fmt.Errorf("%q names no package", cmd)
	}
	return out, nil
}

// benchmarkFuncs returns the names of the Benchmark functions declared in dir's _test.go files
// (whatever their build constraints), or an error if dir is no Go package directory.
func benchmarkFuncs(dir string) (map[string]bool, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s holds no Go package", dir)
	}
	funcs := map[string]bool{}
	fset := token.NewFileSet()
	for _, f := range files {
		if !strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, decl := range file.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Benchmark") {
				funcs[fn.Name.Name] = true
			}
		}
	}
	return funcs, nil
}

// topLevelPattern returns the part of a -bench pattern that go test matches against top-level
// benchmark names: what comes before the first slash outside brackets and parentheses.
func topLevelPattern(pattern string) string {
	depth := 0
	for i := 0; i < len(pattern); i++ {
		switch pattern[i] {
		case '\\':
			i++
		case '(', '[':
			depth++
		case ')', ']':
			depth--
		case '/':
			if depth == 0 {
				return pattern[:i]
			}
		}
	}
	return pattern
}

var benchmarkName = regexp.MustCompile(`Benchmark[A-Za-z0-9_]+`)

// checkFigures checks every row of the figures tables in md against the tree at root, and
// returns one message per fault.
func checkFigures(root, md string) ([]string, int, error) {
	rows, err := figureRows(md)
	if err != nil {
		return nil, 0, err
	}
	var faults []string
	for _, row := range rows {
		where := fmt.Sprintf("BENCHMARKS.md:%d (%s)", row.line, row.path)
		cmd, err := parseGoTest(row.command)
		if err != nil {
			faults = append(faults, fmt.Sprintf("%s: %v", where, err))
			continue
		}
		declared, packagesOK := map[string]bool{}, true
		for _, pkg := range cmd.packages {
			if !strings.HasPrefix(pkg, "./") || strings.Contains(pkg, "...") {
				faults = append(faults, fmt.Sprintf("%s: package %q is not one directory of the repository (./dir/)", where, pkg))
				packagesOK = false
				continue
			}
			funcs, err := benchmarkFuncs(filepath.Join(root, filepath.FromSlash(cmd.dir), filepath.FromSlash(pkg)))
			if err != nil {
				faults = append(faults, fmt.Sprintf("%s: package %s: %v", where, pkg, err))
				packagesOK = false
				continue
			}
			for name := range funcs {
				declared[name] = true
			}
		}
		named := benchmarkName.FindAllString(cmd.bench, -1)
		if len(named) == 0 {
			faults = append(faults, fmt.Sprintf("%s: -bench %q names no BenchmarkX function", where, cmd.bench))
		}
		if !packagesOK {
			continue
		}
		for _, name := range named {
			if !declared[name] {
				faults = append(faults, fmt.Sprintf("%s: %s is not a function of the _test.go files of %s", where, name, strings.Join(cmd.packages, " ")))
			}
		}
		re, err := regexp.Compile(topLevelPattern(cmd.bench))
		if err != nil {
			faults = append(faults, fmt.Sprintf("%s: -bench %q: %v", where, cmd.bench, err))
			continue
		}
		matched := false
		for name := range declared {
			matched = matched || re.MatchString(name)
		}
		if !matched && len(named) == 0 {
			faults = append(faults, fmt.Sprintf("%s: -bench %q matches no benchmark of %s", where, cmd.bench, strings.Join(cmd.packages, " ")))
		}
	}
	sort.Strings(faults)
	return faults, len(rows), nil
}

func TestBenchmarksTable(t *testing.T) {
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	md, err := os.ReadFile(filepath.Join(root, "BENCHMARKS.md"))
	require.NoError(t, err)
	faults, rows, err := checkFigures(root, string(md))
	require.NoError(t, err)
	assert.GreaterOrEqual(t, rows, 15, "BENCHMARKS.md should open with a table of today's figures, one row per path")
	assert.Empty(t, faults, "the figures table of BENCHMARKS.md has drifted from the code:\n%s", strings.Join(faults, "\n"))
}

// TestBenchmarksTableCatches feeds the checker tables with one fault each, over this repository.
func TestBenchmarksTableCatches(t *testing.T) {
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	const header = "| path | peer | figure | machine | command |\n|---|---|---|---|---|\n"
	for _, c := range []struct {
		name, row, fault string
	}{
		{"good", "| core | x | y | z | `go test -run '^$' -bench BenchmarkFromSlice -benchmem ./core/` |", ""},
		{"good with alternatives", "| core | x | y | z | `go test -run '^$' -bench 'BenchmarkFromSlice\\|BenchmarkViews' ./core/` |", ""},
		{"good with a sub-benchmark", "| gomlxx | x | y | z | `GOMAXPROCS=1 go test -bench 'BenchmarkGonumRoundTrip/size=1GiB' -benchtime 3x ./gomlxx/` |", ""},
		{"missing benchmark", "| core | x | y | z | `go test -run '^$' -bench BenchmarkNoSuchThing ./core/` |", "BenchmarkNoSuchThing is not a function"},
		{"one of two missing", "| core | x | y | z | `go test -bench 'BenchmarkFromSlice\\|BenchmarkGone' ./core/` |", "BenchmarkGone is not a function"},
		{"benchmark of another package", "| core | x | y | z | `go test -bench BenchmarkNumPyCopies ./core/` |", "BenchmarkNumPyCopies is not a function"},
		{"missing package", "| x | x | y | z | `go test -bench BenchmarkFromSlice ./nosuchpackage/` |", "package ./nosuchpackage/"},
		{"a nested module", "| x | x | y | z | `GOWORK=off go -C internal/gopeers test -run '^$' -bench BenchmarkRead256MiB ./` |", ""},
		{"a nested module's missing benchmark", "| x | x | y | z | `go -C internal/gopeers test -bench BenchmarkFromSlice ./` |", "BenchmarkFromSlice is not a function"},
		{"not go test", "| x | x | y | z | `bash devicecheck/devicecheck.sh` |", "is not a `go test` command"},
		{"no -bench", "| x | x | y | z | `go test ./core/` |", "runs no benchmark"},
		{"no package", "| x | x | y | z | `go test -bench BenchmarkFromSlice` |", "names no package"},
		{"all packages", "| x | x | y | z | `go test -bench BenchmarkFromSlice ./...` |", "is not one directory"},
		{"pattern without a name", "| x | x | y | z | `go test -bench FromSlice ./core/` |", "names no BenchmarkX function"},
	} {
		t.Run(c.name, func(t *testing.T) {
			faults, rows, err := checkFigures(root, header+c.row+"\n")
			require.NoError(t, err)
			assert.Equal(t, 1, rows)
			if c.fault == "" {
				assert.Empty(t, faults)
				return
			}
			require.NotEmpty(t, faults)
			assert.Contains(t, strings.Join(faults, "\n"), c.fault)
		})
	}
	t.Run("command not a code span", func(t *testing.T) {
		_, _, err := checkFigures(root, header+"| x | x | y | z | go test -bench BenchmarkFromSlice ./core/ |\n")
		assert.ErrorContains(t, err, "not one code span")
	})
	t.Run("row of the wrong width", func(t *testing.T) {
		_, _, err := checkFigures(root, header+"| x | `go test -bench BenchmarkFromSlice ./core/` |\n")
		assert.ErrorContains(t, err, "cells")
	})
	t.Run("tables without a command column are not figures", func(t *testing.T) {
		_, rows, err := checkFigures(root, "| a | b |\n|---|---|\n| 1 | 2 |\n")
		require.NoError(t, err)
		assert.Zero(t, rows)
	})
}
