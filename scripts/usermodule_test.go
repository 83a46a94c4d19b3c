package scripts

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestUserModuleKeepsItsGoMLX builds, in a temporary directory, the module of a user who pins
// GoMLX v0.26.0 and onnxruntime_go v1.27.0 and requires dlpack-go (through a replace to this
// checkout) for core, gonumx, numpyx and onnxx. After `go mod tidy` the user's module must still
// select both: requiring dlpack-go must never move a v0 dependency the user already picks, nor
// the onnxruntime_go release that fixes which ONNX Runtime library the user ships, which is why
// gomlxx and onnxx/ortgo are nested modules of their own. It needs the Go module proxy (or a module cache that
// holds what tidy resolves).
func TestUserModuleKeepsItsGoMLX(t *testing.T) {
	root := checkoutRoot(t)
	goCmd := userModule(t, `module example.com/user

go 1.26.0

require (
	github.com/dlpack-go/dlpack v0.0.0
	github.com/gomlx/gomlx v0.26.0
	github.com/yalue/onnxruntime_go v1.27.0
)

replace github.com/dlpack-go/dlpack => `+root+"\n", `package main

import (
	"fmt"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/gonumx"
	"github.com/dlpack-go/dlpack/numpyx"
	"github.com/dlpack-go/dlpack/onnxx"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	ort "github.com/yalue/onnxruntime_go"
)

func main() {
	t, err := core.New(core.Float64, 2, 3)
	if err != nil {
		panic(err)
	}
	defer t.Release()
	_ = gonumx.ToDense
	_ = numpyx.Write
	_ = onnxx.NewSession
	fmt.Println(t, tensors.FromValue([]float64{1, 2}), ort.IsInitialized())
}
`)
	goCmd("mod", "tidy")
	require.Equal(t, "github.com/gomlx/gomlx v0.26.0", goCmd("list", "-m", "github.com/gomlx/gomlx"),
		"requiring dlpack-go moved the user's GoMLX")
	require.Equal(t, "github.com/yalue/onnxruntime_go v1.27.0", goCmd("list", "-m", "github.com/yalue/onnxruntime_go"),
		"requiring dlpack-go moved the user's onnxruntime_go")
	goCmd("build", "./...")
	// and dlpack-go itself asks for neither: a user of any other release keeps theirs too
	for _, edge := range strings.Split(goCmd("mod", "graph"), "\n") {
		for _, dep := range []string{" github.com/gomlx/", " github.com/yalue/onnxruntime_go"} {
			require.False(t, strings.HasPrefix(edge, "github.com/dlpack-go/dlpack@") && strings.Contains(edge, dep),
				"dlpack-go's root module requires %s", edge)
		}
	}
}

// TestUserModuleRequiresGoMLXX builds the module of a user of the nested module gomlxx, the way
// the README says to require it (both dlpack-go modules, each replaced by a clone until they are
// on a proxy): it resolves GoMLX v0.28.2, tidies and builds.
func TestUserModuleRequiresGoMLXX(t *testing.T) {
	root := checkoutRoot(t)
	goCmd := userModule(t, `module example.com/user

go 1.26.5

require (
	github.com/dlpack-go/dlpack v0.0.0
	github.com/dlpack-go/dlpack/gomlxx v0.0.0
)

replace (
	github.com/dlpack-go/dlpack => `+root+`
	github.com/dlpack-go/dlpack/gomlxx => `+filepath.Join(root, "gomlxx")+`
)
`, `package main

import (
	"fmt"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/gomlxx"
)

func main() {
	t, err := core.New(core.Float32, 2, 3)
	if err != nil {
		panic(err)
	}
	defer t.Release()
	g, err := gomlxx.ToTensor(t)
	if err != nil {
		panic(err)
	}
	fmt.Println(g.Shape())
}
`)
	goCmd("mod", "tidy")
	require.Equal(t, "github.com/gomlx/gomlx v0.28.2", goCmd("list", "-m", "github.com/gomlx/gomlx"))
	goCmd("build", "./...")
	require.Equal(t, "(Float32)[2, 3]", goCmd("run", "."))
}

