package display

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"html"
	"image"
	"image/color"
	"image/png"
	"math"
	"strconv"
	"strings"
	"unsafe"

	"github.com/x448/float16"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/errs"
)

// ErrNotImage: the tensor has no reading as a picture (Image needs host memory holding a 2-D
// real tensor, or [H, W, 1|3|4] with uint8 or floating-point channels).
var ErrNotImage = errors.New("display: tensor cannot be shown as an image")

func init() { core.SetRenderer(MIME) }

// view is a tensor with the fields the renderers read, taken once.
type view struct {
	*core.Tensor
	data           unsafe.Pointer
	shape, strides []int64
	dtype          core.DLDataType
	device         core.DLDevice
	flags          core.Flags
}

func newView(t *core.Tensor) *view {
	return &view{Tensor: t, data: t.Data(), shape: t.Shape(), strides: t.Strides(), dtype: t.DType(),
		device: t.Device(), flags: t.Flags()}
}

// NumPy's print options, which Repr follows.
const (
	reprLineWidth = 75   // np.get_printoptions()["linewidth"]
	reprThreshold = 1000 // more elements than this are summarised
	reprEdgeItems = 3    // elements kept at each end of a summarised dimension
	reprPrecision = 8    // most fraction digits a float shows

	// reprMaxShown bounds the elements Repr writes. NumPy's summary keeps 6 per dimension, so
	// a tensor with many dimensions (a broadcast view, say, which costs no memory) could still
	// show billions; beyond this, Repr writes the one-line summary instead.
	reprMaxShown = 1 << 20
)

// HTML shows at most htmlEdge*2 entries of a dimension (the first and last htmlEdge, with an
// ellipsis between), and at most htmlMaxSlices 2-D slices of a tensor of 3 or more dimensions.
const (
	htmlEdge      = 10
	htmlMaxSlices = 4
)

// A picture is rendered (MIME's image/png, the picture in HTML) for images whose sides
// are at most imageMaxSide; a 2-D tensor also needs imageMinSide on each side (smaller matrices
// read better as numbers alone). Pictures are scaled up in HTML to about imageShowSide pixels.
const (
	imageMinSide  = 8
	imageMaxSide  = 2048
	imageShowSide = 256
)

// imageMaxPixels bounds what Image allocates.
const imageMaxPixels = 1 << 26

// Repr returns the tensor written the way NumPy's repr writes an array: a nested list with
// aligned columns, wrapped at 75 characters, summarised with "..." (three items at each end of
// every dimension) when it has more than 1000 elements, followed by the dtype unless NumPy
// would leave it implied (float64, int64, bool, complex128):
//
//	array([[1., 2.],
//	       [3., 4.]], dtype=float32)
//
// Elements are formatted as NumPy formats them: the shortest digits that identify each value in
// its own type (float16 and bfloat16 included), at most 8 after the point, switching to
// scientific notation for the whole tensor when a value is ≥ 1e8, or below 1e-4, or the ratio of
// the largest to the smallest magnitude exceeds 1000. bfloat16, which NumPy lacks, is formatted
// like NumPy's float16. Empty tensors show their shape (array([], shape=(0, 3), dtype=float32)).
//
// Beyond NumPy: a read-only tensor ends with "readonly=True", a tensor in host-accessible
// device memory (CUDA managed or pinned memory) with "device='cuda_host:0'". Memory the CPU
// cannot read is never touched: such a tensor (or a released one, or one whose dtype has no
// decoding here: float8, sub-byte, opaque handles, vector lanes) is summarised in one line, as
// in <cuda:0 tensor, shape=(2, 3), dtype=float32>; so is a tensor whose summary would still show
// more than 2^20 elements (many dimensions: NumPy would print them all).
func Repr(x *core.Tensor) string {
	t := newView(x)
	var repr string
	t.withElements(func(r *elemReader) { repr = t.reprLocked(r) })
	return repr
}

func (t *view) reprLocked(r *elemReader) string {
	if r == nil {
		return t.reprSummary()
	}
	return r.repr()
}

// HTML returns an HTML fragment showing the tensor: a caption line (dtype, shape, device,
// strides, layout and flags) over a table of its values, one row per row of a 2-D tensor, one
// row for a 1-D tensor, the value alone for a 0-d tensor, and for 3 or more dimensions the first
// few 2-D slices (indexed [i, j, :, :]) with a note of how many there are. Dimensions longer
// than 20 are elided in the middle with "…". Values are formatted as in Repr. A tensor that
// MIME shows as a picture (see there) has that picture below the table, as a PNG data
// URL, since Jupyter displays only the HTML of a value that has both. Every text is
// HTML-escaped; device memory is never read.
func HTML(x *core.Tensor) string {
	t := newView(x)
	var out string
	t.withElements(func(r *elemReader) { out = t.htmlLocked(r, t.pngLocked(r)) })
	return out
}

