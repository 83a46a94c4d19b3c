package ggufx_test

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/adapters/adaptertest/errstest"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/ggufx"
)

// writeShards writes a model of count shards, shard i holding tensor "t<i>" of [i+1] float32
// i+1, as llama.cpp's gguf-split names and marks them; fix may change a shard's metadata.
func writeShards(t *testing.T, dir string, count int, fix func(no int, md *ggufx.Metadata)) string {
	prefix := filepath.Join(dir, "model")
	for no := range count {
		md := &ggufx.Metadata{}
		if no == 0 {
			require.NoError(t, md.Set("general.architecture", "llama"))
			require.NoError(t, md.Set(ggufx.SplitTensorsCountKey, int32(count)))
		}
		require.NoError(t, md.Set(ggufx.SplitNoKey, uint16(no)))
		require.NoError(t, md.Set(ggufx.SplitCountKey, uint16(count)))
		if fix != nil {
			fix(no, md)
		}
		x := make([]float32, no+1)
		for i := range x {
			x[i] = float32(no + 1)
		}
		es := []ggufx.Entry{ggufx.Plain("t"+string(rune('0'+no)), core.MustFromSlice(x))}
		if fix != nil && no == count-1 {
			if _, dup := md.Get("dup"); dup {
				es = append(es, ggufx.Plain("t0", core.MustFromSlice([]float32{0})))
			}
		}
		require.NoError(t, ggufx.WriteFile(ggufx.SplitPath(prefix, no, count), md, es))
	}
	return ggufx.SplitPath(prefix, 0, count)
}

func TestOpenSplit(t *testing.T) {
	first := writeShards(t, t.TempDir(), 3, nil)
	assert.Equal(t, "model-00001-of-00003.gguf", filepath.Base(first))
	s, err := ggufx.OpenSplit(first)
	require.NoError(t, err)
	defer s.Close()
	assert.Len(t, s.Files(), 3)
	assert.Equal(t, []string{"t0", "t1", "t2"}, s.Names())
	arch, err := s.Metadata().String("general.architecture")
	require.NoError(t, err)
	assert.Equal(t, "llama", arch)
	x, err := s.Tensor("t2")
	require.NoError(t, err)
	v, err := x.ReadOnlyFloat32s()
	require.NoError(t, err)
	assert.Equal(t, []float32{3, 3, 3}, v)
	_, err = s.Tensor("t9")
	require.ErrorIs(t, err, ggufx.ErrNotFound)

	// a plain file is a model of one shard
	one := filepath.Join(t.TempDir(), "one.gguf")
	require.NoError(t, ggufx.WriteFile(one, nil, []ggufx.Entry{ggufx.Plain("w", core.MustNew(core.Int8, 2))}))
	s1, err := ggufx.OpenSplit(one)
	require.NoError(t, err)
	assert.Equal(t, []string{"w"}, s1.Names())
	require.NoError(t, s1.Close())
}

func TestOpenSplitRefuses(t *testing.T) {
	// files of earlier tests that nothing closed are let go by their cleanups first
	require.Eventually(t, func() bool { runtime.GC(); return ggufx.LiveMappings() == 0 }, 5*time.Second, 10*time.Millisecond)
	live := int64(0)
	for _, tc := range []struct {
		name string
		fix  func(no int, md *ggufx.Metadata)
		rm   int // a shard to remove (-1: none)
		msg  string
	}{
		{"missing", nil, 2, "shard 3 of 3"},
		{"number", func(no int, md *ggufx.Metadata) { md.Set(ggufx.SplitNoKey, uint16(no%2)) }, -1, "should be shard 2 (split.no): it says 0"},
		{"count", func(no int, md *ggufx.Metadata) {
			if no == 1 {
				md.Set(ggufx.SplitCountKey, uint16(4))
			}
		}, -1, "should count 3 shards"},
		{"count type", func(no int, md *ggufx.Metadata) { md.Set(ggufx.SplitCountKey, uint32(3)) }, -1, "is uint32, not uint16"},
		{"tensors", func(no int, md *ggufx.Metadata) {
			if no == 0 {
				md.Set(ggufx.SplitTensorsCountKey, int32(5))
			}
		}, -1, "says 5 tensors, the shards hold 3"},
		{"duplicate", func(no int, md *ggufx.Metadata) {
			if no == 2 {
				md.Set("dup", true)
			}
		}, -1, `tensor "t0" is in shard 0 and shard 2`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			first := writeShards(t, dir, 3, tc.fix)
			if tc.rm >= 0 {
				require.NoError(t, os.Remove(ggufx.SplitPath(filepath.Join(dir, "model"), tc.rm, 3)))
			}
			_, err := ggufx.OpenSplit(first)
			require.ErrorIs(t, err, ggufx.ErrSplit)
			assert.Contains(t, err.Error(), tc.msg)
			assert.NoError(t, errstest.Check(err, sentinels...))
			assert.Equal(t, live, ggufx.LiveMappings(), "the shards opened are closed")
		})
	}
	// the second shard is not the first
	dir := t.TempDir()
	writeShards(t, dir, 2, nil)
	_, err := ggufx.OpenSplit(ggufx.SplitPath(filepath.Join(dir, "model"), 1, 2))
	require.ErrorIs(t, err, ggufx.ErrSplit)
	assert.Contains(t, err.Error(), "is not the first of 2 shards")
}
