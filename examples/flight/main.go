// Command flight serves the tensors of a directory of .npy and .npz files over Arrow Flight and
// fetches a batch of them into an ONNX model, with package arrowx/flightx.
//
// Run as one process (a server goroutine on 127.0.0.1 and a client; the default):
//
//	go run ./examples/flight
//
// or as two, on one machine or two (see README.md in this directory):
//
//	go run ./examples/flight -serve DIR -addr 127.0.0.1:8815
//	go run ./examples/flight -fetch 127.0.0.1:8815
//
// Listening on anything but loopback, the server speaks TLS and admits only holders of a token
// (read-only): -cert, -key and -token-file supply them, and without them it makes a
// self-signed certificate and a random token, writes them to files and prints the command that
// connects (-fetch HOST:PORT -ca CERT -token-file TOKEN). On loopback both are optional.
//
// The server memory-maps every .npy file (numpyx.Map: served straight from the page cache, never
// loaded into Go memory) and reads the arrays of every .npz file; a tensor is named after its
// file ("x" for x.npy, "params/w" for the array w of params.npz). The client lists them, fetches
// "x" (the batch) and "params/w" (the weights) and runs Y = Relu(X · W) in ONNX Runtime (onnxx),
// building the model with Python ($PYTHON, else python3 on $PATH if it has onnx, else
// /usr/bin/python3 with Debian's python3-onnx) as examples/onnx does, and writing the batch first
// when it serves a directory of its own.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/dlpack-go/dlpack/arrowx/flightx"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/display"
	"github.com/dlpack-go/dlpack/numpyx"
	"github.com/dlpack-go/dlpack/onnxx"
	"github.com/dlpack-go/dlpack/pyfind"
)

// buildModel writes Y = Relu(X · W), X of shape [batch, 3] and W [3, 2], both float64 inputs.
const buildModel = `
import sys
from onnx import TensorProto, helper, save
g = helper.make_graph(
    [helper.make_node("MatMul", ["X", "W"], ["XW"]), helper.make_node("Relu", ["XW"], ["Y"])], "flight",
    [helper.make_tensor_value_info("X", TensorProto.DOUBLE, ["batch", 3]),
     helper.make_tensor_value_info("W", TensorProto.DOUBLE, [3, 2])],
    [helper.make_tensor_value_info("Y", TensorProto.DOUBLE, ["batch", 2])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
m.ir_version = 8
save(m, sys.argv[1])
`

func main() {
	serveDir := flag.String("serve", "", "serve the .npy/.npz files of this directory (and do nothing else)")
	addr := flag.String("addr", "127.0.0.1:8815", "with -serve: the address to listen on")
	fetch := flag.String("fetch", "", "fetch a batch from the server at this address and run the model")
	var sec security
	flag.StringVar(&sec.cert, "cert", "", "with -serve: the server's TLS certificate (PEM; with -key)")
	flag.StringVar(&sec.key, "key", "", "with -serve: the key of -cert (PEM)")
	flag.StringVar(&sec.tokenFile, "token-file", "", "a file holding the token: with -serve, the one clients must send (read-only); with -fetch, the one sent")
	flag.StringVar(&sec.ca, "ca", "", "with -fetch: the root certificate (PEM) that verifies the server: TLS")
	flag.Parse()
	var err error
	switch {
	case *serveDir != "":
		err = serveForever(*serveDir, *addr, sec)
	case *fetch != "":
		err = client(*fetch, sec)
	default:
		err = oneProcess()
	}
	if err != nil {
		log.Fatal(err)
	}
}

// oneProcess writes a directory of tensors, serves it from a goroutine, and fetches from it.
func oneProcess() error {
	dir, err := os.MkdirTemp("", "flight-example-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := writeData(dir); err != nil {
		return err
	}
	srv, err := load(dir)
	if err != nil {
		return err
	}
	defer srv.Close()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go srv.Serve(lis)
	defer srv.GracefulStop()
	fmt.Println("serving", srv.Names(), "on", lis.Addr())
	return client(lis.Addr().String(), security{})
}

