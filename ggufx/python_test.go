package ggufx_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/ggufx"
	"github.com/dlpack-go/dlpack/internal/pyrun"
)

// refWriter is an independent GGUF writer, written in Python with NumPy from the format's
// specification (ggml's docs/gguf.md) and ggml's block layouts, sharing nothing with this
// package. Into argv[1] it writes v3.gguf (version 3, general.alignment 64, tensor data in the
// reverse order of the infos) and v2.gguf (version 2, default alignment), each with metadata of
// every type and nested arrays, tensors of every plain type, random blocks of every
// dequantized type with NumPy's own dequantization of them (a third reading of ggml's formulas,
// vectorised), and the Q8_0 and Q4_0 quantizations of qin by ggml's reference rules. It prints
// a JSON manifest.
const refWriter = `
import sys, os, json, struct
import numpy as np
out = sys.argv[1]
rng = np.random.default_rng(11)
f32 = np.float32

def halves(n):  # finite halves, most near 1
    h = rng.integers(0, 1 << 16, n).astype(np.uint16) & 0x83ff
    h |= (rng.integers(8, 22, n).astype(np.uint16) << 10)
    return h

def blocks(typ, nb):
    size = {'Q4_0': 18, 'Q4_1': 20, 'Q5_0': 22, 'Q5_1': 24, 'Q8_0': 34, 'Q2_K': 84, 'Q3_K': 110,
            'Q4_K': 144, 'Q5_K': 176, 'Q6_K': 210}[typ]
    b = rng.integers(0, 256, (nb, size)).astype(np.uint8)
    where = {'Q4_0': [0], 'Q4_1': [0, 2], 'Q5_0': [0], 'Q5_1': [0, 2], 'Q8_0': [0], 'Q2_K': [80, 82],
             'Q3_K': [108], 'Q4_K': [0, 2], 'Q5_K': [0, 2], 'Q6_K': [208]}[typ]
    for w in where:
        b[:, w:w+2] = halves(nb).view(np.uint8).reshape(nb, 2)
    return b

def h(b, at):  # the half at byte at of every block, as float32, shape (nb, 1)
    return np.ascontiguousarray(b[:, at:at+2]).view('<f2').astype(f32)

def nibbles(qs):  # 16 bytes -> 32 values: low nibbles first, then high
    return np.concatenate([qs & 15, qs >> 4], axis=1).astype(np.int32)

def qh_bits(b, at):
    qh = np.ascontiguousarray(b[:, at:at+4]).view('<u4').astype(np.int64)
    return ((qh >> np.arange(32)) & 1).astype(np.int32)

def k4(sc, j):  # get_scale_min_k4 on (nb, 12) bytes
    sc = sc.astype(np.int32)
    if j < 4:
        return sc[:, j] & 63, sc[:, j + 4] & 63
    return (sc[:, j + 4] & 15) | ((sc[:, j - 4] >> 6) << 4), (sc[:, j + 4] >> 4) | ((sc[:, j] >> 6) << 4)

def dequant(typ, b):
    nb = b.shape[0]
    if typ == 'Q4_0':
        return (nibbles(b[:, 2:18]) - 8).astype(f32) * h(b, 0)
    if typ == 'Q4_1':
        return nibbles(b[:, 4:20]).astype(f32) * h(b, 0) + h(b, 2)
    if typ == 'Q5_0':
        return ((nibbles(b[:, 6:22]) | (qh_bits(b, 2) << 4)) - 16).astype(f32) * h(b, 0)
    if typ == 'Q5_1':
        return (nibbles(b[:, 8:24]) | (qh_bits(b, 4) << 4)).astype(f32) * h(b, 0) + h(b, 2)
    if typ == 'Q8_0':
        return b[:, 2:34].view(np.int8).astype(f32) * h(b, 0)
    y = np.zeros((nb, 256), f32)
    if typ == 'Q2_K':
        sc, qs, d, dmin = b[:, 0:16].astype(np.int32), b[:, 16:80].astype(np.int32), h(b, 80), h(b, 82)
        for s in range(16):  # sub-block of 16
            n, g, half = s // 8, (s % 8) // 2, s % 2
            q = (qs[:, 32*n + 16*half: 32*n + 16*half + 16] >> (2*g)) & 3
            dl = d[:, 0] * (sc[:, s] & 15).astype(f32)
            ml = dmin[:, 0] * (sc[:, s] >> 4).astype(f32)
            y[:, 16*s:16*s+16] = dl[:, None] * q.astype(f32) - ml[:, None]
        return y
    if typ == 'Q3_K':
        hm, qs, raw, d = b[:, 0:32].astype(np.int32), b[:, 32:96].astype(np.int32), b[:, 96:108].astype(np.int32), h(b, 108)
        for s in range(16):
            low = (raw[:, s % 8] >> (4 * (s // 8))) & 15
            high = (raw[:, 8 + s % 4] >> (2 * (s // 4))) & 3
            scale = (low | (high << 4)) - 32
            n, g, half = s // 8, (s % 8) // 2, s % 2
            q = (qs[:, 32*n + 16*half: 32*n + 16*half + 16] >> (2*g)) & 3
            hb = (hm[:, 16*half:16*half+16] >> (4*n + g)) & 1
            q = q - 4 * (1 - hb)
            y[:, 16*s:16*s+16] = (d[:, 0] * scale.astype(f32))[:, None] * q.astype(f32)
        return y
    if typ in ('Q4_K', 'Q5_K'):
        d, dmin, sc = h(b, 0), h(b, 2), b[:, 4:16]
        qs = (b[:, 16:144] if typ == 'Q4_K' else b[:, 48:176]).astype(np.int32)
        qh = b[:, 16:48].astype(np.int32)
        for s in range(8):
            c, part = s // 2, s % 2
            q = (qs[:, 32*c:32*c+32] >> (4*part)) & 15
            if typ == 'Q5_K':
                q = q + 16 * ((qh >> s) & 1)
            scale, m = k4(sc, s)
            dl = d[:, 0] * scale.astype(f32)
            ml = dmin[:, 0] * m.astype(f32)
            y[:, 32*s:32*s+32] = dl[:, None] * q.astype(f32) - ml[:, None]
        return y
    if typ == 'Q6_K':
        ql, qh, sc, d = b[:, 0:128].astype(np.int32), b[:, 128:192].astype(np.int32), b[:, 192:208].view(np.int8).astype(np.int32), h(b, 208)
        for e0 in range(0, 256, 16):
            n, k, l0 = e0 // 128, (e0 % 128) // 32, e0 % 32
            lo = (ql[:, 64*n + 32*(k % 2) + l0: 64*n + 32*(k % 2) + l0 + 16] >> (4 * (k // 2))) & 15
            hi = (qh[:, 32*n + l0: 32*n + l0 + 16] >> (2*k)) & 3
            q = (lo | (hi << 4)) - 32
            y[:, e0:e0+16] = (d[:, 0] * sc[:, e0 // 16].astype(f32))[:, None] * q.astype(f32)
        return y

def roundf(x):  # C's roundf: halves away from zero
    x = x.astype(np.float64)
    return np.where(x >= 0, np.floor(x + 0.5), np.ceil(x - 0.5))

def q8_0(x):
    x = x.reshape(-1, 32)
    amax = np.abs(x).max(axis=1)
    d = (amax / f32(127)).astype(f32)
    idd = np.zeros_like(d)
    np.divide(f32(1), d, out=idd, where=d != 0)
    q = roundf(x * idd[:, None]).astype(np.int8)
    return np.concatenate([d.astype('<f2').view(np.uint8).reshape(-1, 2), q.view(np.uint8)], axis=1)

def q4_0(x):
    x = x.reshape(-1, 32)
    mx = x[np.arange(x.shape[0]), np.argmax(np.abs(x), axis=1)]
    d = (mx / f32(-8)).astype(f32)
    idd = np.zeros_like(d)
    np.divide(f32(1), d, out=idd, where=d != 0)
    xi = np.minimum(15, np.trunc((x * idd[:, None] + f32(8.5)).astype(f32)).astype(np.int32))
    qs = (xi[:, :16] | (xi[:, 16:] << 4)).astype(np.uint8)
    return np.concatenate([d.astype('<f2').view(np.uint8).reshape(-1, 2), qs], axis=1)

# metadata: (key, type, value); arrays: (key, 9, (elemtype, [values]))
T = dict(u8=0, i8=1, u16=2, i16=3, u32=4, i32=5, f32=6, bool=7, str=8, arr=9, u64=10, i64=11, f64=12)
FMT = {0: '<B', 1: '<b', 2: '<H', 3: '<h', 4: '<I', 5: '<i', 6: '<f', 7: '<?', 10: '<Q', 11: '<q', 12: '<d'}

def enc_str(s):
    b = s.encode('utf-8')
    return struct.pack('<Q', len(b)) + b

def enc_val(t, v):
    if t == 8:
        return enc_str(v)
    if t == 9:
        et, vs = v
        return struct.pack('<IQ', et, len(vs)) + b''.join(enc_val(et, x) for x in vs)
    return struct.pack(FMT[t], v)

def jval(t, v):  # the manifest's form: floats as their bits in hex, 64-bit ints as strings
    if t == 6:
        return struct.pack('<f', v).hex()
    if t == 12:
        return struct.pack('<d', v).hex()
    if t in (10, 11):
        return str(v)
    if t == 9:
        et, vs = v
        return {'elem': et, 'values': [jval(et, x) for x in vs]}
    return v

def write(path, version, align, reverse_data):
    meta = [('general.architecture', 8, 'llama'), ('general.name', 8, 'r\u00e9f \u2603'),
            ('u8', 0, 255), ('i8', 1, -128), ('u16', 2, 65535), ('i16', 3, -32768), ('u32', 4, 4294967295),
            ('i32', 5, -2147483648), ('f32', 6, 3.14159), ('bool', 7, True), ('bool.f', 7, False),
            ('u64', 10, 2**64 - 1), ('i64', 11, -2**63), ('f64', 12, -1e-300), ('empty', 8, ''),
            ('tokenizer.ggml.tokens', 9, (8, ['<s>', '</s>', '\u2581the', ''])),
            ('tokenizer.ggml.scores', 9, (6, [0.0, -1.5, 2.25, -0.0])),
            ('tokenizer.ggml.token_type', 9, (5, [1, 3, 1, 6])), ('a.u8', 9, (0, [0, 255])),
            ('a.bool', 9, (7, [True, False])), ('a.u64', 9, (10, [2**64 - 1])), ('a.f64', 9, (12, [1.5])),
            ('a.none', 9, (4, [])), ('a.nested', 9, (9, [(5, [1, -2]), (5, []), (8, ['x'])]))]
    if align != 32:
        meta.append(('general.alignment', 4, align))
    tensors = []  # (name, type name, ggml type, dims innermost first, data bytes, deq or None)
    plain = [('F32', 0, '<f4'), ('F16', 1, '<f2'), ('F64', 28, '<f8'), ('I8', 24, '<i1'), ('I16', 25, '<i2'),
             ('I32', 26, '<i4'), ('I64', 27, '<i8')]
    shapes = [[7], [3, 5], [2, 3, 4], [2, 1, 3, 2]]
    for i, (tn, tt, dt) in enumerate(plain):
        dims = shapes[i % len(shapes)]
        n = int(np.prod(dims))
        d = np.dtype(dt)
        if d.kind == 'f':
            a = (rng.standard_normal(n) * 100).astype(d)
        else:
            info = np.iinfo(d)
            a = rng.integers(info.min, info.max, n, dtype=d, endpoint=True)
        tensors.append(('p.' + tn.lower(), tn, tt, dims, a.tobytes(), None))
    bf = rng.integers(0, 1 << 16, 12).astype('<u2')
    tensors.append(('p.bf16', 'BF16', 30, [4, 3], bf.tobytes(), None))
    tensors.append(('p.empty', 'F32', 0, [0, 5], b'', None))
    qt = [('Q4_0', 2, 32), ('Q4_1', 3, 32), ('Q5_0', 6, 32), ('Q5_1', 7, 32), ('Q8_0', 8, 32), ('Q2_K', 10, 256),
          ('Q3_K', 11, 256), ('Q4_K', 12, 256), ('Q5_K', 13, 256), ('Q6_K', 14, 256)]
    for tn, tt, bs in qt:
        b = blocks(tn, 6)
        y = dequant(tn, b).astype(f32)
        tensors.append(('q.' + tn.lower(), tn, tt, [2 * bs, 3], b.tobytes(), y))
    qin = (rng.standard_normal(32 * 8) * 3).astype(f32)
    qin[32:64] = 0          # a block of zeros: d = 0
    qin[64:96] = f32(-2.5)  # a block of one value
    qin[96] = f32(1e-3); qin[97:128] = f32(1e-4)
    hdr = b'GGUF' + struct.pack('<I', version) + struct.pack('<QQ', len(tensors), len(meta))
    for k, t, v in meta:
        hdr += enc_str(k) + struct.pack('<I', t) + enc_val(t, v)
    offs, at = {}, 0
    order = list(reversed(tensors)) if reverse_data else tensors
    for tn in order:
        offs[tn[0]] = at
        at += len(tn[4]) + (-len(tn[4]) % align)
    for name, _, tt, dims, data, _ in tensors:
        hdr += enc_str(name) + struct.pack('<I', len(dims)) + b''.join(struct.pack('<Q', d) for d in dims)
        hdr += struct.pack('<IQ', tt, offs[name])
    hdr += b'\0' * (-len(hdr) % align)
    with open(path, 'wb') as f:
        f.write(hdr)
        for tn in order:
            f.write(tn[4] + b'\0' * (-len(tn[4]) % align))
    mani = {'meta': [[k, t, jval(t, v)] for k, t, v in meta], 'align': align, 'version': version, 'tensors': []}
    for i, (name, tn, tt, dims, data, y) in enumerate(tensors):
        rp = path + '.%d.raw' % i
        open(rp, 'wb').write(data)
        e = {'name': name, 'type': tn, 'dims': dims, 'raw': rp}
        if y is not None:
            open(rp + '.f32', 'wb').write(y.tobytes())
            open(rp + '.f16', 'wb').write(y.astype('<f2').tobytes())
            e['deq'] = rp + '.f32'
            e['deq16'] = rp + '.f16'
        mani['tensors'].append(e)
    open(path + '.qin', 'wb').write(qin.tobytes())
    open(path + '.q8_0', 'wb').write(q8_0(qin).tobytes())
    open(path + '.q4_0', 'wb').write(q4_0(qin).tobytes())
    return mani

print(json.dumps({'v3': write(os.path.join(out, 'v3.gguf'), 3, 64, True),
                  'v2': write(os.path.join(out, 'v2.gguf'), 2, 32, False)}))
`

