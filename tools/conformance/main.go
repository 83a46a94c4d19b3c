// Command conformance turns the conformance suite's `go test -json` report into the table of
// docs/conformance.md, and checks that table against a fresh report.
//
// Every row of the suite compares dlpack-go with an implementation that is not ours (rows below);
// each row is one or more Go tests whose leaf subtests are its cases. A case passes, fails (only
// dlpack-go's side can fail a case: each test compares our result with the reference's, and a
// reference that cannot be installed fails the test in CI rather than skipping it), or is skipped
// with the reason the reference gives (a keyword a framework lacks, a model its runtime refuses).
//
//	go test -json -run '...' ./pkg/... | go run ./tools/conformance -write docs/conformance.md
//	go test -json -run '...' ./pkg/... | go run ./tools/conformance -check docs/conformance.md
//
// scripts/conformance.sh runs the suite (its packages and -run pattern are printed by -tests) and
// regenerates the file at each release; scripts/test.sh runs it with -check, so a table that no
// longer agrees with the suite fails the README's test command.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
)

// A row of the suite: the tests that make it (a package and a top-level test name pattern), and
// how deep below the test its cases are grouped in the detailed table.
type row struct {
	ID, Name, Reference string
	Package             string         // import path
	Test                *regexp.Regexp // top-level test names
	Depth               int            // path elements below the test that name a group
}

const module = "github.com/dlpack-go/dlpack/"

var rows = []row{
	{"1", "ONNX Runtime: ONNX's backend test data", "ONNX Runtime 1.31.1's own Python binding (onnxruntime, venv) on the same models; expected outputs of libonnx-testdata 1.12 (Debian), ONNX's tolerances",
		module + "onnxx/internal/backendsuite", regexp.MustCompile(`^TestBackendSuite$`), 1},
	{"2", "DLPack in Python, both ways", "NumPy 2.4.6, array-api-strict 2.6.1, JAX 0.10.2 (CPU), apache-tvm-ffi 0.1.15 (C exchange API), PyTorch 2.15 (C exchange API) in the project's venvs; NumPy 1.24 and PyTorch 1.13 (Debian)",
		module + "pyexchange", regexp.MustCompile(`^TestDLPackConformance$`), 2},
	{"3", "GGUF", "ggml's own libggml-base.so (npm @node-llama-cpp/linux-x64 3.22.1): dequantize_row_* of every quantized type, ggml_quantize_chunk (Q8_0, Q4_0), the type table; llama.cpp's gguf 0.19.0 (venv): GGUFWriter's files read here, files written here read by GGUFReader; @huggingface/gguf 0.4.6 (npm)",
		module + "ggufx", regexp.MustCompile(`^(TestDequantizeMatchesGgml|TestDequantizeLargeMatchesGgml|TestTypeTableIsGgmls|TestQuantizeLikeGGML|TestReadGGUFPyWriter|TestGGUFPyReadsWrite|TestNodeReadsWrite|TestNodeReadsUnknownTypes)$`), 1},
	{"4", "Arrow, Parquet and Flight", "pyarrow 26.0.1 (venv: IPC stream and file, pyarrow.parquet, pyarrow.flight client and server), apache-arrow 21.2.0 (JS: IPC), parquet-wasm 0.8.0 (arrow-rs: Parquet), hyparquet 1.33 and hyparquet-writer 0.17 (npm: an independent Parquet)",
		module + "arrowx/internal/interop", regexp.MustCompile(`^TestInterop(Flight)?$`), 2},
	{"4d", "DuckDB over the same Parquet and Arrow", "DuckDB through github.com/duckdb/duckdb-go/v2 v2.20000.0 (its static library; module arrowx/duckdbx)",
		module + "arrowx/duckdbx", regexp.MustCompile(`^(TestDuckDBReadsParquetx|TestParquetxReadsDuckDB|TestQueryZeroCopy)$`), 0},
	{"5", "NumPy files (.npy, .npz)", "NumPy 1.24 (Debian) and 2.4.6 (venv): np.save/np.savez of every dtype, byte order, order and format version read here; every file written here loaded by np.load",
		module + "numpyx", regexp.MustCompile(`^Test(Read|Write)NumPy$`), 1},
	{"6", "safetensors", "safetensors 0.8.0 (venv): its writer's every dtype read here; files written here parsed and loaded by it",
		module + "safetensorsx", regexp.MustCompile(`^TestSafetensorsReference$`), 1},
}

