package parsercheck_test

import (
	"testing"

	gguf "github.com/gpustack/gguf-parser-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/ggufx"
)

// TestParserDepartures pins down where gguf-parser-go v0.28.1 reads a valid file otherwise
// than the format says (and than ggufx and llama.cpp's gguf.cpp read it), which is why the
// other tests write no such file. If an upgrade of the parser makes a case fail, the parser
// has changed: the case (and its exclusion from the comparisons) can go.
func TestParserDepartures(t *testing.T) {
	cases := []struct {
		name  string
		md    []kv
		es    func(t *testing.T) []ggufx.Entry
		check func(t *testing.T, f *ggufx.File, gf *gguf.GGUFFile, err error)
	}{
		{
			// ReadString returns bytes.TrimSpace of what it read.
			name: "trims white space around strings",
			md:   []kv{{" ws.key\t", "  padded\n"}, {"ws.array", []string{" a ", "b"}}},
			es: func(t *testing.T) []ggufx.Entry {
				return []ggufx.Entry{ggufx.Plain(" w ", core.MustFromSlice([]float32{1, 2}, 2))}
			},
			check: func(t *testing.T, f *ggufx.File, gf *gguf.GGUFFile, err error) {
				require.NoError(t, err)
				assert.Equal(t, []string{" ws.key\t", "ws.array"}, f.Metadata().Keys(), "ggufx keeps the key")
				s, err := f.Metadata().String(" ws.key\t")
				require.NoError(t, err)
				assert.Equal(t, "  padded\n", s, "ggufx keeps the value")
				ss, err := f.Metadata().Strings("ws.array")
				require.NoError(t, err)
				assert.Equal(t, []string{" a ", "b"}, ss)
				assert.Equal(t, " w ", f.Tensors()[0].Name)

				require.Len(t, gf.Header.MetadataKV, 2)
				assert.Equal(t, "ws.key", gf.Header.MetadataKV[0].Key, "the parser trims the key")
				assert.Equal(t, "padded", gf.Header.MetadataKV[0].ValueString(), "and the value")
				assert.Equal(t, []string{"a", "b"}, gf.Header.MetadataKV[1].ValueArray().ValuesString(), "and array items")
				assert.Equal(t, "w", gf.TensorInfos[0].Name, "and tensor names")
			},
		},
		{
			// The tensor info reader requires 1 to 4 dimensions; gguf.cpp takes 0 to
			// GGML_MAX_DIMS (its ne[] start at 1: a rank-0 tensor is one element).
			name: "refuses rank 0",
			es: func(t *testing.T) []ggufx.Entry {
				return []ggufx.Entry{ggufx.Plain("scalar", core.Scalar(float32(2.5)))}
			},
			check: func(t *testing.T, f *ggufx.File, gf *gguf.GGUFFile, err error) {
				require.Len(t, f.Tensors(), 1)
				ti := f.Tensors()[0]
				assert.Empty(t, ti.Dims, "ggufx writes and reads rank 0")
				assert.Equal(t, int64(1), ti.Len())
				assert.Equal(t, int64(4), ti.Size)
				require.Error(t, err, "the parser refuses the file")
				assert.Contains(t, err.Error(), "invalid n dimensions: 0")
				assert.Nil(t, gf)
			},
		},
		{
			// parseGGUFFile leaves split.no out of the metadata and the count.
			name: "drops split.no",
			md:   []kv{{"general.architecture", "llama"}, {"split.no", uint16(0)}, {"split.count", uint16(1)}},
			check: func(t *testing.T, f *ggufx.File, gf *gguf.GGUFFile, err error) {
				require.NoError(t, err)
				assert.Equal(t, []string{"general.architecture", "split.no", "split.count"}, f.Metadata().Keys())
				assert.Equal(t, uint64(2), gf.Header.MetadataKVCount)
				keys := make([]string, len(gf.Header.MetadataKV))
				for i, p := range gf.Header.MetadataKV {
					keys[i] = p.Key
				}
				assert.Equal(t, []string{"general.architecture", "split.count"}, keys)
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var es []ggufx.Entry
			if c.es != nil {
				es = c.es(t)
			}
			path := writeFile(t, metadata(t, c.md), es)
			f, err := ggufx.Open(path)
			require.NoError(t, err)
			defer f.Close()
			gf, err := gguf.ParseGGUFFile(path)
			c.check(t, f, gf, err)
		})
	}
}