func (t *view) htmlLocked(r *elemReader, pic *pngImage) string {
	var b strings.Builder
	b.WriteString(`<div class="dlpack-tensor">`)
	b.WriteString(`<div class="dlpack-caption" style="font-family:monospace">`)
	b.WriteString(html.EscapeString(t.caption()))
	b.WriteString("</div>\n")
	if r == nil {
		b.WriteString("<p>" + html.EscapeString(t.unreadableReason()) + "</p>")
	} else {
		r.htmlBody(&b)
		if pic != nil {
			pic.writeHTML(&b)
		}
	}
	b.WriteString("</div>")
	return b.String()
}

// Image returns the tensor as a picture: a 2-D tensor (or [H, W, 1]) of real numbers as
// grayscale, rows top to bottom, scaled so that its smallest finite value is black and its
// largest white (a constant tensor is black; NaN and -Inf are black, +Inf white; bool is black
// for false and white for true); an [H, W, 3] or [H, W, 4] tensor of uint8 as RGB or RGBA
// (non-premultiplied alpha), or of floating-point values in [0, 1], which are scaled to 0..255
// (values outside are clipped, NaN is 0). Other shapes and dtypes fail with ErrNotImage, as do
// pictures of more than 2^26 pixels (a broadcast view can be that large without memory); device
// memory fails with core.ErrNotHost, a released tensor with core.ErrReleased.
func Image(x *core.Tensor) (image.Image, error) {
	t := newView(x)
	var img image.Image
	var err error
	t.withElements(func(r *elemReader) {
		switch {
		case t.Released():
			err = errs.Errorf(core.ErrReleased, "display: the tensor was released")
		case !t.HostAccessible():
			err = errs.Errorf(core.ErrNotHost, "display: the tensor is on %s, not in host memory", t.device)
		case r == nil:
			err = errs.Errorf(ErrNotImage, "display: %s elements cannot be shown as pixels", t.dtype)
		default:
			img, err = r.image()
		}
	})
	return img, err
}

// MIME returns the tensor's representations by MIME type, what core.Tensor.SimpleRender returns
// once this package is imported, as gophernotes (the Go kernel for Jupyter) asks of a value it
// displays: "text/plain" is Repr, "text/html" is HTML,
// and "image/png" is the picture Image draws, as the bytes of a PNG file, when it has one with
// sides of at most 2048 pixels (and, for a 2-D tensor, of at least 8: smaller matrices read
// better as numbers). gophernotes sends the map as JSON, which turns the []byte into the base64
// text Jupyter expects, as it does for the images it renders itself.
func MIME(x *core.Tensor) map[string]any {
	t := newView(x)
	m := make(map[string]any, 3)
	t.withElements(func(r *elemReader) {
		pic := t.pngLocked(r)
		m["text/plain"] = t.reprLocked(r)
		m["text/html"] = t.htmlLocked(r, pic)
		if pic != nil {
			m["image/png"] = pic.data
		}
	})
	return m
}

// pngImage is the picture MIME and HTML show.
type pngImage struct {
	data          []byte // the PNG file
	width, height int
}

// pngLocked draws the picture of a tensor that has one of moderate size, or returns nil.
func (t *view) pngLocked(r *elemReader) *pngImage {
	if r == nil || len(t.shape) < 2 || len(t.shape) > 3 {
		return nil
	}
	h, w := t.shape[0], t.shape[1]
	if len(t.shape) == 2 && (h < imageMinSide || w < imageMinSide) {
		return nil
	}
	if h < 1 || w < 1 || h > imageMaxSide || w > imageMaxSide {
		return nil
	}
	img, err := r.image()
	if err != nil {
		return nil
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil
	}
	return &pngImage{data: buf.Bytes(), width: int(w), height: int(h)}
}

// writeHTML writes the picture as an <img> scaled up (without smoothing) to about
// imageShowSide pixels.
func (p *pngImage) writeHTML(b *strings.Builder) {
	scale := 1
	if m := max(p.width, p.height); m < imageShowSide {
		scale = imageShowSide / m
	}
	fmt.Fprintf(b, "<img alt=\"%d×%d image\" width=\"%d\" height=\"%d\" style=\"image-rendering:pixelated\" src=\"data:image/png;base64,%s\"/>",
		p.width, p.height, p.width*scale, p.height*scale, base64.StdEncoding.EncodeToString(p.data))
	b.WriteString("\n")
}

// withElements calls f with a reader of t's elements while it holds t's memory, or with nil when
// the elements cannot be read here (device memory, a released tensor, a dtype without a
// decoding). The memory cannot be released while f runs.
func (t *view) withElements(f func(r *elemReader)) {
	if t.Released() || !t.HostAccessible() {
		f(nil)
		return
	}
	h, err := core.Hold(t.Tensor)
	if err != nil { // released since
		f(nil)
		return
	}
	defer h.Release()
	kind := elemKindOf(t.dtype)
	if kind == kindNone || (t.Len() > 0 && t.data == nil) {
		f(nil)
		return
	}
	f(&elemReader{t: t, kind: kind, size: int64(t.dtype.Size())})
}

// unreadableReason says why withElements passes nil.
func (t *view) unreadableReason() string {
	switch {
	case t.Released():
		return "released: the memory may be gone"
	case !t.HostAccessible():
		return "values on " + t.device.String() + " are not read"
	default:
		return "values of dtype " + t.dtype.String() + " are not shown"
	}
}

