package main

import (
	"bytes"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/numpyx"
)

func init() {
	formats = append(formats, format{
		name:  "npz",
		exts:  []string{".npz"},
		magic: func(head []byte) bool { return bytes.HasPrefix(head, []byte("PK\x03\x04")) },
		open:  openNPZ,
	})
}

// npzFile is an .npz archive: its members' headers are read on opening, and a member's values
// are read into memory (one member at a time) only when asked for.
type npzFile struct {
	z   *numpyx.NPZ
	ent []entry
}

func openNPZ(path string) (container, error) {
	z, err := numpyx.OpenNPZ(path)
	if err != nil {
		return nil, err
	}
	f := &npzFile{z: z}
	for _, k := range z.Keys() {
		h, err := z.Header(k)
		if err != nil {
			z.Close()
			return nil, err
		}
		f.ent = append(f.ent, entryOf(k, h))
	}
	return f, nil
}

func (f *npzFile) entries() []entry { return f.ent }

func (f *npzFile) tensor(i int) (*core.Tensor, error) { return f.z.Read(f.ent[i].name) }

func (f *npzFile) close() error { return f.z.Close() }