type refManifest struct {
	Meta    [][3]json.RawMessage `json:"meta"`
	Align   int64                `json:"align"`
	Version uint32               `json:"version"`
	Tensors []struct {
		Name  string  `json:"name"`
		Type  string  `json:"type"`
		Dims  []int64 `json:"dims"`
		Raw   string  `json:"raw"`
		Deq   string  `json:"deq"`
		Deq16 string  `json:"deq16"`
	} `json:"tensors"`
}

// manifestForm is v in the manifest's form: floats as the hex of their little-endian bits,
// 64-bit integers as decimal strings, arrays as {"elem", "values"}.
func manifestForm(v ggufx.Value) any {
	hexLE := func(bits uint64, n int) string {
		var sb strings.Builder
		for i := range n {
			sb.WriteString(strconv.FormatUint(bits>>(8*i)&0xff|0x100, 16)[1:])
		}
		return sb.String()
	}
	switch x := v.Any().(type) {
	case float32:
		return hexLE(uint64(math.Float32bits(x)), 4)
	case float64:
		return hexLE(math.Float64bits(x), 8)
	case uint64:
		return strconv.FormatUint(x, 10)
	case int64:
		return strconv.FormatInt(x, 10)
	case uint8, int8, uint16, int16, uint32, int32:
		return json.Number(strings.TrimSpace(strings.Trim(jsonOf(x), `"`)))
	case bool, string:
		return x
	}
	vals := make([]any, v.Len())
	for i := range vals {
		e, _ := v.Index(i)
		vals[i] = manifestForm(e)
	}
	return map[string]any{"elem": v.ElemType(), "values": vals}
}

