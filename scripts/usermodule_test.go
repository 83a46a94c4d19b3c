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
// GoMLX v0.26.0 and requires dlpack-go (through a replace to this checkout) for core, gonumx
// and numpyx only. After `go mod tidy` the user's module must still select GoMLX v0.26.0:
// requiring dlpack-go must never move a v0 dependency the user already picks, which is why
// gomlxx is a nested module of its own. It needs the Go module proxy (or a module cache that
// holds what tidy resolves).
func TestUserModuleKeepsItsGoMLX(t *testing.T) {
	if testing.Short() {
		t.Skip("resolves modules through the Go proxy; not in -short")
	}
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	dir := t.TempDir()
	write(t, dir, "go.mod", `module example.com/user

go 1.26.0

require (
	github.com/dlpack-go/dlpack v0.0.0
	github.com/gomlx/gomlx v0.26.0
)

replace github.com/dlpack-go/dlpack => `+root+"\n")
	write(t, dir, "main.go", `package main

import (
	"fmt"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/gonumx"
	"github.com/dlpack-go/dlpack/numpyx"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

func main() {
	t, err := core.New(core.Float64, 2, 3)
	if err != nil {
		panic(err)
	}
	defer t.Release()
	_ = gonumx.ToDense
	_ = numpyx.Write
	fmt.Println(t, tensors.FromValue([]float64{1, 2}))
}
`)
	goCmd := userGo(t, dir)
	goCmd("mod", "tidy")
	require.Equal(t, "github.com/gomlx/gomlx v0.26.0", goCmd("list", "-m", "github.com/gomlx/gomlx"),
		"requiring dlpack-go moved the user's GoMLX")
	goCmd("build", "./...")
	// and dlpack-go itself asks for no GoMLX at all: a user of v0.25 or v0.29 keeps theirs too
	for _, edge := range strings.Split(goCmd("mod", "graph"), "\n") {
		require.False(t, strings.HasPrefix(edge, "github.com/dlpack-go/dlpack@") &&
			strings.Contains(edge, " github.com/gomlx/"), "dlpack-go's root module requires %s", edge)
	}
}

// TestUserModuleRequiresGoMLXX builds the module of a user of the nested module gomlxx, the way
// the README says to require it (both dlpack-go modules, each replaced by a clone until they are
// on a proxy): it resolves GoMLX v0.28.2, tidies and builds.
func TestUserModuleRequiresGoMLXX(t *testing.T) {
	if testing.Short() {
		t.Skip("resolves modules through the Go proxy; not in -short")
	}
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	dir := t.TempDir()
	write(t, dir, "go.mod", `module example.com/user

go 1.26.5

require (
	github.com/dlpack-go/dlpack v0.0.0
	github.com/dlpack-go/dlpack/gomlxx v0.0.0
)

replace (
	github.com/dlpack-go/dlpack => `+root+`
	github.com/dlpack-go/dlpack/gomlxx => `+filepath.Join(root, "gomlxx")+`
)
`)
	write(t, dir, "main.go", `package main

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
	goCmd := userGo(t, dir)
	goCmd("mod", "tidy")
	require.Equal(t, "github.com/gomlx/gomlx v0.28.2", goCmd("list", "-m", "github.com/gomlx/gomlx"))
	goCmd("build", "./...")
	require.Equal(t, "(Float32)[2, 3]", goCmd("run", "."))
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
