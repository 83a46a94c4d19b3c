package safetensorsx_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/internal/tensorio/notregular"
	"github.com/dlpack-go/dlpack/safetensorsx"
)

// Every opener refuses a named pipe nobody writes to, a directory and a device at once, with
// ErrNotRegularFile, instead of blocking on the pipe or failing later with a read error.
func TestOpenersRefuseNonRegularFiles(t *testing.T) {
	paths, fifo := notregular.Paths(t, "fifo.safetensors")
	openers := map[string]func(string) error{
		"ReadFile": func(p string) error { _, err := safetensorsx.ReadFile(p); return err },
		"Map":      func(p string) error { _, err := safetensorsx.Map(p); return err },
		"Open": func(p string) error {
			f, err := safetensorsx.Open(p)
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
				require.ErrorIs(t, err, safetensorsx.ErrNotRegularFile)
				assert.Equal(t, fmt.Sprintf("safetensorsx: %s is %s, not a regular file", path, kind), err.Error())
			})
		}
	}
}
