package ggufx_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/ggufx"
	"github.com/dlpack-go/dlpack/internal/tensorio/notregular"
)

// Every opener refuses a named pipe nobody writes to, a directory and a device at once, with
// ErrNotRegularFile, instead of blocking on the pipe or failing later with a read error.
func TestOpenersRefuseNonRegularFiles(t *testing.T) {
	paths, fifo := notregular.Paths(t, "fifo.safetensors")
	openers := map[string]func(string) error{
		"OpenSplit": func(p string) error {
			s, err := ggufx.OpenSplit(p)
			if s != nil {
				s.Close()
			}
			return err
		},
		"Open": func(p string) error {
			f, err := ggufx.Open(p)
			if f != nil {
				f.Close()
			}
			return err
		},
	}
	for opener, open := range openers {
		for kind, path := range paths {
			t.Run(opener+"/"+kind, func(t *testing.T) {
				err := notregular.Within(t, fifo, func() error { return open(path) })
				require.ErrorIs(t, err, ggufx.ErrNotRegularFile)
				assert.Equal(t, fmt.Sprintf("ggufx: %s is %s, not a regular file", path, kind), err.Error())
			})
		}
	}
}
