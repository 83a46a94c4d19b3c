package ggufx

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/errs"
)

// The metadata keys of split models (llama.cpp's gguf-split).
const (
	SplitNoKey           = "split.no"            // uint16: the shard's number, from 0
	SplitCountKey        = "split.count"         // uint16: the number of shards
	SplitTensorsCountKey = "split.tensors.count" // int32: the tensors of all shards together
)

// ErrSplit: the shards of a split model do not agree: a shard is missing, numbered other than
// its name says, counts another number of shards, or holds a tensor another shard holds too.
var ErrSplit = errors.New("ggufx: inconsistent split model")

// splitName matches llama.cpp's shard names, PREFIX-00001-of-00003.gguf.
var splitName = regexp.MustCompile(`^(.*)-(\d{5})-of-(\d{5})\.gguf$`)

// SplitPath is the name of shard no (from 0) of count of the model whose shards are named
// prefix-NNNNN-of-MMMMM.gguf, as llama.cpp names them.
func SplitPath(prefix string, no, count int) string {
	return fmt.Sprintf("%s-%05d-of-%05d.gguf", prefix, no+1, count)
}

// Split is a model spread over several GGUF files (shards), opened by OpenSplit: the shards'
// tensors under one index by name. Its methods may be called from several goroutines at once.
type Split struct {
	files []*File
	index map[string]int // tensor name -> shard
	names []string
}

// OpenSplit opens the model whose first shard is called name (as llama.cpp names shards,
// prefix-00001-of-NNNNN.gguf) and every other shard beside it (see SplitPath), checking that
// their split.no and split.count agree with their names, that no tensor is in two shards, and
// that split.tensors.count, where given, counts them all. A file without split.count is a
// model of one shard. Each shard is opened with Open(shard, opts...); on an error, those opened
// are closed.
func OpenSplit(name string, opts ...adapters.Option) (*Split, error) {
	first, err := Open(name, opts...)
	if err != nil {
		return nil, err
	}
	s := &Split{files: []*File{first}, index: map[string]int{}}
	ok := false
	defer func() {
		if !ok {
			s.Close()
		}
	}()
	count := 1
	if _, found := first.Metadata().Get(SplitCountKey); found {
		c, err := first.Metadata().Uint16(SplitCountKey)
		if err != nil {
			return nil, errs.Errorf(ErrSplit, "%w (in %s)", err, name)
		}
		count = int(c)
		m := splitName.FindStringSubmatch(name)
		if count > 1 && m == nil {
			return nil, errs.Errorf(ErrSplit, "ggufx: %s has %s %d but is not named PREFIX-00001-of-%05d.gguf", name, SplitCountKey, count, count)
		}
		if count > 1 {
			if n, _ := strconv.Atoi(m[3]); m[2] != "00001" || n != count {
				return nil, errs.Errorf(ErrSplit, "ggufx: %s is not the first of %d shards (%s %d)", name, count, SplitCountKey, count)
			}
			for no := 1; no < count; no++ {
				f, err := Open(SplitPath(m[1], no, count), opts...)
				if err != nil {
					return nil, errs.Errorf(ErrSplit, "%w (shard %d of %d)", err, no+1, count)
				}
				s.files = append(s.files, f)
			}
		}
	}
	for no, f := range s.files {
		if count > 1 {
			got, err := f.Metadata().Uint16(SplitNoKey)
			if err != nil || int(got) != no {
				return nil, errs.Errorf(ErrSplit, "ggufx: %s should be shard %d (%s): %v", f.path, no, SplitNoKey, errOr(err, fmt.Sprintf("it says %d", got)))
			}
			c, err := f.Metadata().Uint16(SplitCountKey)
			if err != nil || int(c) != count {
				return nil, errs.Errorf(ErrSplit, "ggufx: %s should count %d shards (%s): %v", f.path, count, SplitCountKey, errOr(err, fmt.Sprintf("it says %d", c)))
			}
		}
		for _, ti := range f.Tensors() {
			if at, dup := s.index[ti.Name]; dup {
				return nil, errs.Errorf(ErrSplit, "ggufx: tensor %q is in shard %d and shard %d", ti.Name, at, no)
			}
			s.index[ti.Name] = no
			s.names = append(s.names, ti.Name)
		}
	}
	if n, err := first.Metadata().Int32(SplitTensorsCountKey); err == nil && int(n) != len(s.names) {
		return nil, errs.Errorf(ErrSplit, "ggufx: %s says %d tensors, the shards hold %d", SplitTensorsCountKey, n, len(s.names))
	}
	ok = true
	return s, nil
}

// errOr is what err says (without this package's prefix, which the message it goes in has), or
// s when err is nil.
func errOr(err error, s string) string {
	if err != nil {
		return strings.TrimPrefix(err.Error(), "ggufx: ")
	}
	return s
}

// Files returns the shards, in order. They are the Split's: do not close them.
func (s *Split) Files() []*File { return s.files }

// Metadata is the first shard's metadata (llama.cpp writes the model's metadata there).
func (s *Split) Metadata() *Metadata { return s.files[0].Metadata() }

// Names returns every tensor's name, shard by shard in file order.
func (s *Split) Names() []string { return s.names }

func (s *Split) file(name string) (*File, error) {
	no, ok := s.index[name]
	if !ok {
		return nil, errs.Errorf(ErrNotFound, "ggufx: no tensor %q in %d shards", name, len(s.files))
	}
	return s.files[no], nil
}

// Info describes the tensor called name (see File.Info).
func (s *Split) Info(name string) (TensorInfo, error) {
	f, err := s.file(name)
	if err != nil {
		return TensorInfo{}, err
	}
	return f.Info(name)
}

// Tensor is File.Tensor of the shard that holds name.
func (s *Split) Tensor(name string) (*core.Tensor, error) {
	f, err := s.file(name)
	if err != nil {
		return nil, err
	}
	return f.Tensor(name)
}

// Blocks is File.Blocks of the shard that holds name.
func (s *Split) Blocks(name string) (*core.Tensor, BlockInfo, error) {
	f, err := s.file(name)
	if err != nil {
		return nil, BlockInfo{}, err
	}
	return f.Blocks(name)
}

// Dequantize is File.Dequantize of the shard that holds name.
func (s *Split) Dequantize(name string, dtype core.DLDataType) (*core.Tensor, error) {
	f, err := s.file(name)
	if err != nil {
		return nil, err
	}
	return f.Dequantize(name, dtype)
}

// Close closes every shard (tensors taken stay valid, as File.Close says).
func (s *Split) Close() error {
	var errs []error
	for _, f := range s.files {
		errs = append(errs, f.Close())
	}
	return errors.Join(errs...)
}