// writeData writes the batch x.npy ([4, 3] float64) and params.npz (w: [3, 2] float64).
func writeData(dir string) error {
	x := core.MustFromSlice([]float64{1, 2, 3, -4, -5, -6, 0.5, 0, -0.5, 2, 2, 2}, 4, 3)
	if err := numpyx.WriteFile(filepath.Join(dir, "x.npy"), x); err != nil {
		return err
	}
	w := core.MustFromSlice([]float64{1, 0, 0, 1, 1, 1}, 3, 2)
	return numpyx.WriteNPZ(filepath.Join(dir, "params.npz"), map[string]*core.Tensor{"w": w})
}

// load makes a server holding every tensor of dir.
func load(dir string, opts ...flightx.Option) (*flightx.Server, error) {
	srv := flightx.NewServer(opts...)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		switch {
		case strings.HasSuffix(e.Name(), ".npy"):
			t, err := numpyx.Map(path) // read-only memory map: served from the page cache
			if err != nil {
				return nil, err
			}
			err = srv.Put(strings.TrimSuffix(e.Name(), ".npy"), t, map[string]string{"file": e.Name()})
			t.Release() // the server holds its own view
			if err != nil {
				return nil, err
			}
		case strings.HasSuffix(e.Name(), ".npz"):
			arrays, err := numpyx.ReadNPZ(path)
			if err != nil {
				return nil, err
			}
			for k, t := range arrays {
				err := srv.Put(strings.TrimSuffix(e.Name(), ".npz")+"/"+k, t, map[string]string{"file": e.Name()})
				t.Release()
				if err != nil {
					return nil, err
				}
			}
		}
	}
	return srv, nil
}

func serveForever(dir, addr string, sec security) error {
	opts, err := sec.serverOptions(addr)
	if err != nil {
		return err
	}
	srv, err := load(dir, opts...)
	if err != nil {
		return err
	}
	defer srv.Close()
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Println("serving", srv.Names(), "on", lis.Addr())
	return srv.Serve(lis)
}

// client lists the server's tensors, fetches the batch and the weights, and runs the model.
func client(addr string, sec security) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	opts, err := sec.clientOptions()
	if err != nil {
		return err
	}
	c, err := flightx.Dial(addr, opts...)
	if err != nil {
		return err
	}
	defer c.Close()
	infos, err := c.List(ctx)
	if err != nil {
		return err
	}
	for _, in := range infos {
		fmt.Printf("  %-10s %-8s %v %v\n", in.Name, in.DType, in.Shape, in.Meta)
	}
	x, _, err := c.Get(ctx, "x")
	if err != nil {
		return err
	}
	defer x.Release()
	w, _, err := c.Get(ctx, "params/w")
	if err != nil {
		return err
	}
	defer w.Release()
	fmt.Println("fetched", x, "and", w, "(views of the received messages: "+fmt.Sprint(x.Foreign() && x.Flags()&core.FlagIsCopied == 0)+")")

	dir, err := os.MkdirTemp("", "flight-model-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	model := filepath.Join(dir, "model.onnx")
	python := pyfind.Interpreter("onnx")
	if out, err := exec.Command(python, "-c", buildModel, model).CombinedOutput(); err != nil {
		return fmt.Errorf("building the model needs Python with ONNX (%s: apt-get install python3-onnx, or set $PYTHON to an interpreter with onnx): %v\n%s", python, err, out)
	}
	s, err := onnxx.NewSession(model, nil, nil, nil)
	if err != nil {
		return err
	}
	defer s.Destroy()
	out, err := s.Run(map[string]*core.Tensor{"X": x, "W": w})
	if err != nil {
		return err
	}
	y := out["Y"]
	defer y.Release()
	fmt.Printf("Y = Relu(X · W) =\n%s\n", display.Repr(y))
	return nil
}