// reprSummary is Repr for tensors whose values are not shown.
func (t *view) reprSummary() string {
	where := t.device.String()
	if t.Released() {
		where = "released"
	}
	s := "<" + where + " tensor, shape=" + pyShape(t.shape) + ", dtype=" + t.dtype.String()
	if t.ReadOnly() {
		s += ", readonly=True"
	}
	return s + ">"
}

// caption is HTML's header line.
func (t *view) caption() string {
	parts := []string{t.dtype.String(), "shape " + pyShape(t.shape), t.device.String(),
		"strides " + pyShape(t.strides)}
	switch c, f := t.IsContiguous(), t.IsFortranContiguous(); {
	case c && f:
		parts = append(parts, "C- and F-contiguous")
	case c:
		parts = append(parts, "C-contiguous")
	case f:
		parts = append(parts, "F-contiguous")
	default:
		parts = append(parts, "non-contiguous")
	}
	if t.ReadOnly() {
		parts = append(parts, "read-only")
	}
	if t.flags&core.FlagIsCopied != 0 {
		parts = append(parts, "copied")
	}
	if t.Released() {
		parts = append(parts, "released")
	}
	return strings.Join(parts, " · ")
}

// pyShape writes a shape as a Python tuple: (), (3,), (2, 3).
func pyShape(shape []int64) string {
	switch len(shape) {
	case 0:
		return "()"
	case 1:
		return "(" + strconv.FormatInt(shape[0], 10) + ",)"
	}
	parts := make([]string, len(shape))
	for i, d := range shape {
		parts[i] = strconv.FormatInt(d, 10)
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// elemKind is how an element is decoded.
type elemKind uint8

const (
	kindNone elemKind = iota
	kindBool
	kindInt
	kindUint
	kindFloat16
	kindBFloat16
	kindFloat32
	kindFloat64
	kindComplex32 // two float16
	kindComplex64
	kindComplex128
)

func elemKindOf(d core.DLDataType) elemKind {
	if d.Lanes != 1 {
		return kindNone
	}
	switch {
	case d == core.Bool:
		return kindBool
	case d.Code == core.CodeInt && d.Bits >= 8 && d.Bits <= 64 && d.Bits&(d.Bits-1) == 0:
		return kindInt
	case d.Code == core.CodeUInt && d.Bits >= 8 && d.Bits <= 64 && d.Bits&(d.Bits-1) == 0:
		return kindUint
	case d == core.Float16:
		return kindFloat16
	case d == core.BFloat16:
		return kindBFloat16
	case d == core.Float32:
		return kindFloat32
	case d == core.Float64:
		return kindFloat64
	case d.Code == core.CodeComplex && d.Bits == 32:
		return kindComplex32
	case d == core.Complex64:
		return kindComplex64
	case d == core.Complex128:
		return kindComplex128
	}
	return kindNone
}

func (k elemKind) complex() bool { return k >= kindComplex32 }

func (k elemKind) float() bool { return k >= kindFloat16 && k <= kindFloat64 }

// floatType is the binary format whose shortest decimals a formatter writes.
type floatType uint8

const (
	ftFloat16 floatType = iota
	ftBFloat16
	ftFloat32
	ftFloat64
)

func (k elemKind) floatType() floatType {
	switch k {
	case kindFloat16, kindComplex32:
		return ftFloat16
	case kindBFloat16:
		return ftBFloat16
	case kindFloat32, kindComplex64:
		return ftFloat32
	}
	return ftFloat64
}

// elemReader reads elements of a host tensor by their offset (in elements) from the first.
type elemReader struct {
	t    *view
	kind elemKind
	size int64
}

func (r *elemReader) ptr(off int64) unsafe.Pointer { return unsafe.Add(r.t.data, off*r.size) }

func (r *elemReader) boolAt(off int64) bool { return *(*uint8)(r.ptr(off)) != 0 }

func (r *elemReader) intAt(off int64) int64 {
	switch r.size {
	case 1:
		return int64(*(*int8)(r.ptr(off)))
	case 2:
		return int64(*(*int16)(r.ptr(off)))
	case 4:
		return int64(*(*int32)(r.ptr(off)))
	}
	return *(*int64)(r.ptr(off))
}

func (r *elemReader) uintAt(off int64) uint64 {
	switch r.size {
	case 1:
		return uint64(*(*uint8)(r.ptr(off)))
	case 2:
		return uint64(*(*uint16)(r.ptr(off)))
	case 4:
		return uint64(*(*uint32)(r.ptr(off)))
	}
	return *(*uint64)(r.ptr(off))
}

// floatAt returns a real element as a float64 (exactly, for the float kinds).
func (r *elemReader) floatAt(off int64) float64 {
	p := r.ptr(off)
	switch r.kind {
	case kindBool:
		if r.boolAt(off) {
			return 1
		}
		return 0
	case kindInt:
		return float64(r.intAt(off))
	case kindUint:
		return float64(r.uintAt(off))
	case kindFloat16:
		return float64(float16.Frombits(*(*uint16)(p)).Float32())
	case kindBFloat16:
		return float64(core.BF16(*(*uint16)(p)).Float32())
	case kindFloat32:
		return float64(*(*float32)(p))
	}
	return *(*float64)(p)
}

// complexAt returns a complex element's parts as float64 (exactly).
func (r *elemReader) complexAt(off int64) (re, im float64) {
	p := r.ptr(off)
	switch r.kind {
	case kindComplex32:
		q := (*[2]uint16)(p)
		return float64(float16.Frombits(q[0]).Float32()), float64(float16.Frombits(q[1]).Float32())
	case kindComplex64:
		c := *(*complex64)(p)
		return float64(real(c)), float64(imag(c))
	}
	c := *(*complex128)(p)
	return real(c), imag(c)
}

// window chooses which indices of each dimension are shown: all of them, or the first and last
// edge when summarising and the dimension is longer than 2*edge.
type window struct {
	summary bool
	edge    int64
}

func (w window) elided(n int64) bool { return w.summary && n > 2*w.edge }

// shownCount returns how many elements w shows of a tensor of that shape, saturating at MaxInt64.
func shownCount(shape []int64, w window) int64 {
	c := int64(1)
	for _, d := range shape {
		if w.elided(d) {
			d = 2 * w.edge
		}
		if d != 0 && c > math.MaxInt64/d { // shapes are never negative
			return math.MaxInt64
		}
		c *= d
	}
	return c
}

func (w window) indices(n int64) []int64 {
	if !w.elided(n) {
		out := make([]int64, n)
		for i := range out {
			out[i] = int64(i)
		}
		return out
	}
	out := make([]int64, 0, 2*w.edge)
	for i := int64(0); i < w.edge; i++ {
		out = append(out, i)
	}
	for i := n - w.edge; i < n; i++ {
		out = append(out, i)
	}
	return out
}

// shownOffsets returns the offsets of the elements w shows of dimensions from..ndim-1 under base.
func (r *elemReader) shownOffsets(w window, from int, base int64) []int64 {
	offs := []int64{base}
	for ax := from; ax < len(r.t.shape); ax++ {
		idx := w.indices(r.t.shape[ax])
		next := make([]int64, 0, len(offs)*len(idx))
		for _, o := range offs {
			for _, i := range idx {
				next = append(next, o+i*r.t.strides[ax])
			}
		}
		offs = next
	}
	return offs
}

// formatter returns NumPy's format function for the elements at offs: each value is written
// with the same width, so that columns align.
func (r *elemReader) formatter(offs []int64, scalar bool) func(off int64) string {
	switch {
	case r.kind == kindBool:
		trueStr := " True"
		if scalar {
			trueStr = "True"
		}
		return func(off int64) string {
			if r.boolAt(off) {
				return trueStr
			}
			return "False"
		}
	case r.kind == kindInt || r.kind == kindUint:
		width := 0
		str := func(off int64) string {
			if r.kind == kindInt {
				return strconv.FormatInt(r.intAt(off), 10)
			}
			return strconv.FormatUint(r.uintAt(off), 10)
		}
		for _, o := range offs {
			width = max(width, len(str(o)))
		}
		return func(off int64) string { return padLeft(str(off), width) }
	case r.kind.complex():
		re, im := make([]float64, len(offs)), make([]float64, len(offs))
		for i, o := range offs {
			re[i], im[i] = r.complexAt(o)
		}
		ft := r.kind.floatType()
		fr, fi := newFloatFormat(re, ft, false), newFloatFormat(im, ft, true)
		return func(off int64) string {
			a, b := r.complexAt(off)
			is := fi.format(b)
			n := len(strings.TrimRight(is, " "))
			return fr.format(a) + is[:n] + "j" + is[n:]
		}
	default:
		vals := make([]float64, len(offs))
		for i, o := range offs {
			vals[i] = r.floatAt(o)
		}
		ff := newFloatFormat(vals, r.kind.floatType(), false)
		return func(off int64) string { return ff.format(r.floatAt(off)) }
	}
}

func padLeft(s string, width int) string {
	if len(s) >= width {
		return s
	}
	return strings.Repeat(" ", width-len(s)) + s
}

func padRight(s string, width int) string {
	if len(s) >= width {
		return s
	}
	return s + strings.Repeat(" ", width-len(s))
}

// impliedDType reports whether NumPy's repr leaves the dtype out (its default types on 64-bit
// Linux).
func impliedDType(d core.DLDataType) bool {
	return d == core.Float64 || d == core.Int64 || d == core.Bool || d == core.Complex128
}

func (r *elemReader) repr() string {
	t := r.t
	const prefix = "array("
	n := t.Len()
	var kw []string
	if !impliedDType(t.dtype) || n == 0 {
		kw = append(kw, "dtype="+t.dtype.String())
	}
	if t.device != core.CPUDevice {
		kw = append(kw, "device='"+t.device.String()+"'")
	}
	if t.ReadOnly() {
		kw = append(kw, "readonly=True")
	}
	suffix := ")"
	if len(kw) > 0 {
		suffix = ","
	}
	if n > 0 && shownCount(t.shape, window{summary: n > reprThreshold, edge: reprEdgeItems}) > reprMaxShown {
		return t.reprSummary()
	}
	var body string
	switch {
	case n > 0:
		body = r.formatArray(reprLineWidth-len(suffix), strings.Repeat(" ", 1+len(prefix)))
	case len(t.shape) == 1:
		body = "[]"
	default:
		body = "[], shape=" + pyShape(t.shape)
	}
	s := prefix + body + suffix
	if len(kw) == 0 {
		return s
	}
	tail := strings.Join(kw, ", ") + ")"
	lastLine := len(s) - (strings.LastIndexByte(s, '\n') + 1)
	if lastLine+len(tail)+1 > reprLineWidth {
		return s + "\n" + strings.Repeat(" ", len(prefix)) + tail
	}
	return s + " " + tail
}

// formatArray is NumPy's _formatArray: nested brackets, rows wrapped at lineWidth, dimensions
// separated by blank lines, summarised dimensions shown with "...".
func (r *elemReader) formatArray(lineWidth int, nextLinePrefix string) string {
	t := r.t
	w := window{summary: t.Len() > reprThreshold, edge: reprEdgeItems}
	format := r.formatter(r.shownOffsets(w, 0, 0), len(t.shape) == 0)
	const sep = ", "

	var rec func(axis int, base int64, hanging string, width int) string
	rec = func(axis int, base int64, hanging string, width int) string {
		if axis == len(t.shape) {
			return format(base)
		}
		nextHanging := hanging + " "
		nextWidth := width - 1 // room for "]"
		n := t.shape[axis]
		at := func(i int64) int64 { return base + i*t.strides[axis] }
		leading, trailing := int64(0), n
		summary := w.elided(n)
		if summary {
			leading, trailing = w.edge, w.edge
		}
		var s strings.Builder
		if len(t.shape)-axis == 1 {
			elemWidth := width - 1 // room for "," or "]"
			line := hanging
			var out string
			for i := int64(0); i < leading; i++ {
				out, line = extendLine(out, line, rec(axis+1, at(i), nextHanging, nextWidth), elemWidth, hanging)
				line += sep
			}
			if summary {
				out, line = extendLine(out, line, "...", elemWidth, hanging)
				line += sep
			}
			for i := trailing; i > 1; i-- {
				out, line = extendLine(out, line, rec(axis+1, at(n-i), nextHanging, nextWidth), elemWidth, hanging)
				line += sep
			}
			out, line = extendLine(out, line, rec(axis+1, at(n-1), nextHanging, nextWidth), elemWidth, hanging)
			s.WriteString(out + line)
		} else {
			lineSep := "," + strings.Repeat("\n", len(t.shape)-axis-1)
			for i := int64(0); i < leading; i++ {
				s.WriteString(hanging + rec(axis+1, at(i), nextHanging, nextWidth) + lineSep)
			}
			if summary {
				s.WriteString(hanging + "..." + lineSep)
			}
			for i := trailing; i > 1; i-- {
				s.WriteString(hanging + rec(axis+1, at(n-i), nextHanging, nextWidth) + lineSep)
			}
			s.WriteString(hanging + rec(axis+1, at(n-1), nextHanging, nextWidth))
		}
		return "[" + s.String()[len(hanging):] + "]"
	}
	return rec(0, 0, nextLinePrefix, lineWidth)
}

// extendLine appends word to line, first moving line to out and starting a new line when word
// would not fit (unless the line holds nothing yet, where wrapping would not help).
func extendLine(out, line, word string, width int, nextLinePrefix string) (string, string) {
	if len(line)+len(word) > width && len(line) > len(nextLinePrefix) {
		out += strings.TrimRight(line, " ") + "\n"
		line = nextLinePrefix
	}
	return out, line + word
}

// floatFormat is NumPy's FloatingFormat with its default options (floatmode "maxprec",
// precision 8, no suppression of small values): one notation and one set of widths for all the
// values it was made from.
type floatFormat struct {
	ft        floatType
	plus      bool // write "+" before non-negative values (the imaginary part of a complex)
	exp       bool // scientific notation
	padLeft   int  // width of the part before the point
	padRight  int  // width of the part after the point (positional notation)
	precision int  // digits after the point (scientific notation)
	expSize   int  // digits of the exponent (scientific notation)
}

func newFloatFormat(vals []float64, ft floatType, plus bool) *floatFormat {
	f := &floatFormat{ft: ft, plus: plus}
	var finite []float64
	nonFinite, negInf := false, false
	maxAbs, minAbs := 0.0, math.Inf(1)
	for _, v := range vals {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			nonFinite = true
			negInf = negInf || math.IsInf(v, -1)
			continue
		}
		finite = append(finite, v)
		if a := math.Abs(v); a != 0 {
			maxAbs, minAbs = max(maxAbs, a), min(minAbs, a)
		}
	}
	if maxAbs > 0 && (maxAbs >= 1e8 || minAbs < 1e-4 || maxAbs/minAbs > 1000) {
		f.exp = true
	}
	switch {
	case len(finite) == 0:
		f.padLeft, f.padRight = 0, 0
	case f.exp:
		f.expSize = 0
		for _, v := range finite {
			i, fr, e := f.scientific(v)
			f.padLeft = max(f.padLeft, len(i))
			f.precision = max(f.precision, len(fr))
			f.expSize = max(f.expSize, len(e)-1)
		}
		f.padRight = f.expSize + 2 + f.precision
	default:
		for _, v := range finite {
			i, fr := f.positional(v)
			f.padLeft = max(f.padLeft, len(i))
			f.padRight = max(f.padRight, len(fr))
		}
	}
	if nonFinite {
		infLen := 3
		if f.plus || negInf {
			infLen++
		}
		offset := f.padRight + 1
		f.padLeft = max(f.padLeft, 3-offset, infLen-offset)
	}
	return f
}

// sign returns the sign NumPy writes before v's digits.
func (f *floatFormat) sign(v float64) string {
	switch {
	case math.Signbit(v):
		return "-"
	case f.plus:
		return "+"
	}
	return ""
}

// positional writes v in positional notation, NumPy's dragon4_positional with unique digits,
// precision 8 and trim ".": the sign and integer part, and the fraction digits (the point goes
// between them).
func (f *floatFormat) positional(v float64) (intPart, frac string) {
	s := strconv.FormatFloat(math.Abs(shortest(v, f.ft)), 'f', -1, 64)
	if math.Trunc(v) == v {
		// Dragon4 writes every digit before the point: an integer value is written exactly
		// (float16 4112 is "4112.", though "4110" would identify it).
		s = strconv.FormatFloat(math.Abs(v), 'f', 0, 64)
	} else if i := strings.IndexByte(s, '.'); i >= 0 && len(s)-i-1 > reprPrecision {
		s = strings.TrimRight(strconv.FormatFloat(math.Abs(v), 'f', reprPrecision, 64), "0")
	}
	intPart, frac, _ = strings.Cut(s, ".")
	return f.sign(v) + intPart, frac
}

// scientific writes v in scientific notation, NumPy's dragon4_scientific with unique digits,
// precision 8 and trim ".": sign and leading digit, fraction digits, and the exponent with its
// sign (at least two digits).
func (f *floatFormat) scientific(v float64) (intPart, frac, exp string) {
	s := strconv.FormatFloat(math.Abs(shortest(v, f.ft)), 'e', -1, 64)
	mant, e, _ := strings.Cut(s, "e")
	if i := strings.IndexByte(mant, '.'); i >= 0 && len(mant)-i-1 > reprPrecision {
		s = strconv.FormatFloat(math.Abs(v), 'e', reprPrecision, 64)
		mant, e, _ = strings.Cut(s, "e")
		mant = strings.TrimRight(strings.TrimRight(mant, "0"), ".")
	}
	intPart, frac, _ = strings.Cut(mant, ".")
	return f.sign(v) + intPart, frac, e
}

func (f *floatFormat) format(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		var s string
		switch {
		case math.IsNaN(v) && f.plus:
			s = "+nan"
		case math.IsNaN(v):
			s = "nan"
		case v < 0:
			s = "-inf"
		case f.plus:
			s = "+inf"
		default:
			s = "inf"
		}
		return padLeft(s, f.padLeft+f.padRight+1)
	}
	if f.exp {
		i, fr, e := f.scientific(v)
		if len(fr) < f.precision {
			// Dragon4's min_digits: the digits after those that identify v are v's own
			// digits, rounded at the last, not zeros.
			s := strconv.FormatFloat(math.Abs(v), 'e', f.precision, 64)
			mant, exp, _ := strings.Cut(s, "e")
			i, fr, _ = strings.Cut(mant, ".")
			i, e = f.sign(v)+i, exp
		}
		digits := e[1:]
		if len(digits) < f.expSize {
			digits = strings.Repeat("0", f.expSize-len(digits)) + digits
		}
		return padLeft(i, f.padLeft) + "." + fr + strings.Repeat("0", f.precision-len(fr)) + "e" + e[:1] + digits
	}
	i, fr := f.positional(v)
	return padLeft(i, f.padLeft) + "." + padRight(fr, f.padRight)
}