type result struct {
	passed, failed, skipped int
	why                     map[string]int // skips by the class of their reason
}

func (r *result) add(o result) {
	r.passed += o.passed
	r.failed += o.failed
	r.skipped += o.skipped
	for k, n := range o.why {
		if r.why == nil {
			r.why = map[string]int{}
		}
		r.why[k] += n
	}
}

// whyText lists the skips' reasons, the most frequent first: "both fail (41); not run (36)".
func (r result) whyText() string {
	keys := make([]string, 0, len(r.why))
	for k := range r.why {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if r.why[keys[i]] != r.why[keys[j]] {
			return r.why[keys[i]] > r.why[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s (%d)", k, r.why[k])
	}
	return strings.Join(parts, "; ")
}

func (r result) cases() int { return r.passed + r.failed + r.skipped }

type event struct {
	Action, Package, Test, Output string
}

// report is a `go test -json` stream read: each test's final action, and the class of each
// skipped test's reason.
type report struct {
	final map[string]map[string]string // package → test → pass, fail or skip
	why   map[string]map[string]string // package → test → the first message it logged
}

// skipLine is the line t.Skip writes: "    file_test.go:123: reason".
var skipLine = regexp.MustCompile(`^\s+\S+\.go:\d+: (.+)$`)

// reasonClass is the class of a skip's reason: its words up to the first colon ("both fail",
// "not run"), or all of it, at most 60 characters.
func reasonClass(msg string) string {
	if i := strings.Index(msg, ":"); i > 0 {
		msg = msg[:i]
	}
	if len(msg) > 60 {
		msg = msg[:60] + "…"
	}
	return strings.ReplaceAll(msg, "|", "/")
}

// read collects the final action of every test in a `go test -json` stream, per package.
func read(in io.Reader) (report, error) {
	r := report{final: map[string]map[string]string{}, why: map[string]map[string]string{}}
	final := r.final
	sc := bufio.NewScanner(in)
	sc.Buffer(nil, 1<<26)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 || line[0] != '{' {
			continue // go test's own lines (build output) between JSON events
		}
		var e event
		if err := json.Unmarshal(line, &e); err != nil {
			return r, fmt.Errorf("conformance: a line that is not a test event: %v: %.200s", err, line)
		}
		if e.Test == "" {
			continue
		}
		if e.Action == "output" {
			if m := skipLine.FindStringSubmatch(strings.TrimRight(e.Output, "\n")); m != nil {
				if r.why[e.Package] == nil {
					r.why[e.Package] = map[string]string{}
				}
				if _, ok := r.why[e.Package][e.Test]; !ok {
					r.why[e.Package][e.Test] = m[1]
				}
			}
			continue
		}
		switch e.Action {
		case "pass", "fail", "skip":
			if final[e.Package] == nil {
				final[e.Package] = map[string]string{}
			}
			final[e.Package][e.Test] = e.Action
		}
	}
	return r, sc.Err()
}

// tally counts each row's leaf subtests, in all and per group.
func tally(rep report) (map[string]result, map[string]map[string]result, error) {
	totals := map[string]result{}
	groups := map[string]map[string]result{}
	for _, r := range rows {
		tests := rep.final[r.Package]
		groups[r.ID] = map[string]result{}
		var tops int
		for name, action := range tests {
			top, rest, _ := strings.Cut(name, "/")
			if !r.Test.MatchString(top) {
				continue
			}
			if rest == "" {
				tops++
			}
			if !leaf(tests, name) {
				continue
			}
			var o result
			switch action {
			case "pass":
				o.passed = 1
			case "fail":
				o.failed = 1
			default:
				o.skipped = 1
				o.why = map[string]int{reasonClass(rep.why[r.Package][name]): 1}
			}
			t := totals[r.ID]
			t.add(o)
			totals[r.ID] = t
			g := groupOf(top, rest, r.Depth)
			gr := groups[r.ID][g]
			gr.add(o)
			groups[r.ID][g] = gr
		}
		if tops == 0 {
			return nil, nil, fmt.Errorf("conformance: row %s (%s): no test of %s matches %s in the report", r.ID, r.Name, r.Package, r.Test)
		}
	}
	return totals, groups, nil
}

func leaf(tests map[string]string, name string) bool {
	for other := range tests {
		if strings.HasPrefix(other, name+"/") {
			return false
		}
	}
	return true
}

// groupOf names a case's group: its test and the first depth elements below it.
func groupOf(top, rest string, depth int) string {
	if rest == "" || depth == 0 {
		return top
	}
	parts := strings.Split(rest, "/")
	if len(parts) > depth {
		parts = parts[:depth]
	}
	return top + "/" + strings.Join(parts, "/")
}

// render writes the markdown tables (everything of docs/conformance.md that -check compares).
func render(totals map[string]result, groups map[string]map[string]result) string {
	var b strings.Builder
	b.WriteString("| row | compared with | cases | passed | only dlpack-go fails | skipped |\n|---|---|---:|---:|---:|---:|\n")
	for _, r := range rows {
		t := totals[r.ID]
		fmt.Fprintf(&b, "| %s. %s | %s | %d | %d | %d | %d |\n", r.ID, r.Name, r.Reference, t.cases(), t.passed, t.failed, t.skipped)
	}
	for _, r := range rows {
		fmt.Fprintf(&b, "\n### %s. %s\n\n| group | cases | passed | only dlpack-go fails | skipped | why skipped |\n|---|---:|---:|---:|---:|---|\n", r.ID, r.Name)
		names := make([]string, 0, len(groups[r.ID]))
		for g := range groups[r.ID] {
			names = append(names, g)
		}
		sort.Strings(names)
		for _, g := range names {
			t := groups[r.ID][g]
			fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %s |\n", g, t.cases(), t.passed, t.failed, t.skipped, t.whyText())
		}
	}
	return b.String()
}

const (
	begin = "<!-- conformance tables: generated by tools/conformance, checked by scripts/test.sh -->\n"
	end   = "<!-- end of the generated tables -->\n"
)

func main() {
	write := flag.String("write", "", "write the tables into this markdown file (between its markers)")
	check := flag.String("check", "", "fail unless this markdown file's tables equal the report's")
	tests := flag.Bool("tests", false, "print the packages and -run pattern of the suite, and exit")
	flag.Parse()
	if *tests {
		pkgs := map[string]bool{}
		var pats []string
		for _, r := range rows {
			pkgs["./"+strings.TrimPrefix(r.Package, module)] = true
			pats = append(pats, strings.TrimSuffix(strings.TrimPrefix(r.Test.String(), "^"), "$"))
		}
		var ps []string
		for p := range pkgs {
			ps = append(ps, p)
		}
		sort.Strings(ps)
		// the tag turns on the Arrow interface of DuckDB's driver (arrowx/duckdbx)
		fmt.Printf("-run ^(%s)$ -tags duckdb_arrow %s\n", strings.Join(pats, "|"), strings.Join(ps, " "))
		return
	}
	rep, err := read(os.Stdin)
	if err == nil {
		var totals map[string]result
		var groups map[string]map[string]result
		if totals, groups, err = tally(rep); err == nil {
			err = emit(render(totals, groups), *write, *check)
			var all result
			for _, t := range totals {
				all.add(t)
			}
			// the plain closing line: the suite's cases, whatever the tables say
			fmt.Printf("conformance: %d passed, %d failed, %d skipped\n", all.passed, all.failed, all.skipped)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func emit(tables, write, check string) error {
	switch {
	case write != "":
		doc, err := os.ReadFile(write)
		if err != nil {
			return err
		}
		head, tail, err := split(string(doc), write)
		if err != nil {
			return err
		}
		return os.WriteFile(write, []byte(head+begin+tables+end+tail), 0o644)
	case check != "":
		doc, err := os.ReadFile(check)
		if err != nil {
			return err
		}
		i := strings.Index(string(doc), begin)
		j := strings.Index(string(doc), end)
		if i < 0 || j < i {
			return fmt.Errorf("conformance: %s has no generated tables (markers missing)", check)
		}
		if have := string(doc)[i+len(begin) : j]; have != tables {
			return fmt.Errorf("conformance: %s disagrees with the suite's report: regenerate it with scripts/conformance.sh\n--- in the file\n%s--- from the report\n%s", check, have, tables)
		}
		fmt.Printf("conformance: %s agrees with the suite's report\n", check)
		return nil
	default:
		fmt.Print(tables)
		return nil
	}
}

// split cuts doc around its generated tables (or at its end, where it has none yet).
func split(doc, name string) (head, tail string, err error) {
	i := strings.Index(doc, begin)
	if i < 0 {
		return doc, "", nil
	}
	j := strings.Index(doc, end)
	if j < i {
		return "", "", fmt.Errorf("conformance: %s has a begin marker without an end", name)
	}
	return doc[:i], doc[j+len(end):], nil
}
