// Command pyarrowlib is the Go library devicecheck/check_pyarrow.py drives (go build
// -buildmode=c-shared), where Python has pyarrow (the GPU host; Debian 12 has none): the product's
// Python exchange (pyexchange, the dlpackgo package) with functions that hand Arrow arrays
// across the C Data Interface (arrowx/cdatax), run a Flight server (arrowx/flightx) for
// pyarrow.flight to talk to, and write and read Parquet files (arrowx/parquetx) for
// pyarrow.parquet to read and write.
package main

import (
	"errors"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/cdata"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/arrowx/cdatax"
	"github.com/dlpack-go/dlpack/arrowx/flightx"
	"github.com/dlpack-go/dlpack/arrowx/parquetx"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/pyexchange"
)

func main() {}

func init() {
	for _, r := range []struct {
		name string
		fn   any
		doc  string
	}{
		{"arrow_import", arrowImport, "arrow_import(array, schema)\n\nThe tensor over the Arrow array a C producer exported into the ArrowArray and ArrowSchema at these addresses (cdatax.ImportArray: moved and released)."},
		{"arrow_export", arrowExport, "arrow_export(x, array, schema)\n\nExports x into the ArrowArray and ArrowSchema at these addresses (cdatax.ExportArray); the consumer releases them."},
		{"flight_serve", flightServe, "flight_serve()\n\nStarts a Flight server on 127.0.0.1 and returns its host:port."},
		{"flight_put", flightPut, "flight_put(name, x)\n\nThe server holds a view of x under name, with metadata source=go."},
		{"flight_get", flightGet, "flight_get(name)\n\nThe tensor the server holds under name (sent by a client's DoPut)."},
		{"flight_names", flightNames, "flight_names()\n\nThe names the server holds, comma-separated."},
		{"flight_stop", flightStop, "flight_stop()\n\nStops the server and releases its tensors."},
		{"parquet_write", parquetWrite, "parquet_write(path, name, x)\n\nWrites x as a Parquet file at path of one column called name, its rows x's first dimension (parquetx.WriteFile: arrow.fixed_shape_tensor for two dimensions or more)."},
		{"parquet_read", parquetRead, "parquet_read(path, column, groups)\n\nThe column of the Parquet file at path as one tensor (parquetx.ReadFile); groups, row group indices separated by commas, reads only those (\"\": every row group)."},
	} {
		pyexchange.MustRegister(r.name, r.fn, r.doc)
	}
}

// addr turns an address Python passes as an int into a pointer to C memory (ctypes' structs).
func addr[T any](a uint64) *T {
	if a == 0 {
		return nil
	}
	return (*T)(*(*unsafe.Pointer)(unsafe.Pointer(&a)))
}

func arrowImport(array, schema uint64) (*core.Tensor, error) {
	return cdatax.ImportArray(addr[cdata.CArrowArray](array), addr[cdata.CArrowSchema](schema))
}

func arrowExport(t *core.Tensor, array, schema uint64) error {
	return cdatax.ExportArray(t, addr[cdata.CArrowArray](array), addr[cdata.CArrowSchema](schema))
}

var server struct {
	sync.Mutex
	srv *flightx.Server
}

func flightServe() (string, error) {
	server.Lock()
	defer server.Unlock()
	if server.srv != nil {
		return "", errors.New("pyarrowlib: a server is running already")
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	server.srv = flightx.NewServer()
	go server.srv.Serve(lis) //nolint:errcheck // Stop ends it
	return lis.Addr().String(), nil
}

func running() (*flightx.Server, error) {
	server.Lock()
	defer server.Unlock()
	if server.srv == nil {
		return nil, errors.New("pyarrowlib: no server: call flight_serve first")
	}
	return server.srv, nil
}

func flightPut(name string, t *core.Tensor) error {
	srv, err := running()
	if err != nil {
		return err
	}
	return srv.Put(name, t, map[string]string{"source": "go"})
}

func flightGet(name string) (*core.Tensor, error) {
	srv, err := running()
	if err != nil {
		return nil, err
	}
	t, meta, err := srv.Get(name)
	if err != nil {
		return nil, err
	}
	if meta["source"] != "python" {
		t.Release()
		return nil, fmt.Errorf("pyarrowlib: %q has metadata %v, want source=python", name, meta)
	}
	return t, nil
}

func flightNames() (string, error) {
	srv, err := running()
	if err != nil {
		return "", err
	}
	names := srv.Names()
	sort.Strings(names)
	return strings.Join(names, ","), nil
}

func flightStop() error {
	server.Lock()
	defer server.Unlock()
	if server.srv != nil {
		server.srv.Stop()
		server.srv.Close()
		server.srv = nil
	}
	return nil
}

func parquetWrite(path, name string, t *core.Tensor) error {
	return parquetx.WriteFile(path, []parquetx.Column{{Name: name, Tensor: t}})
}

func parquetRead(path, column, groups string) (*core.Tensor, error) {
	var opts []adapters.Option
	if groups != "" {
		var idx []int
		for _, g := range strings.Split(groups, ",") {
			i, err := strconv.Atoi(g)
			if err != nil {
				return nil, fmt.Errorf("parquet_read: row group %q is not a number", g)
			}
			idx = append(idx, i)
		}
		opts = append(opts, parquetx.RowGroups(idx...))
	}
	return parquetx.ReadFile(path, column, opts...)
}