// shortest returns the float64 whose shortest decimal form is the shortest decimal that
// identifies v (exactly representable in ft) among the values of ft, the closest to v if several
// are as short: v itself for float64, the nearest float64 to that decimal otherwise.
func shortest(v float64, ft floatType) float64 {
	switch {
	case ft == ftFloat64 || v == 0 || math.IsNaN(v) || math.IsInf(v, 0):
		return v
	case ft == ftFloat32:
		d, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', -1, 32), 64)
		return d
	}
	// 16-bit formats: the digits that round back to v, found by trying more and more of them.
	lo, hi, inclusive := roundingInterval(math.Abs(v), ft)
	in := func(d float64) bool {
		return (d > lo && d < hi) || (inclusive && (d == lo || d == hi))
	}
	a := math.Abs(v)
	for digits := 1; digits < 17; digits++ {
		s := strconv.FormatFloat(a, 'e', digits-1, 64) // the nearest decimal of that length
		d, _ := strconv.ParseFloat(s, 64)
		if in(d) {
			return math.Copysign(d, v)
		}
		// Below a power of two the interval is narrower than above it: the nearest decimal may
		// fall short of lo while the next one up (one unit in its last digit) lies inside.
		_, exp, _ := strings.Cut(s, "e")
		e, _ := strconv.Atoi(exp)
		up, _ := strconv.ParseFloat(strconv.FormatFloat(d+math.Pow10(e-digits+1), 'e', digits-1, 64), 64)
		if up > a && in(up) {
			return math.Copysign(up, v)
		}
	}
	return v
}

