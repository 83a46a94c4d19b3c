package safetensorsx_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/safetensorsx"
)

// TestFailedReadLeavesReport: a read that fails after deciding to share or copy (a tensor whose
// range a caller moved past the end of the file through the shared Header, mapped or read; a
// file that is not there; a stream cut short) leaves the caller's ReportCopy flag as it was,
// whatever was in it.
func TestFailedReadLeavesReport(t *testing.T) {
	data := threeU8(t)
	path := filepath.Join(t.TempDir(), "three.safetensors")
	require.NoError(t, os.WriteFile(path, data, 0o644))
	movedPastEnd := func(policy adapters.Option) func(...adapters.Option) error {
		return func(o ...adapters.Option) error {
			f, err := safetensorsx.Open(path, append(o, policy)...)
			require.NoError(t, err)
			defer f.Close()
			h := f.Header()
			for i := range h.Tensors {
				if h.Tensors[i].Name == "c" {
					h.Tensors[i].Begin, h.Tensors[i].End = 1<<30, 1<<30+8
				}
			}
			_, err = f.Tensor("c")
			return err
		}
	}
	for _, c := range []struct {
		name string
		read func(...adapters.Option) error
	}{
		{"File.Tensor, mapped", movedPastEnd(nil)},
		{"File.Tensor, AlwaysCopy", movedPastEnd(adapters.AlwaysCopy())},
		{"ReadFile of no file", func(o ...adapters.Option) error {
			_, err := safetensorsx.ReadFile(filepath.Join(t.TempDir(), "none.safetensors"), o...)
			return err
		}},
		{"Read of a cut stream", func(o ...adapters.Option) error {
			_, err := safetensorsx.Read(bytes.NewReader(data[:len(data)-1]), o...)
			return err
		}},
	} {
		for _, sentinel := range []bool{false, true} {
			copied := sentinel
			require.Error(t, c.read(adapters.ReportCopy(&copied)), c.name)
			assert.Equal(t, sentinel, copied, "%s: ReportCopy was set by a read that failed", c.name)
		}
	}
}

// TestEmptyTensorsAreNoCopy: a tensor without elements is a fresh empty tensor on every path,
// into which nothing was copied: never flagged core.FlagIsCopied, and reported by File.Tensor as
// no copy under every policy. Tensors with elements that are read are flagged as copies.
func TestEmptyTensorsAreNoCopy(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, safetensorsx.Write(&buf, map[string]*core.Tensor{
		"empty": core.MustNew(core.Float32, 0, 3),
		"x":     core.MustFromSlice([]float32{1, 2}),
	}, nil))
	ways := readAllWays(t, buf.Bytes())
	r, err := safetensorsx.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	require.NoError(t, err)
	ways["Reader.Tensor"] = map[string]*core.Tensor{}
	for _, name := range []string{"empty", "x"} {
		ways["Reader.Tensor"][name], err = r.Tensor(name)
		require.NoError(t, err)
	}
	for way, ts := range ways {
		assert.Zero(t, ts["empty"].Flags()&core.FlagIsCopied, "%s: an empty tensor flagged as a copy", way)
		assert.Equal(t, []int64{0, 3}, ts["empty"].Shape(), way)
		assert.NotZero(t, ts["x"].Flags()&core.FlagIsCopied, "%s: a tensor read not flagged as a copy", way)
	}

	path := filepath.Join(t.TempDir(), "e.safetensors")
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
	for _, policy := range []adapters.Option{nil, adapters.ZeroCopyOnly(), adapters.AlwaysCopy()} {
		copied := true
		f, err := safetensorsx.Open(path, policy, adapters.ReportCopy(&copied))
		require.NoError(t, err)
		e, err := f.Tensor("empty")
		require.NoError(t, err)
		assert.False(t, copied, "File.Tensor reported a copy of an empty tensor")
		assert.Zero(t, e.Flags()&core.FlagIsCopied, "File.Tensor flagged an empty tensor as a copy")
		require.NoError(t, f.Close())
	}
}
