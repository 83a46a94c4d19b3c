package interop

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dlpack-go/dlpack/internal/nodetest"
	"github.com/dlpack-go/dlpack/internal/refcheck"
)

// jsPackages are the npm packages of the JavaScript peers, installed once (nodetest.Install).
var jsPackages = []string{"apache-arrow@21.2.0", "parquet-wasm@0.8.0", "hyparquet@1.33.0", "hyparquet-writer@0.17.0"}

// A peer's side of the matrix: write makes the files of the cells given (the peer's "read"
// cells, which dlpack-go then reads) and read checks the files dlpack-go wrote (the "write"
// cells); each is one process launch over a manifest, and returns the verdict of every cell by
// name ("ok" or what was wrong).
type peerSide func(t *testing.T, mode, manifest string) map[string]string

// peerLimit is a cell a peer is known to get wrong by a limitation of its own: the cell's
// subtest checks that the peer still fails it the same way (its verdict contains says) and is
// skipped with why, so that the cell counts as the peer's failure, not dlpack-go's; a peer that
// gets it right fails the subtest, so that the entry is removed.
type peerLimit struct {
	peer  string
	cells *regexp.Regexp // <format>/<kind>/<dtype>/<children>/<direction>
	says  string
	why   string
}

var peerLimits = []peerLimit{
	{"pyarrow", regexp.MustCompile(`^[a-z_]+/variable_shape/bool8/[a-z]+/write$`), "Cannot convert non-fixed-width values to Tensor",
		"pyarrow 26's arrow.variable_shape_tensor (Arrow C++'s VariableShapeTensorType) refuses arrow.bool8 values"},
	{"pyarrow", regexp.MustCompile(`^parquet/[a-z_]+/[a-z0-9]+/nonnull/write$`), "without extension metadata",
		"pyarrow 26's Parquet reader drops a tensor extension type (and its metadata) whose stored storage has " +
			"non-nullable children: its tensor types always declare nullable ones, and the stored type then differs"},
}

// knownLimit ends a subtest whose peer verdict v is a known limitation of the peer's (Skip,
// saying why), and fails one whose peer now gets the cell right.
func knownLimit(t *testing.T, peer, cell, v string) {
	t.Helper()
	for _, l := range peerLimits {
		if l.peer != peer || !l.cells.MatchString(cell) {
			continue
		}
		if v == "ok" {
			t.Fatalf("%s now reads this cell right: remove the known limitation %q", peer, l.why)
		}
		if strings.Contains(v, l.says) {
			t.Skipf("the peer fails, a known limitation of %s: %s (it says: %s)", peer, l.why, v)
		}
	}
}

// runMatrix runs one peer's cells: readCells, which the peer writes and dlpack-go reads, and
// writeCells, which dlpack-go writes and the peer reads; one subtest per cell and direction.
func runMatrix(t *testing.T, peer, dir string, side peerSide, readCells, writeCells []cell) {
	t.Helper()
	var peerWrote, peerRead map[string]string
	if len(readCells) > 0 {
		m := filepath.Join(dir, "peer-writes.json")
		writeManifest(t, m, readCells)
		peerWrote = side(t, "write", m)
	}
	ours := map[string]error{}
	if len(writeCells) > 0 {
		for _, c := range writeCells {
			if _, done := ours[c.Path]; !done {
				ours[c.Path] = goWrite(c)
			}
		}
		m := filepath.Join(dir, "peer-reads.json")
		writeManifest(t, m, writeCells)
		peerRead = side(t, "read", m)
	}
	for _, c := range readCells {
		t.Run(c.Name+"/read", func(t *testing.T) {
			if v := peerWrote[c.Name]; v != "ok" {
				t.Fatalf("the peer did not write the file: %s", orMissing(v))
			}
			goRead(t, c)
		})
	}
	for _, c := range writeCells {
		t.Run(c.Name+"/write", func(t *testing.T) {
			if err := ours[c.Path]; err != nil {
				t.Fatalf("dlpack-go did not write the file: %v", err)
			}
			v := peerRead[c.Name]
			knownLimit(t, peer, c.Name+"/write", v)
			if v != "ok" {
				t.Fatalf("the peer read it wrong: %s", orMissing(v))
			}
		})
	}
}

