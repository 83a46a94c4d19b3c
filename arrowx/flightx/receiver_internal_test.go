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