func jsonOf(x any) string {
	b, _ := json.Marshal(x)
	return string(b)
}

// TestReadIndependentWriter: files of the independent Python writer read exactly: every
// metadata value with its type, every tensor's bytes (views and blocks), every dequantized
// element (bit for bit against NumPy's own dequantization), and Write's Q8_0 and Q4_0 blocks
// are the reference quantizer's, byte for byte.
func TestReadIndependentWriter(t *testing.T) {
	dir := t.TempDir()
	var all map[string]refManifest
	require.NoError(t, json.Unmarshal([]byte(pyrun.Run(t, refWriter, dir)), &all))
	require.Len(t, all, 2)
	for name, m := range all {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name+".gguf")
			f, err := ggufx.Open(path)
			require.NoError(t, err)
			defer f.Close()
			assert.Equal(t, m.Version, f.Version())
			assert.Equal(t, m.Align, f.Header().Alignment)
			md := f.Metadata()
			require.Equal(t, len(m.Meta), md.Len())
			for i, kv := range m.Meta {
				var key string
				var typ ggufx.ValueType
				require.NoError(t, json.Unmarshal(kv[0], &key))
				require.NoError(t, json.Unmarshal(kv[1], &typ))
				assert.Equal(t, key, md.Keys()[i], "file order")
				v, ok := md.Get(key)
				require.True(t, ok, key)
				assert.Equal(t, typ, v.Type(), key)
				assert.JSONEq(t, string(kv[2]), jsonOf(manifestForm(v)), key)
			}
			toks, err := md.Strings("tokenizer.ggml.tokens")
			require.NoError(t, err)
			assert.Equal(t, []string{"<s>", "</s>", "\u2581the", ""}, toks)
			require.Len(t, f.Tensors(), len(m.Tensors))
			for i, rt := range m.Tensors {
				ti := f.Tensors()[i]
				require.Equal(t, rt.Name, ti.Name)
				assert.Equal(t, rt.Type, ti.Type.String(), rt.Name)
				assert.Equal(t, rt.Dims, ti.Dims, rt.Name)
				want, err := os.ReadFile(rt.Raw)
				require.NoError(t, err)
				b, _, err := f.Blocks(rt.Name)
				require.NoError(t, err)
				got, err := b.ReadOnlyBytes()
				require.NoError(t, err)
				assert.Equal(t, want, got, rt.Name)
				b.Release()
				if !ti.Type.Quantized() {
					x, err := f.Tensor(rt.Name)
					require.NoError(t, err)
					got, err := x.ReadOnlyBytes()
					require.NoError(t, err)
					assert.Equal(t, want, got, rt.Name)
					assert.Equal(t, ti.Shape(), x.Shape())
					x.Release()
					continue
				}
				deq, err := os.ReadFile(rt.Deq)
				require.NoError(t, err)
				x, err := f.Dequantize(rt.Name, core.Float32)
				require.NoError(t, err)
				got, err = x.ReadOnlyBytes()
				require.NoError(t, err)
				require.Equal(t, deq, got, "%s: dequantized float32 differs from NumPy's", rt.Name)
				x.Release()
				deq16, err := os.ReadFile(rt.Deq16)
				require.NoError(t, err)
				x, err = f.Dequantize(rt.Name, core.Float16)
				require.NoError(t, err)
				got, err = x.ReadOnlyBytes()
				require.NoError(t, err)
				require.Equal(t, deq16, got, "%s: float16 differs from NumPy's rounding", rt.Name)
				x.Release()
			}
			// the reference quantizer's blocks
			qin, err := os.ReadFile(path + ".qin")
			require.NoError(t, err)
			xs := make([]float32, len(qin)/4)
			for i := range xs {
				xs[i] = math.Float32frombits(uint32(qin[4*i]) | uint32(qin[4*i+1])<<8 | uint32(qin[4*i+2])<<16 | uint32(qin[4*i+3])<<24)
			}
			src, err := core.FromSlice(xs, 4, 64)
			require.NoError(t, err)
			out := filepath.Join(t.TempDir(), "q.gguf")
			require.NoError(t, ggufx.WriteFile(out, nil, []ggufx.Entry{ggufx.Quantized("q8", src, ggufx.Q8_0), ggufx.Quantized("q4", src, ggufx.Q4_0)}))
			g, err := ggufx.Open(out)
			require.NoError(t, err)
			defer g.Close()
			for q, ext := range map[string]string{"q8": ".q8_0", "q4": ".q4_0"} {
				want, err := os.ReadFile(path + ext)
				require.NoError(t, err)
				b, _, err := g.Blocks(q)
				require.NoError(t, err)
				got, err := b.ReadOnlyBytes()
				require.NoError(t, err)
				assert.Equal(t, want, got, "%s blocks differ from ggml's reference quantizer", q)
			}
		})
	}
}
