package safetensorsx_test

// FuzzParseHeaderJSON checks the header parser against encoding/json, a JSON reader that is not
// ours: what encoding/json reads as a header of the format (with the format's rules applied to
// what it decoded) ParseHeader must read the same, and what it refuses ParseHeader must refuse.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/safetensorsx"
)

// jsonFault is why the oracle refuses a header: its kind is the sentinel ParseHeader's error must
// wrap where this is the header's only fault.
type jsonFault struct {
	kind error
	why  string
}

func (f *jsonFault) Error() string { return f.why }

func fault(kind error, format string, args ...any) *jsonFault {
	return &jsonFault{kind: kind, why: fmt.Sprintf(format, args...)}
}

// uintNumber is a JSON number that is a non-negative integer: no sign, fraction or exponent.
var uintNumber = regexp.MustCompile(`^(0|[1-9][0-9]*)$`)

// maxDepth is how deep the format lets JSON values nest (ParseHeader's documentation).
const maxDepth = 64

// jsonString decodes a JSON string token; encoding/json turns a lone surrogate escape into
// U+FFFD, which the format's reference reader (serde_json) refuses instead.
func jsonString(raw json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fault(safetensorsx.ErrHeader, "want a string: %v", err)
	}
	if strings.ContainsRune(s, utf8.RuneError) && !bytes.Contains(raw, []byte("\uFFFD")) &&
		!bytes.Contains(bytes.ToLower(raw), []byte(`\ufffd`)) {
		return "", fault(safetensorsx.ErrHeader, "a lone surrogate in %s", raw)
	}
	return s, nil
}

// members decodes a JSON object into its members in order, refusing what is not an object.
func members(raw json.RawMessage) (keys []string, vals []json.RawMessage, err error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	tok, err := d.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, nil, fault(safetensorsx.ErrHeader, "want an object, found %.20s", raw)
	}
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return nil, nil, fault(safetensorsx.ErrHeader, "%v", err)
		}
		var v json.RawMessage
		if err := d.Decode(&v); err != nil {
			return nil, nil, fault(safetensorsx.ErrHeader, "%v", err)
		}
		keys, vals = append(keys, tok.(string)), append(vals, v)
	}
	return keys, vals, nil
}

// rawKeys lists the keys of the JSON object raw as written (their escapes kept), in order.
func rawKeys(raw json.RawMessage) []json.RawMessage {
	var out []json.RawMessage
	d := json.NewDecoder(bytes.NewReader(raw))
	d.Token() // '{'
	for d.More() {
		start := d.InputOffset()
		d.Token()
		key := bytes.TrimLeft(raw[start:d.InputOffset()], " \t\r\n,")
		out = append(out, key)
		var v json.RawMessage
		d.Decode(&v)
	}
	return out
}

// depth is how deep the arrays and objects of the valid JSON text b nest.
func depth(b []byte) int {
	d, most, in, esc := 0, 0, false, false
	for _, c := range b {
		switch {
		case esc:
			esc = false
		case in && c == '\\':
			esc = true
		case c == '"':
			in = !in
		case !in && (c == '{' || c == '['):
			d++
			most = max(most, d)
		case !in && (c == '}' || c == ']'):
			d--
		}
	}
	return most
}

// uints decodes a JSON array of non-negative integers that fit an int64.
func uints(raw json.RawMessage, what string) ([]int64, error) {
	var nums []json.RawMessage
	if err := json.Unmarshal(raw, &nums); err != nil || nums == nil {
		return nil, fault(safetensorsx.ErrHeader, "%s: want an array, found %.20s", what, raw)
	}
	out := make([]int64, 0, len(nums))
	for _, n := range nums {
		if !uintNumber.Match(n) {
			return nil, fault(safetensorsx.ErrHeader, "%s: want a non-negative integer, found %.20s", what, n)
		}
		v, err := strconv.ParseInt(string(n), 10, 64)
		if err != nil {
			return nil, fault(safetensorsx.ErrHeader, "%s: %v", what, err)
		}
		out = append(out, v)
	}
	return out, nil
}