// roundingInterval returns the values that round to a (positive, finite, in the format ft) under
// round-to-nearest-even: those strictly between lo and hi, and lo and hi themselves when
// inclusive (a has an even significand).
func roundingInterval(a float64, ft floatType) (lo, hi float64, inclusive bool) {
	var bits uint16
	var val func(uint16) float64
	var maxBits uint16
	if ft == ftFloat16 {
		bits = float16.Fromfloat32(float32(a)).Bits()
		val = func(b uint16) float64 { return float64(float16.Frombits(b).Float32()) }
		maxBits = 0x7bff
	} else {
		bits = uint16(core.BF16FromFloat32(float32(a)))
		val = func(b uint16) float64 { return float64(core.BF16(b).Float32()) }
		maxBits = 0x7f7f
	}
	next := val(bits + 1)
	if bits == maxBits {
		next = a + (a - val(bits-1))
	}
	prev := 0.0
	if bits > 0 {
		prev = val(bits - 1)
	} else {
		prev = -val(1)
	}
	return (prev + a) / 2, (a + next) / 2, bits&1 == 0
}

// htmlBody writes the table (or tables, or value) of HTML.
func (r *elemReader) htmlBody(b *strings.Builder) {
	t := r.t
	w := window{summary: true, edge: htmlEdge}
	nd := len(t.shape)
	if t.Len() == 0 {
		b.WriteString("<code>[]</code>")
		return
	}
	if nd == 0 {
		format := r.formatter([]int64{0}, true)
		b.WriteString("<code>" + html.EscapeString(strings.TrimSpace(format(0))) + "</code>")
		return
	}
	// the formatter sees the elements of the slices shown, so columns agree across them
	lead := nd - 2
	if lead < 0 {
		lead = 0
	}
	slices := leadingSlices(t.shape[:lead], t.strides[:lead], htmlMaxSlices)
	var offs []int64
	for _, s := range slices {
		offs = append(offs, r.shownOffsets(w, lead, s.off)...)
	}
	format := r.formatter(offs, false)
	cell := func(off int64) string { return html.EscapeString(strings.TrimSpace(format(off))) }

	total := int64(1)
	for _, d := range t.shape[:lead] {
		total *= d
	}
	if lead > 0 {
		fmt.Fprintf(b, "<p>showing %d of %d 2-D slices</p>\n", len(slices), total)
	}
	for _, s := range slices {
		if lead > 0 {
			idx := make([]string, 0, nd)
			for _, i := range s.index {
				idx = append(idx, strconv.FormatInt(i, 10))
			}
			idx = append(idx, ":", ":")
			b.WriteString("<p><code>[" + strings.Join(idx, ", ") + "]</code></p>\n")
		}
		r.htmlTable(b, s.off, nd-lead, w, cell)
	}
}