func orMissing(v string) string {
	if v == "" {
		return "no verdict (the peer's script did not report this cell)"
	}
	return v
}

// runJSON runs a command and decodes the JSON object it prints last.
func runJSON(t *testing.T, cmd *exec.Cmd) map[string]string {
	t.Helper()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, stderr.String())
	}
	return decodeVerdicts(t, out)
}

func decodeVerdicts(t *testing.T, out []byte) map[string]string {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var v map[string]string
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &v); err != nil {
		t.Fatalf("the peer's verdicts: %v\n%s", err, out)
	}
	return v
}

func testdata(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

var (
	ipcAndParquet = []string{"ipc_stream", "ipc_file", "parquet"}
	tensorKinds   = []string{"fixed_shape", "variable_shape"}
	bothChildren  = []bool{true, false}
)

// dirs makes the peer's and our directories under a temporary one.
func dirs(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{"peer", "ours"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// jsNode is Node with the JavaScript peers installed.
func jsNode(t testing.TB) *nodetest.Node { return nodetest.Install(t, jsPackages...) }

// jsSide runs one of testdata's scripts under Node with the JavaScript peers.
func jsSide(t *testing.T, script string) peerSide {
	node := jsNode(t)
	src, err := os.ReadFile(testdata(t, script))
	if err != nil {
		t.Fatal(err)
	}
	return func(t *testing.T, mode, manifest string) map[string]string {
		return decodeVerdicts(t, node.Run(t, string(src), mode, manifest))
	}
}

func TestInterop(t *testing.T) {
	t.Run("pyarrow", func(t *testing.T) {
		py := refcheck.Venv(t)
		script := testdata(t, "pyarrow_matrix.py")
		dir := dirs(t)
		side := func(t *testing.T, mode, manifest string) map[string]string {
			return runJSON(t, exec.Command(py, script, mode, manifest))
		}
		runMatrix(t, "pyarrow", dir, side,
			cells(filepath.Join(dir, "peer"), ipcAndParquet, tensorKinds, bothChildren),
			cells(filepath.Join(dir, "ours"), ipcAndParquet, tensorKinds, bothChildren))
	})
	// Arrow's JavaScript library for IPC, arrow-rs (parquet-wasm) for Parquet
	t.Run("apache-arrow", func(t *testing.T) {
		dir := dirs(t)
		ipcOnly := []string{"ipc_stream", "ipc_file"}
		runMatrix(t, "apache-arrow", dir, jsSide(t, "js_matrix.js"),
			cells(filepath.Join(dir, "peer"), ipcOnly, tensorKinds, bothChildren),
			cells(filepath.Join(dir, "ours"), ipcOnly, tensorKinds, bothChildren))
	})
	t.Run("parquet-wasm", func(t *testing.T) {
		dir := dirs(t)
		pq := []string{"parquet"}
		runMatrix(t, "parquet-wasm", dir, jsSide(t, "js_matrix.js"),
			cells(filepath.Join(dir, "peer"), pq, tensorKinds, bothChildren),
			cells(filepath.Join(dir, "ours"), pq, tensorKinds, bothChildren))
	})
	// hyparquet-writer's plain feature columns read with ReadMatrix; hyparquet reads what
	// parquetx writes (Write's plain columns, which it declares non-nullable, and WriteRecord's
	// tensor columns)
	t.Run("hyparquet", func(t *testing.T) {
		dir := dirs(t)
		pq := []string{"parquet"}
		ours := append(cells(filepath.Join(dir, "ours"), pq, []string{"matrix"}, []bool{false}),
			cells(filepath.Join(dir, "ours"), pq, tensorKinds, bothChildren)...)
		runMatrix(t, "hyparquet", dir, jsSide(t, "hyparquet.js"),
			cells(filepath.Join(dir, "peer"), pq, []string{"matrix"}, bothChildren), ours)
	})
}
