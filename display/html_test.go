package display_test

import (
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/display"
)

// validHTML parses an HTML fragment as strict XML, which HTML is when every tag is closed and
// every attribute quoted, and checks that every text is escaped: no text node holds markup and
// every attribute is one this package writes.
func validHTML(t *testing.T, s string) {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(s))
	d.Strict = true
	depth := 0
	allowed := map[string]bool{"class": true, "style": true, "alt": true, "width": true, "height": true, "src": true}
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err, s)
		switch tok := tok.(type) {
		case xml.StartElement:
			depth++
			for _, a := range tok.Attr {
				assert.True(t, allowed[a.Name.Local], "attribute %s in %s", a.Name.Local, s)
				assert.NotContains(t, a.Value, `"`, s)
			}
		case xml.EndElement:
			depth--
		case xml.CharData:
			assert.NotContains(t, string(tok), "<", s)
		}
	}
	assert.Zero(t, depth, "every element closed: %s", s)
}

// The only texts of a tensor's HTML that are not numbers come from its metadata: dtype names
// (codes, bits and lanes of every kind, known or odd), device names, flags. Every one of them,
// on host memory or not, gives a valid fragment.
func TestHTMLValidForEveryDTypeAndDevice(t *testing.T) {
	n := 0
	for _, code := range core.DataTypeCodes() {
		for _, bits := range []uint8{1, 2, 4, 6, 8, 16, 32, 64, 128} {
			for _, lanes := range []uint16{1, 2, 3, 4} {
				dt := core.DLDataType{Code: code, Bits: bits, Lanes: lanes}
				x, err := core.New(dt, 3, 4)
				if err != nil {
					continue // not a dtype a tensor can have
				}
				h := display.HTML(x)
				validHTML(t, h)
				assert.Contains(t, h, dt.String())
				n++
			}
		}
	}
	assert.Greater(t, n, 20)

	buf := make([]float32, 8*8)
	for _, dev := range core.DeviceTypes() {
		x, err := core.Wrap(core.Desc{Data: unsafe.Pointer(&buf[0]), Device: core.DLDevice{DeviceType: dev, DeviceID: 7},
			DType: core.Float32, Shape: []int64{8, 8}}, nil)
		require.NoError(t, err, dev)
		ro, err := x.AsReadOnly()
		require.NoError(t, err)
		for _, y := range []*core.Tensor{x, ro} {
			h := display.HTML(y)
			validHTML(t, h)
			assert.Contains(t, h, dev.String()+":7")
		}
		x.Release()
		validHTML(t, display.HTML(x))
	}
}

// Hostile values: NaN and infinities, huge and tiny magnitudes, complex parts, in every shape
// HTML has a form for.
func TestHTMLValidForHostileValues(t *testing.T) {
	vals := []float64{0, -0.0, 1e308, -1e-308, 5e-324}
	nan, inf := 0.0, 1.0
	nan /= nan
	inf /= 0
	vals = append(vals, nan, inf, -inf)
	for _, shape := range [][]int64{{8}, {2, 4}, {2, 2, 2}, {1, 1, 2, 4}} {
		x := core.MustFromSlice(vals, shape...)
		validHTML(t, display.HTML(x))
		c := make([]complex128, 8)
		for i := range c {
			c[i] = complex(vals[i], vals[7-i])
		}
		validHTML(t, display.HTML(core.MustFromSlice(c, shape...)))
	}
	validHTML(t, display.HTML(core.Scalar(nan)))
	validHTML(t, display.HTML(core.MustNew(core.Float32, 0, 3)))
	validHTML(t, display.HTML(core.MustNew(core.Uint8, 20, 30, 4)))
}