// oracleHeader reads b as a safetensors header with encoding/json and the format's rules: the
// tensors in the order of their data, the metadata, the data length; or why not.
func oracleHeader(b []byte) (*safetensorsx.Header, error) {
	if !utf8.Valid(b) {
		return nil, fault(safetensorsx.ErrHeader, "not UTF-8")
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var top json.RawMessage
	if err := d.Decode(&top); err != nil {
		return nil, fault(safetensorsx.ErrHeader, "%v", err)
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, fault(safetensorsx.ErrHeader, "more after the header object")
	}
	if depth(top) > maxDepth {
		return nil, fault(safetensorsx.ErrHeader, "nested more than %d deep", maxDepth)
	}
	keys, vals, err := members(top)
	if err != nil {
		return nil, err
	}
	for _, k := range rawKeys(top) {
		if _, err := jsonString(k); err != nil {
			return nil, err
		}
	}
	h := &safetensorsx.Header{Tensors: []safetensorsx.TensorInfo{}}
	var dtypeFault error // a dtype the format does not name: refused once the JSON is all read
	seen := map[string]bool{}
	for i, k := range keys {
		if seen[k] {
			return nil, fault(safetensorsx.ErrHeader, "key %q twice", k)
		}
		seen[k] = true
		if k == "__metadata__" {
			if string(vals[i]) == "null" {
				continue
			}
			mk, mv, err := members(vals[i])
			if err != nil {
				return nil, err
			}
			for _, rk := range rawKeys(vals[i]) {
				if _, err := jsonString(rk); err != nil {
					return nil, err
				}
			}
			h.Metadata = map[string]string{}
			for j, k := range mk {
				if _, dup := h.Metadata[k]; dup {
					return nil, fault(safetensorsx.ErrHeader, "metadata key %q twice", k)
				}
				if h.Metadata[k], err = jsonString(mv[j]); err != nil {
					return nil, err
				}
			}
			continue
		}
		ti := safetensorsx.TensorInfo{Name: k}
		fk, fv, err := members(vals[i])
		if err != nil {
			return nil, err
		}
		got := map[string]bool{}
		for j, f := range fk {
			switch f {
			case "dtype", "shape", "data_offsets":
				if got[f] {
					return nil, fault(safetensorsx.ErrHeader, "tensor %q: %q twice", k, f)
				}
				got[f] = true
			default: // other members are ignored, as the reference reader ignores them
				continue
			}
			switch f {
			case "dtype":
				if ti.Format, err = jsonString(fv[j]); err != nil {
					return nil, err
				}
				if ti.DType, err = safetensorsx.FromDType(ti.Format); err != nil && dtypeFault == nil {
					dtypeFault = fault(safetensorsx.ErrUnsupportedDType, "tensor %q: dtype %q", k, ti.Format)
				}
			case "shape":
				if ti.Shape, err = uints(fv[j], "shape"); err != nil {
					return nil, err
				}
				if len(ti.Shape) > core.MaxNdim {
					return nil, fault(safetensorsx.ErrHeader, "tensor %q: %d dimensions", k, len(ti.Shape))
				}
			case "data_offsets":
				off, err := uints(fv[j], "data_offsets")
				if err != nil {
					return nil, err
				}
				if len(off) != 2 {
					return nil, fault(safetensorsx.ErrHeader, "tensor %q: %d data_offsets", k, len(off))
				}
				ti.Begin, ti.End = off[0], off[1]
			}
		}
		if len(got) != 3 {
			return nil, fault(safetensorsx.ErrHeader, "tensor %q lacks a member", k)
		}
		h.Tensors = append(h.Tensors, ti)
	}
	if dtypeFault != nil {
		return nil, dtypeFault
	}
	// the layout: each range as long as its shape needs, the ranges tiling [0, DataLen)
	for _, ti := range h.Tensors {
		n, err := core.CompactSize(core.Uint8, ti.Shape...) // the element count, checked for overflow
		if err != nil {
			return nil, fault(safetensorsx.ErrLayout, "tensor %q: shape %v: %v", ti.Name, ti.Shape, err)
		}
		bits := uint64(ti.DType.Bits) * uint64(ti.DType.Lanes)
		if n > 0 && uint64(n) > (1<<63-1)/bits {
			return nil, fault(safetensorsx.ErrLayout, "tensor %q: too many bits", ti.Name)
		}
		if nb := uint64(n) * bits; nb%8 != 0 || ti.End < ti.Begin || uint64(ti.End-ti.Begin) != nb/8 {
			return nil, fault(safetensorsx.ErrLayout, "tensor %q: [%d, %d] for %v of %s", ti.Name, ti.Begin, ti.End, ti.Shape, ti.Format)
		}
	}
	slices.SortStableFunc(h.Tensors, func(a, b safetensorsx.TensorInfo) int {
		if a.Begin != b.Begin {
			return int(min(max(a.Begin-b.Begin, -1), 1))
		}
		return int(min(max(a.End-b.End, -1), 1))
	})
	for _, ti := range h.Tensors {
		if ti.Begin != h.DataLen {
			return nil, fault(safetensorsx.ErrLayout, "tensor %q at %d, the data so far ends at %d", ti.Name, ti.Begin, h.DataLen)
		}
		h.DataLen = ti.End
	}
	return h, nil
}

// FuzzParseHeaderJSON: ParseHeader accepts exactly the headers encoding/json reads as the
// format describes them, with the same tensors (in data order), metadata and data length; where
// the JSON is sound and only the dtypes or the layout are wrong, it refuses them with the same
// sentinel (ErrUnsupportedDType, ErrLayout), and otherwise with one of the package's sentinels.
func FuzzParseHeaderJSON(f *testing.F) {
	f.Add([]byte(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{}}`))
	f.Add([]byte(`{"__metadata__":{"k":"\ud83d\ude00"},"x":{"dtype":"F4","shape":[2],"data_offsets":[0,1]}}`))
	f.Add([]byte(`{"b":{"data_offsets":[8,12],"shape":[],"dtype":"F32","x":[{}]},"a":{"dtype":"I32","shape":[2],"data_offsets":[0,8]},"__metadata__":null}`))
	f.Add([]byte(`{"\u0061\n":{"dtype":"U8","shape":[2, 3 ],"data_offsets":[0,6], "y":-1.5e3}, "__metadata__":{"a":"b"}}`))
	f.Add([]byte(`{"a":{"dtype":"F32","shape":[01],"data_offsets":[0,4]}}`))
	f.Add([]byte(`{"a":{"dtype":"F32","shape":[9223372036854775808],"data_offsets":[0,4]}}`))
	f.Add([]byte(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4,5]}}`))
	f.Add([]byte(`{"a":{"dtype":"F32","shape":[],"data_offsets":[0,4]}}`))
	f.Add([]byte(`{"a":{"dtype":"F32","shape":[1,],"data_offsets":[0,4]}}`))
	f.Add([]byte(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"x":1}}`))
	f.Add([]byte(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]} ,"b": {"dtype":"U8","shape":[0],"data_offsets":[4,4]}}`))
	f.Add([]byte(`{"a":{"dtype":"F3","shape":[1],"data_offsets":[0,4]}}`))
	f.Add([]byte(`{"a":{"dtype":"F32\u0020","shape":[1],"data_offsets":[0,4]}}`))
	f.Add([]byte(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[00,4]}}`))
	f.Add([]byte(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]`))
	f.Add([]byte(`{"a":{"dtype":"F32","shape":[` + strings.Repeat("1,", 64) + `1],"data_offsets":[0,4]}}`))
	f.Add([]byte(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,99999999999999999999]}}`))
	f.Add([]byte(`{"\ud800":{"dtype":"U8","shape":[0],"data_offsets":[0,0]}}`))
	f.Add([]byte(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"x":` + strings.Repeat("[", 63) + strings.Repeat("]", 63) + `}}`))
	f.Add([]byte(`{"b":{"dtype":"U8","shape":[0],"data_offsets":[0,0]},"a":{"dtype":"U8","shape":[0],"data_offsets":[0,0]}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		want, wantErr := oracleHeader(b)
		got, err := safetensorsx.ParseHeader(b)
		if wantErr != nil {
			require.Error(t, err, "encoding/json's reading refuses it: %v", wantErr)
			var fl *jsonFault
			require.True(t, errors.As(wantErr, &fl))
			if fl.kind != safetensorsx.ErrHeader {
				require.ErrorIs(t, err, fl.kind, "the only fault: %v", wantErr)
			} else {
				require.True(t, errors.Is(err, safetensorsx.ErrHeader) || errors.Is(err, safetensorsx.ErrLayout) ||
					errors.Is(err, safetensorsx.ErrUnsupportedDType), "%v", err)
			}
			return
		}
		require.NoError(t, err, "encoding/json's reading accepts it")
		require.Equal(t, len(want.Tensors), len(got.Tensors))
		for i := range want.Tensors {
			w, g := want.Tensors[i], got.Tensors[i]
			require.Equal(t, w.Name, g.Name)
			require.Equal(t, w.Format, g.Format)
			require.Equal(t, w.DType, g.DType)
			require.Equal(t, len(w.Shape), len(g.Shape))
			require.True(t, slices.Equal(w.Shape, g.Shape), "%v %v", w.Shape, g.Shape)
			require.Equal(t, [2]int64{w.Begin, w.End}, [2]int64{g.Begin, g.End})
			lt, ok := got.Lookup(w.Name)
			require.True(t, ok)
			require.Equal(t, g.Begin, lt.Begin)
		}
		require.Equal(t, want.Metadata, got.Metadata)
		require.Equal(t, want.DataLen, got.DataLen)
	})
}
