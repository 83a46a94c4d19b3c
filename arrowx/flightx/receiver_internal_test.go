package flightx

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
)

// watched replays messages and, before handing over each, checks what the receiver holds
// against what it has been sent.
type watched struct {
	t         *testing.T
	fds       []*flight.FlightData
	b         *budget
	delivered int64 // body bytes handed over
	peak      int64
	bound     func(delivered int64) int64
}

func (w *watched) Recv() (*flight.FlightData, error) {
	used := w.b.used.Load()
	w.peak = max(w.peak, used)
	if lim := w.bound(w.delivered); used > lim {
		w.t.Fatalf("the receiver holds %d bytes after %d came (bound %d)", used, w.delivered, lim)
	}
	if len(w.fds) == 0 {
		return nil, io.EOF
	}
	fd := w.fds[0]
	w.fds = w.fds[1:]
	w.delivered += int64(len(fd.DataBody))
	return fd, nil
}

// TestReceiverGrowsWithWhatCame: while a tensor comes in batches, the receiver holds at most
// about twice what came (and a first staging step), never what the stream announced; it takes
// the whole tensor once half came, at most 1.5 times the tensor then; every byte comes out as
// sent (bools normalised), and everything it took is given back.
func TestReceiverGrowsWithWhatCame(t *testing.T) {
	const total = 8 << 20
	for _, tc := range []struct {
		dt    core.DLDataType
		chunk int
	}{
		{core.Uint8, 4 << 10},     // staged: under minView
		{core.Float32, 256 << 10}, // kept as views
		{core.Uint8, 3 << 20},     // the second batch passes half: assembled at once
		{core.Bool, 100 << 10},    // views, but bytes of 2 and 255 are copied and normalised
	} {
		t.Run(fmt.Sprintf("%s-%d", tc.dt, tc.chunk), func(t *testing.T) {
			x := core.MustNew(tc.dt, total/int64(tc.dt.Size()))
			b, err := x.Bytes()
			require.NoError(t, err)
			for k := range b {
				b[k] = byte(k*7 + k>>12)
			}
			want := slices.Clone(b)
			if tc.dt == core.Bool {
				for k := range want {
					want[k] = min(want[k], 1)
				}
			}
			var fds []*flight.FlightData
			send := func(fd *flight.FlightData) error {
				fds = append(fds, &flight.FlightData{DataHeader: slices.Clone(fd.DataHeader), DataBody: slices.Clone(fd.DataBody)})
				return nil
			}
			require.NoError(t, sendTensor(send, nil, Info{DType: x.DType(), Shape: x.Shape()}, x, tc.chunk, memory.DefaultAllocator))
			cfg := newConfig(nil)
			cfg.inFlight = &budget{limit: 1 << 40}
			src := &watched{t: t, fds: fds, b: cfg.inFlight, bound: func(d int64) int64 {
				if 2*d >= total {
					return total*3/2 + int64(tc.chunk) + looseSlack
				}
				return 2*d + minStage + looseSlack
			}}
			_, got, err := readStream(src, cfg, nil, nil, nil)
			require.NoError(t, err)
			assert.True(t, bytes.Equal(want, bytesOf(t, got)), "the bytes came out different")
			got.Release()
			assert.Zero(t, cfg.inFlight.used.Load(), "memory in flight not given back")
			t.Logf("%d batches; between batches the receiver held at most %d bytes for a %d-byte tensor", len(fds)-1, src.peak, total)
		})
	}
}

func bytesOf(t *testing.T, x *core.Tensor) []byte {
	t.Helper()
	b, err := x.ReadOnlyBytes()
	require.NoError(t, err)
	return b
}

// TestListCopiesCountInFlight: the tensors of a list copied out of their messages (each message
// carries far more than its tensor, so none is kept as a view) count against the server's
// memory in flight while the list comes, with a header each: exactly what they hold, refused
// with ErrBusy one byte under it, and given back once the list is received.
func TestListCopiesCountInFlight(t *testing.T) {
	const count, elems = 8, 16 << 10 // 64 KiB of float32 a tensor: one a batch
	ts := make([]*core.Tensor, count)
	for i := range ts {
		ts[i] = core.MustNew(core.Float32, elems)
		v, err := ts[i].Float32s()
		require.NoError(t, err)
		for k := range v {
			v[k] = float32(i*elems + k)
		}
	}
	info, err := listInfo("l", ts, nil)
	require.NoError(t, err)
	var fds []*flight.FlightData
	send := func(fd *flight.FlightData) error {
		body := slices.Clone(fd.DataBody)
		if len(body) > 0 {
			body = append(body, make([]byte, 16*looseSlack)...) // loose: not kept as a view
		}
		fds = append(fds, &flight.FlightData{DataHeader: slices.Clone(fd.DataHeader), DataBody: body})
		return nil
	}
	require.NoError(t, sendList(send, nil, info, ts, 4*elems, memory.DefaultAllocator, false))
	require.Len(t, fds, 1+count)
	const held = count * (4*elems + tensorOverhead)
	for _, limit := range []int64{held - 1, held} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			cfg := newConfig(nil)
			cfg.inFlight = &budget{limit: limit}
			src := &watched{t: t, fds: slices.Clone(fds), b: cfg.inFlight, bound: func(int64) int64 { return limit }}
			_, _, got, err := readAny(src, cfg, nil, nil, nil, true)
			assert.Zero(t, cfg.inFlight.used.Load(), "memory in flight not given back")
			if limit < held {
				require.ErrorIs(t, err, ErrBusy)
				assert.Nil(t, got)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, int64(held), src.peak, "what the list held while it came")
			require.Len(t, got, count)
			for i, g := range got {
				assert.NotZero(t, g.Flags()&core.FlagIsCopied, "tensor %d kept as a view of a loose message", i)
				assert.Equal(t, bytesOf(t, ts[i]), bytesOf(t, g), "tensor %d", i)
				g.Release()
			}
		})
	}
}