// leadingSlice is one 2-D slice of a tensor of 3 or more dimensions.
type leadingSlice struct {
	index []int64
	off   int64
}

// leadingSlices enumerates, in C order, the first limit index tuples of the leading dimensions.
func leadingSlices(shape, strides []int64, limit int) []leadingSlice {
	out := []leadingSlice{{index: []int64{}, off: 0}}
	if len(shape) == 0 {
		return out
	}
	out = out[:0]
	for idx := range core.Indices(shape) {
		if len(out) == limit {
			break
		}
		var off int64
		for i, x := range idx {
			off += x * strides[i]
		}
		out = append(out, leadingSlice{index: append([]int64{}, idx...), off: off})
	}
	return out
}

// htmlTable writes a 1-D (one row) or 2-D table at base, with index headers.
func (r *elemReader) htmlTable(b *strings.Builder, base int64, nd int, w window, cell func(int64) string) {
	t := r.t
	rows, cols := int64(1), t.shape[len(t.shape)-1]
	rowStride, colStride := int64(0), t.strides[len(t.shape)-1]
	if nd == 2 {
		rows, rowStride = t.shape[len(t.shape)-2], t.strides[len(t.shape)-2]
	}
	colIdx, rowIdx := w.indices(cols), w.indices(rows)
	// A wide table (an elided 96×96 has 21 columns) scrolls sideways in its own box rather than
	// running past the right edge of the notebook's output area, which cuts it off.
	b.WriteString(`<div class="dlpack-table" style="overflow-x:auto;width:0;min-width:100%">` + "\n")
	b.WriteString(`<table style="font-family:monospace">` + "\n<thead><tr><th></th>")
	for k, j := range colIdx {
		if k > 0 && j != colIdx[k-1]+1 {
			b.WriteString("<th>…</th>")
		}
		b.WriteString("<th>" + strconv.FormatInt(j, 10) + "</th>")
	}
	b.WriteString("</tr></thead>\n<tbody>\n")
	for k, i := range rowIdx {
		if k > 0 && i != rowIdx[k-1]+1 {
			b.WriteString("<tr><th>…</th>")
			for c := range colIdx {
				if c > 0 && colIdx[c] != colIdx[c-1]+1 {
					b.WriteString("<td>…</td>")
				}
				b.WriteString("<td>…</td>")
			}
			b.WriteString("</tr>\n")
		}
		b.WriteString("<tr><th>")
		if nd == 2 {
			b.WriteString(strconv.FormatInt(i, 10))
		}
		b.WriteString("</th>")
		for c, j := range colIdx {
			if c > 0 && j != colIdx[c-1]+1 {
				b.WriteString("<td>…</td>")
			}
			b.WriteString("<td>" + cell(base+i*rowStride+j*colStride) + "</td>")
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</tbody>\n</table>\n</div>\n")
}

// image draws the tensor (see Image).
func (r *elemReader) image() (image.Image, error) {
	t := r.t
	shape := t.shape
	channels := int64(1)
	switch {
	case len(shape) == 2:
	case len(shape) == 3 && (shape[2] == 1 || shape[2] == 3 || shape[2] == 4):
		channels = shape[2]
	default:
		return nil, errs.Errorf(ErrNotImage, "display: shape %s is neither [H, W] nor [H, W, 1|3|4]", pyShape(shape))
	}
	h, w := shape[0], shape[1]
	if h == 0 || w == 0 {
		return nil, errs.Errorf(ErrNotImage, "display: shape %s is empty", pyShape(shape))
	}
	if h > imageMaxPixels || w > imageMaxPixels || h*w > imageMaxPixels {
		return nil, errs.Errorf(ErrNotImage, "display: shape %s has more than %d pixels", pyShape(shape), imageMaxPixels)
	}
	if r.kind.complex() {
		return nil, errs.Errorf(ErrNotImage, "display: complex %s elements cannot be shown as pixels", t.dtype)
	}
	at := func(y, x, c int64) int64 {
		off := y*t.strides[0] + x*t.strides[1]
		if len(shape) == 3 {
			off += c * t.strides[2]
		}
		return off
	}
	rect := image.Rect(0, 0, int(w), int(h))
	if channels == 1 {
		img := image.NewGray(rect)
		if r.kind == kindBool {
			for y := int64(0); y < h; y++ {
				for x := int64(0); x < w; x++ {
					if r.boolAt(at(y, x, 0)) {
						img.Pix[int(y)*img.Stride+int(x)] = 255
					}
				}
			}
			return img, nil
		}
		lo, hi := math.Inf(1), math.Inf(-1)
		for y := int64(0); y < h; y++ {
			for x := int64(0); x < w; x++ {
				if v := r.floatAt(at(y, x, 0)); !math.IsNaN(v) && !math.IsInf(v, 0) {
					lo, hi = min(lo, v), max(hi, v)
				}
			}
		}
		// where v lies in [lo, hi]; computed in halves where hi - lo overflows
		// (values across ±MaxFloat64), which would lose the smallest subnormals elsewhere
		scale := func(v float64) float64 { return (v - lo) / (hi - lo) }
		if math.IsInf(hi-lo, 1) {
			scale = func(v float64) float64 { return (v/2 - lo/2) / (hi/2 - lo/2) }
		}
		for y := int64(0); y < h; y++ {
			for x := int64(0); x < w; x++ {
				v := r.floatAt(at(y, x, 0))
				var g uint8
				switch {
				case math.IsInf(v, 1):
					g = 255
				case math.IsNaN(v) || math.IsInf(v, -1) || hi <= lo:
					g = 0
				default:
					g = uint8(math.Round(scale(v) * 255))
				}
				img.Pix[int(y)*img.Stride+int(x)] = g
			}
		}
		return img, nil
	}
	var channel func(off int64) uint8
	switch {
	case t.dtype == core.Uint8:
		channel = func(off int64) uint8 { return *(*uint8)(r.ptr(off)) }
	case r.kind.float():
		channel = func(off int64) uint8 {
			v := r.floatAt(off)
			switch {
			case math.IsNaN(v) || v <= 0:
				return 0
			case v >= 1:
				return 255
			}
			return uint8(math.Round(v * 255))
		}
	default:
		return nil, errs.Errorf(ErrNotImage, "display: %d channels need uint8 or floating-point values, not %s", channels, t.dtype)
	}
	img := image.NewNRGBA(rect)
	for y := int64(0); y < h; y++ {
		for x := int64(0); x < w; x++ {
			c := color.NRGBA{R: channel(at(y, x, 0)), G: channel(at(y, x, 1)), B: channel(at(y, x, 2)), A: 255}
			if channels == 4 {
				c.A = channel(at(y, x, 3))
			}
			img.SetNRGBA(int(x), int(y), c)
		}
	}
	return img, nil
}
