package interop

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/arrowx/flightx"
	"github.com/dlpack-go/dlpack/arrowx/internal/arrowtest"
	"github.com/dlpack-go/dlpack/internal/refcheck"
)

// flightShape is the shape of the tensors that cross Flight: 4 rows of [2, 3] tensors.
var flightShape = []int64{4, 2, 3}

// flightDTypes are the dtypes that cross Flight as arrow.fixed_shape_tensor of their own Arrow
// type (flightx sends bool as uint8 bytes, so it is not among them).
var flightDTypes = []string{"float16", "float32", "float64", "int8", "int16", "int32", "int64",
	"uint8", "uint16", "uint32", "uint64"}

func flightManifest(t *testing.T) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"shape": flightShape, "dtypes": flightDTypes})
	require.NoError(t, err)
	p := filepath.Join(t.TempDir(), "flight.json")
	require.NoError(t, os.WriteFile(p, b, 0o644))
	return p
}

// TestInteropFlight: Flight across languages. pyarrow.flight's client puts, lists and gets
// tensors on a flightx server; flightx's client gets, lists and puts on a pyarrow.flight server
// of canonical tensor streams. Subtests TestInteropFlight/<side>/<dtype>/<op>.
func TestInteropFlight(t *testing.T) {
	py := refcheck.Venv(t)
	manifest := flightManifest(t)

	t.Run("pyarrow-client", func(t *testing.T) {
		srv := flightx.NewServer()
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		done := make(chan error, 1)
		go func() { done <- srv.Serve(lis) }()
		defer func() {
			srv.Stop()
			require.NoError(t, <-done)
			srv.Close()
		}()
		for _, dt := range flightDTypes {
			x := tensorOf(t, dt, 0, flightShape...)
			require.NoError(t, srv.Put("go-"+dt, x, nil))
			x.Release()
		}
		verdicts := runJSON(t, exec.Command(py, testdata(t, "flight_client.py"), lis.Addr().String(), manifest))
		for _, dt := range flightDTypes {
			t.Run(dt+"/put", func(t *testing.T) {
				require.Equal(t, "ok", verdicts[dt+"/put"], "pyarrow's do_put")
				got, _, err := srv.Get("py-" + dt)
				require.NoError(t, err)
				defer got.Release()
				want := tensorOf(t, dt, 0, flightShape...)
				defer want.Release()
				arrowtest.RequireSame(t, want, got, "what pyarrow put")
			})
			t.Run(dt+"/get", func(t *testing.T) {
				require.Equal(t, "ok", verdicts[dt+"/get"], "pyarrow's do_get")
			})
		}
		t.Run("list", func(t *testing.T) {
			require.Equal(t, "ok", verdicts["list"], "pyarrow's list_flights")
		})
	})

	t.Run("pyarrow-server", func(t *testing.T) {
		cmd := exec.Command(py, testdata(t, "flight_server.py"), manifest)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		defer func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}()
		port := make(chan string, 1)
		go func() {
			line, _ := bufio.NewReader(out).ReadString('\n')
			port <- strings.TrimSpace(line)
		}()
		var p string
		select {
		case p = <-port:
		case <-time.After(60 * time.Second):
			t.Fatalf("the pyarrow.flight server did not start: %s", stderr.String())
		}
		require.NotEmpty(t, p, "the pyarrow.flight server did not start: %s", stderr.String())
		c, err := flightx.Dial("127.0.0.1:" + p)
		require.NoError(t, err)
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for _, dt := range flightDTypes {
			t.Run(dt+"/get", func(t *testing.T) {
				got, _, err := c.Get(ctx, dt)
				require.NoError(t, err)
				defer got.Release()
				want := tensorOf(t, dt, 0, flightShape...)
				defer want.Release()
				arrowtest.RequireSame(t, want, got, "what pyarrow serves")
			})
			t.Run(dt+"/put", func(t *testing.T) {
				x := tensorOf(t, dt, 0, flightShape...)
				defer x.Release()
				require.NoError(t, c.Put(ctx, "back-"+dt, x, nil), "the pyarrow server checks what it is sent")
				got, _, err := c.Get(ctx, "back-"+dt)
				require.NoError(t, err)
				defer got.Release()
				arrowtest.RequireSame(t, x, got, "what pyarrow stored")
			})
		}
		t.Run("list", func(t *testing.T) {
			infos, err := c.List(ctx)
			require.NoError(t, err)
			var names []string
			for _, in := range infos {
				names = append(names, in.Name)
				if !strings.HasPrefix(in.Name, "back-") {
					// a plain stream's rows are known at its end: -1 (Info.Unsized) in a listing
					require.Equal(t, flightShape[1:], in.Shape[1:], in.Name)
					require.Contains(t, []int64{-1, flightShape[0]}, in.Shape[0], in.Name)
				}
			}
			var want []string
			for _, dt := range flightDTypes {
				want = append(want, dt, "back-"+dt)
			}
			slices.Sort(names)
			slices.Sort(want)
			require.Equal(t, want, names)
		})
	})
}