// TestUserModuleRequiresOrtgo builds the module of a user of the nested module onnxx/ortgo, the
// way the README says to require it, who also names onnxruntime_go v1.38.0 (the release a module
// that imports it without a version resolves): it tidies, builds (cgo) and runs one model through
// onnxx and through onnxruntime_go's own session, on one ONNX Runtime library (the one
// fetch-ort.sh fetches, or $ONNXRUNTIME_LIB).
func TestUserModuleRequiresOrtgo(t *testing.T) {
	root := checkoutRoot(t)
	goCmd := userModule(t, `module example.com/user

go 1.26.5

require (
	github.com/dlpack-go/dlpack v0.0.0
	github.com/dlpack-go/dlpack/onnxx/ortgo v0.0.0
	github.com/yalue/onnxruntime_go v1.38.0
)

replace (
	github.com/dlpack-go/dlpack => `+root+`
	github.com/dlpack-go/dlpack/onnxx/ortgo => `+filepath.Join(root, "onnxx", "ortgo")+`
)
`, `package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/onnxx"
	"github.com/dlpack-go/dlpack/onnxx/ortgo"
	"github.com/dlpack-go/dlpack/onnxx/tinyonnx"
	ort "github.com/yalue/onnxruntime_go"
)

func main() {
	if err := run(); err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
}

func run() error {
	m, err := tinyonnx.Dense([][]float64{{1, 0}, {0, 1}, {1, 1}}, []float64{0.5, -1})
	if err != nil {
		return err
	}
	path := filepath.Join(os.Args[1], "dense.onnx")
	if err := m.WriteFile(path); err != nil {
		return err
	}
	if err := ortgo.Init(); err != nil {
		return err
	}
	s, err := onnxx.NewSession(path, nil, nil, nil)
	if err != nil {
		return err
	}
	defer s.Destroy()
	out, err := s.Run(map[string]*core.Tensor{"X": core.MustFromSlice([]float64{1, 2, 3}, 1, 3)})
	if err != nil {
		return err
	}
	y, err := core.Elements[float64](out["Y"])
	if err != nil {
		return err
	}
	plain, err := ort.NewDynamicAdvancedSession(path, []string{"X"}, []string{"Y"}, nil)
	if err != nil {
		return err
	}
	defer plain.Destroy()
	x, err := ort.NewTensor(ort.NewShape(1, 3), []float64{1, 2, 3})
	if err != nil {
		return err
	}
	defer x.Destroy()
	outs := []ort.Value{nil}
	if err := plain.Run([]ort.Value{x}, outs); err != nil {
		return err
	}
	defer outs[0].Destroy()
	_, version, _ := onnxx.LoadedLibrary()
	fmt.Println(y, outs[0].(*ort.Tensor[float64]).GetData(), version == ort.GetVersion())
	return nil
}
`)
	goCmd("mod", "tidy")
	require.Equal(t, "github.com/yalue/onnxruntime_go v1.38.0", goCmd("list", "-m", "github.com/yalue/onnxruntime_go"))
	goCmd("build", "./...")
	require.Equal(t, "[4.5 4] [4.5 4] true", goCmd("run", ".", t.TempDir()))
}

// checkoutRoot returns this checkout's root, skipping the test in -short mode: a user module
// resolves modules through the Go proxy.
func checkoutRoot(t *testing.T) string {
	if testing.Short() {
		t.Skip("resolves modules through the Go proxy; not in -short")
	}
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	return root
}

// userModule writes a user's module (its go.mod and main.go) in a temporary directory and
// returns userGo for it.
func userModule(t *testing.T, goMod, mainGo string) func(args ...string) string {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte(goMod), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte(mainGo), 0o644))
	return userGo(t, dir)
}

// userGo returns a function that runs the go command in the user's module dir, outside this
// checkout (no go.work of ours applies; tidy may fetch what it needs), and returns its output.
func userGo(t *testing.T, dir string) func(args ...string) string {
	return func(args ...string) string {
		t.Helper()
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "go %s:\n%s", strings.Join(args, " "), out)
		return strings.TrimSpace(string(out))
	}
}
