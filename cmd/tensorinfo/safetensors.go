package main

import (
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/errs"
	"github.com/dlpack-go/dlpack/safetensorsx"
)

func init() {
	formats = append(formats, format{
		name:  "safetensors",
		exts:  []string{".safetensors"},
		magic: safetensorsMagic,
		open:  openSafetensors,
	})
}

// safetensorsMagic recognises a safetensors file without its extension: an 8-byte
// little-endian header length within the format's limit, then the JSON object's opening brace.
func safetensorsMagic(head []byte) bool {
	if len(head) < 9 {
		return false
	}
	var n uint64
	for i := 7; i >= 0; i-- {
		n = n<<8 | uint64(head[i])
	}
	return n >= 2 && n <= safetensorsx.MaxHeaderLen && head[8] == '{'
}

// safetensorsFile is a file opened by memory map: the header is read once, and every tensor is a
// view of the mapping (a misaligned one is read into memory, up to copyLimit).
type safetensorsFile struct {
	f     *safetensorsx.File
	names []string
}

func openSafetensors(path string, _ options) (container, error) {
	f, err := safetensorsx.Open(path)
	if err != nil {
		return nil, err
	}
	return &safetensorsFile{f: f, names: f.Names()}, nil
}

func (s *safetensorsFile) entries() []entry {
	out := make([]entry, 0, len(s.names))
	for _, name := range s.names {
		info, err := s.f.Info(name) // every name comes from the header
		if err != nil {
			continue
		}
		size := info.DType.Size()
		out = append(out, entry{name: name, dtype: info.DType, descr: info.Format, shape: info.Shape, size: size})
	}
	return out
}

func (s *safetensorsFile) tensor(i int) (*core.Tensor, error) {
	info, err := s.f.Info(s.names[i])
	if err != nil {
		return nil, err
	}
	if ok, _ := s.f.Shareable(s.names[i]); !ok && info.End-info.Begin > copyLimit {
		return nil, errs.Errorf(errTooLarge, "%q is not aligned in the file and holds %d bytes, more than this tool reads into memory (%d)",
			s.names[i], info.End-info.Begin, copyLimit)
	}
	return s.f.Tensor(s.names[i])
}

func (s *safetensorsFile) close() error { return s.f.Close() }
