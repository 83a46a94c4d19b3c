// Command tensorinfo shows what tensor files hold: for every array of a NumPy .npy file or .npz
// archive, tensor of a .safetensors or GGUF file (model weights; memory-mapped, so files larger
// than memory work), or tensor column of a Parquet file, its name, dtype, shape, byte order, memory layout and size, and on request a summary
// of its values (-stats: min, max and mean of the values that are not NaN, and the NaN count;
// for a Parquet column with nulls, the null count and the summary of the other values) or
// a NumPy-style excerpt (-repr), as text or as JSON (-json).
//
// Install it with
//
//	go install github.com/dlpack-go/dlpack/cmd/tensorinfo@latest
//
// Usage:
//
//	tensorinfo [-stats] [-repr] [-json] [-name KEY] [-max-inflated BYTES] FILE...
//
// Examples:
//
//	$ tensorinfo weights.npz
//	weights.npz (npz, 2 arrays)
//	NAME  DTYPE          SHAPE      BYTE ORDER     LAYOUT         ELEMENTS  BYTES
//	w     float32 (<f4)  (784, 10)  little-endian  C (row-major)  7840      31360
//	b     float32 (<f4)  (10,)      little-endian  C (row-major)  10        40
//
//	$ tensorinfo -stats -name w weights.npz
//	weights.npz (npz, 1 array)
//	NAME  DTYPE          SHAPE      BYTE ORDER     LAYOUT         ELEMENTS  BYTES  MIN   MAX  MEAN  NANS
//	w     float32 (<f4)  (784, 10)  little-endian  C (row-major)  7840      31360  -0.5  0.5  0     0
//
//	$ tensorinfo -repr image.npy
//	image.npy (npy, 1 array)
//	NAME       DTYPE        SHAPE          BYTE ORDER      LAYOUT         ELEMENTS  BYTES
//	image.npy  uint8 (|u1)  (480, 640, 3)  not applicable  C (row-major)  921600    921600
//
//	"image.npy" =
//	array([[[  0,   0,   0],
//	        ...
//	        [255, 255, 255]]], dtype=uint8, readonly=True)
//
//	$ tensorinfo -json -stats *.npy | jq '.[].arrays[] | {name, nan_count: .stats.nan_count}'
//
// A .npy or .safetensors file is memory-mapped (numpyx.Map, safetensorsx.Open), so a file larger
// than memory is listed, summarised (-stats reads every value once, through the page cache) and
// excerpted (-repr reads only the values shown) without being loaded. Data that cannot be
// mapped as it lies (the other byte order than this machine's, unaligned data) is read into
// memory, up to 1 GiB. An .npz member, compressed or not, is summarised by streaming it through
// a 1 MiB buffer (whatever its size), and read into memory for an excerpt, up to 1 GiB (a larger
// one is noted, not shown); listing reads only the headers.
//
// Files are untrusted: a malformed, truncated or hostile file (a header that promises more than
// the file holds, a shape whose size overflows, a corrupt archive) is reported with the readers'
// error, naming the file, and tensorinfo exits with status 1 after the other files are shown.
// Usage errors exit with status 2. What is not a regular file (a named pipe, a device, a
// directory) is refused before it is opened, so that a pipe nobody writes to cannot block the
// command. An .npz archive whose members share compressed data (zip entries over one stream, as
// zip bombs are built) is refused when it is opened, and what one .npz file may inflate, headers,
// arrays and all, is capped by -max-inflated (16 GiB by default; 0 for no limit): past it, the
// file is reported with numpyx.ErrTooLarge's error, which names the flag. The same cap bounds
// what decoding one Parquet column may take (parquetx.MaxDecoded: Parquet's run-length encoding
// lets a few bytes claim a billion rows). Members of an archive
// are found by key in constant time, so -stats of an archive of 100,000 members takes time in
// proportion to its size.
//
// A GGUF file (llama.cpp's models; ggufx.Open, by memory map) lists every tensor with the dtype
// of the values tensorinfo reads and, in parentheses, the ggml type as stored: "float32 (F32)"
// for a plain tensor, read over the mapping, and "float32 (Q4_K, 256 per 144-byte block)" for a
// quantized one, whose BYTES are its blocks' and whose values (-stats, -repr) are dequantized to
// float32 (ggufx's Dequantize, every quantized type of ggml), in memory up to 1 GiB; one larger,
// or of a type ggufx does not dequantize (ggufx.Dequantizable), is listed with no summary, and
// -repr says why. A tensor of a type number ggml does not have or has removed, or in a fork's
// layout under a mainline number, is listed as its bytes: "uint8 (type 157 (unknown))". The
// header line carries the GGUF version, alignment, key and tensor counts, general.architecture
// and general.name; -json writes every metadata key ("metadata": arrays as JSON arrays). The first
// shard of a split model (PREFIX-00001-of-NNNNN.gguf) lists the tensors of every shard
// (ggufx.OpenSplit; "shards" in -json); another shard is listed alone.
//
//	$ tensorinfo tiny.gguf
//	tiny.gguf (gguf, 3 arrays; GGUF v3, alignment 32, 2 keys, 3 tensors, general.architecture "llama", general.name "tiny")
//	NAME         DTYPE                                 SHAPE    BYTE ORDER     LAYOUT         ELEMENTS  BYTES
//	norm.weight  float32 (F32)                         (2, 3)   little-endian  C (row-major)  6         24
//	attn.weight  float32 (Q8_0, 32 per 34-byte block)  (2, 32)  little-endian  C (row-major)  64        68
//	ffn.weight   float32 (Q4_0, 32 per 18-byte block)  (1, 32)  little-endian  C (row-major)  32        18
//
// A Parquet file lists the columns that arrowx/parquetx reads as tensors (primitive numeric and
// bool columns, FixedSizeList and arrow.fixed_shape_tensor columns: parquetx.Columns, the footer
// only) with shape [rows, ...]; its header line gives the rows and row groups. A column is
// summarised one row group at a time (each up to 1 GiB decoded), and decoded whole, up to 1
// GiB, for an excerpt. An arrow.variable_shape_tensor column, a tensor of its own shape per row,
// is listed with shape (rows, ...) whose dimensions are "?" where the rows differ (the type's
// uniform_shape gives the others), the layout of each row, and "-" for ELEMENTS and BYTES,
// which the footer does not tell (-json: "variable_shape": true, -1 for the dimensions that
// differ, null elements and bytes); -stats summarises its rows row group by row group
// (parquetx.ReadTensors), and -repr shows no excerpt of it.
//
//	$ tensorinfo boxes.parquet
//	boxes.parquet (parquet, 2 arrays; 3 rows in 1 row group)
//	NAME   DTYPE                                  SHAPE      BYTE ORDER     LAYOUT                  ELEMENTS  BYTES
//	id     int64 (int64)                          (3,)       little-endian  C (row-major)           3         24
//	boxes  float32 (arrow.variable_shape_tensor)  (3, ?, ?)  little-endian  per row, C (row-major)  -         -
//
// The format is chosen by the file's extension, else by its first bytes. Each format is one
// small file of this command (npy.go, npz.go, safetensors.go, gguf.go, parquet.go) that
// registers itself.
package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/x448/float16"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/display"
	"github.com/dlpack-go/dlpack/internal/errs"
	"github.com/dlpack-go/dlpack/internal/tensorio"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

type options struct {
	stats, repr, json bool
	name              string
	maxInflated       int64 // bytes one .npz file may inflate, or one Parquet column decode; 0 for no limit
}

// defaultMaxInflated is -max-inflated's default: far above what the archives people exchange
// inflate to, far below what a hostile one can (deflate reaches about 1000:1).
const defaultMaxInflated = 16 << 30

// run is the command: it returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tensorinfo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.BoolVar(&o.stats, "stats", false, "summarise the values: min, max, mean (NaN excluded), NaN count")
	fs.BoolVar(&o.repr, "repr", false, "print a NumPy-style excerpt of the values")
	fs.BoolVar(&o.json, "json", false, "write JSON: an array with one object per file")
	fs.StringVar(&o.name, "name", "", "show only the array with this name (an .npz key, a .safetensors or GGUF tensor name, a Parquet column)")
	fs.Int64Var(&o.maxInflated, "max-inflated", defaultMaxInflated,
		"the bytes one .npz file may inflate (headers, arrays and all), or one Parquet column decode; 0 for no limit")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: tensorinfo [-stats] [-repr] [-json] [-name KEY] [-max-inflated BYTES] FILE...")
		fmt.Fprintln(stderr, "Shows the arrays of .npy, .npz, .safetensors, GGUF (.gguf) and Parquet (.parquet) files.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() == 0 || o.maxInflated < 0 {
		if o.maxInflated < 0 {
			fmt.Fprintf(stderr, "tensorinfo: -max-inflated=%d is negative (0 for no limit)\n", o.maxInflated)
		}
		fs.Usage()
		return 2
	}
	status := 0
	var reports []fileReport
	for _, path := range fs.Args() {
		r, err := inspect(path, o)
		if err != nil {
			fmt.Fprintf(stderr, "tensorinfo: %s\n", naming(path, err))
			status = 1
			if !o.json {
				continue
			}
			r.Error = err.Error()
		}
		if o.json {
			reports = append(reports, r)
		} else {
			writeText(stdout, r, o)
		}
	}
	if o.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if reports == nil {
			reports = []fileReport{}
		}
		if err := enc.Encode(reports); err != nil {
			fmt.Fprintf(stderr, "tensorinfo: %v\n", err)
			return 1
		}
	}
	return status
}

// naming is err's message, led by path unless the message names the file already (an open
// error, ggufx's "(in PATH)"): each line names its file once.
func naming(path string, err error) string {
	msg := err.Error()
	if strings.Contains(msg, path) {
		return msg
	}
	return path + ": " + msg
}

// fileReport is what -json writes for a file.
type fileReport struct {
	File   string `json:"file"`
	Format string `json:"format,omitempty"`
	// Summary is what the format says of the file besides its arrays, for the header line
	// ("GGUF v3, alignment 32, ..."; "6 rows in 1 row group").
	Summary string `json:"summary,omitempty"`
	// Metadata is a GGUF file's metadata: every key, scalars as JSON values, arrays
	// summarised as "[N]type".
	Metadata map[string]any `json:"metadata,omitempty"`
	// Shards are the files of a split GGUF model, in order.
	Shards []string      `json:"shards,omitempty"`
	Arrays []arrayReport `json:"arrays"`
	Error  string        `json:"error,omitempty"`
}

// arrayReport is what -json writes for an array.
type arrayReport struct {
	Name  string `json:"name"`
	DType string `json:"dtype"`
	Descr string `json:"descr,omitempty"`
	// Shape is the array's shape; for a variable-shape array (VariableShape), its rows, then
	// each dimension the rows share, -1 for those that differ.
	Shape     []int64 `json:"shape"`
	ByteOrder string  `json:"byte_order"`
	Layout    string  `json:"layout"`
	// Elements and Bytes are nil (null) where the file's metadata does not tell them (a
	// variable-shape array).
	Elements *int64 `json:"elements"`
	Bytes    *int64 `json:"bytes"`
	// VariableShape reports an array of a tensor of its own shape per row (a Parquet
	// arrow.variable_shape_tensor column).
	VariableShape bool   `json:"variable_shape,omitempty"`
	Stats         *stats `json:"stats,omitempty"`
	Repr          string `json:"repr,omitempty"`
}

// inspect opens path and describes its arrays (their values too, as o asks).
func inspect(path string, o options) (fileReport, error) {
	r := fileReport{File: path, Arrays: []arrayReport{}}
	// never a plain open: a named pipe nobody writes to would block it (see tensorio.OpenRegular)
	f, _, err := tensorio.OpenRegular(path, "", errNotRegular)
	if nr := (*tensorio.NotRegularError)(nil); errors.As(err, &nr) {
		return r, errs.Errorf(errNotRegular, "it is %s, not a regular file", nr.Kind)
	}
	if err != nil {
		return r, err
	}
	head := make([]byte, 16)
	n, _ := io.ReadFull(f, head)
	f.Close()
	ft, ok := formatFor(path, head[:n])
	if !ok {
		names := make([]string, len(formats))
		for i, f := range formats {
			names[i] = f.name
		}
		return r, fmt.Errorf("not a tensor file this tool reads (%s)", strings.Join(names, ", "))
	}
	r.Format = ft.name
	c, err := ft.open(path, o)
	if err != nil {
		return r, err
	}
	defer c.close()
	if d, ok := c.(describer); ok {
		d.describe(&r)
	}
	found := false
	for i, e := range c.entries() {
		if o.name != "" && e.name != o.name {
			continue
		}
		found = true
		a := arrayReport{Name: e.name, DType: e.dtype.String(), Descr: e.descr, Shape: e.shape,
			ByteOrder: e.byteOrder(), Layout: e.layout(), VariableShape: e.variable}
		if !e.variable {
			n, b := e.len(), e.nbytes()
			a.Elements, a.Bytes = &n, &b
		}
		if a.Shape == nil {
			a.Shape = []int64{}
		}
		if err := values(c, i, o, &a); err != nil {
			return r, fmt.Errorf("array %q: %w", e.name, err)
		}
		r.Arrays = append(r.Arrays, a)
	}
	if o.name != "" && !found {
		return r, fmt.Errorf("no array named %q", o.name)
	}
	return r, nil
}

// values fills in the summary and the excerpt of entry i, as o asks.
func values(c container, i int, o options, a *arrayReport) error {
	if !o.stats && !o.repr {
		return nil
	}
	if s, ok := c.(summarizer); ok && o.stats {
		var err error
		a.Stats, err = s.summarize(i)
		if err != nil && !errors.Is(err, errNoStats) { // complex: shown without a summary
			return err
		}
		if !o.repr {
			return nil
		}
	}
	t, err := c.tensor(i)
	if errors.Is(err, errNotConverted) || errors.Is(err, errTooLarge) && o.repr {
		if o.repr {
			a.Repr = "(not shown: " + err.Error() + ")"
		}
		return nil
	}
	if err != nil {
		return err
	}
	defer t.Release()
	if o.stats && a.Stats == nil {
		a.Stats, err = summarize(t)
		if err != nil && !errors.Is(err, errNoStats) {
			return err
		}
	}
	if o.repr {
		a.Repr = display.Repr(t)
	}
	return nil
}

func writeText(w io.Writer, r fileReport, o options) {
	plural := "s"
	if len(r.Arrays) == 1 {
		plural = ""
	}
	summary := ""
	if r.Summary != "" {
		summary = "; " + r.Summary
	}
	fmt.Fprintf(w, "%s (%s, %d array%s%s)\n", r.File, r.Format, len(r.Arrays), plural, summary)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	cols := "NAME\tDTYPE\tSHAPE\tBYTE ORDER\tLAYOUT\tELEMENTS\tBYTES"
	if o.stats {
		cols += "\tMIN\tMAX\tMEAN\tNANS"
	}
	fmt.Fprintln(tw, cols)
	for _, a := range r.Arrays {
		dt := a.DType
		if a.Descr != "" {
			dt += " (" + a.Descr + ")"
		}
		shape := pyShape(a.Shape)
		if a.VariableShape {
			shape = strings.ReplaceAll(shape, "-1", "?") // the dimensions the rows do not share
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s", strconv.Quote(a.Name)[1:len(strconv.Quote(a.Name))-1], dt,
			shape, a.ByteOrder, a.Layout, optCount(a.Elements), optCount(a.Bytes))
		if o.stats {
			if s := a.Stats; s != nil {
				fmt.Fprintf(tw, "\t%s\t%s\t%s\t%d", s.Min, s.Max, s.Mean, s.NaN)
				if s.Nulls > 0 {
					fmt.Fprintf(tw, " (%d null)", s.Nulls)
				}
			} else {
				fmt.Fprint(tw, "\t-\t-\t-\t-")
			}
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	if o.repr {
		for _, a := range r.Arrays {
			fmt.Fprintf(w, "\n%s =\n%s\n", strconv.Quote(a.Name), a.Repr)
		}
	}
	fmt.Fprintln(w)
}

// optCount writes a count, or "-" where it is not known.
func optCount(n *int64) string {
	if n == nil {
		return "-"
	}
	return strconv.FormatInt(*n, 10)
}

// pyShape writes a shape as a Python tuple: (), (3,), (2, 3).
func pyShape(shape []int64) string {
	parts := make([]string, len(shape))
	for i, d := range shape {
		parts[i] = strconv.FormatInt(d, 10)
	}
	if len(shape) == 1 {
		return "(" + parts[0] + ",)"
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// num is a summary value: a JSON number when finite, else the string "nan", "inf" or "-inf"
// (JSON has no such numbers); null when there is no value (no element that is not NaN).
type num struct {
	v  float64
	ok bool
}

func (n num) String() string {
	if !n.ok {
		return "-"
	}
	return strconv.FormatFloat(n.v, 'g', 8, 64)
}

func (n num) MarshalJSON() ([]byte, error) {
	switch {
	case !n.ok:
		return []byte("null"), nil
	case math.IsNaN(n.v):
		return []byte(`"nan"`), nil
	case math.IsInf(n.v, 1):
		return []byte(`"inf"`), nil
	case math.IsInf(n.v, -1):
		return []byte(`"-inf"`), nil
	}
	return strconv.AppendFloat(nil, n.v, 'g', -1, 64), nil
}

// UnmarshalJSON reads what MarshalJSON writes.
func (n *num) UnmarshalJSON(b []byte) error {
	switch s := string(b); s {
	case "null":
		*n = num{}
	case `"nan"`:
		*n = num{math.NaN(), true}
	case `"inf"`:
		*n = num{math.Inf(1), true}
	case `"-inf"`:
		*n = num{math.Inf(-1), true}
	default:
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return fmt.Errorf("tensorinfo: summary value %s: %w", s, err)
		}
		*n = num{v, true}
	}
	return nil
}

// stats summarises the values of a real tensor: over the values that are not NaN, their min,
// max and mean (NumPy's nanmin, nanmax, nanmean; bool counts as 0 and 1), and how many are NaN.
type stats struct {
	Min  num   `json:"min"`
	Max  num   `json:"max"`
	Mean num   `json:"mean"`
	NaN  int64 `json:"nan_count"`
	// Nulls is the number of null elements of a Parquet column (the others are summarised)
	Nulls int64 `json:"null_count,omitempty"`
}

var errNoStats = errors.New("no summary for this dtype")

// errNotRegular: the path is a named pipe, a device, a socket or a directory, which could block
// the command or never end; tensorinfo reads regular files only.
var errNotRegular = errors.New("not a regular file")

// summarize reads every element once, in memory order (which a summary does not depend on), so
// that a memory-mapped file streams through the page cache.
func summarize(t *core.Tensor) (*stats, error) {
	acc := newAccumulator()
	if err := acc.addTensor(t); err != nil {
		return nil, err
	}
	return acc.stats(), nil
}

// addTensor adds the values of a C- or F-contiguous host tensor of a real dtype (errNoStats for
// others) to the summary.
func (a *accumulator) addTensor(t *core.Tensor) error {
	h, err := core.Hold(t)
	if err != nil {
		return err
	}
	defer h.Release()
	if !t.IsContiguous() && !t.IsFortranContiguous() {
		// a dense tensor in another order (a permuted arrow.fixed_shape_tensor column): its
		// dimensions in memory order, which a summary does not depend on
		v, err := memoryOrder(t)
		if err != nil {
			return err
		}
		defer v.Release()
		if !v.IsContiguous() {
			return errs.Errorf(core.ErrNotContiguous, "strides %v are not dense", t.Strides())
		}
		t = v
	}
	switch t.DType() {
	case core.Bool:
		return addVia(a, t, func(v bool) float64 {
			if v {
				return 1
			}
			return 0
		})
	case core.Int8:
		return addReal[int8](a, t)
	case core.Int16:
		return addReal[int16](a, t)
	case core.Int32:
		return addReal[int32](a, t)
	case core.Int64:
		return addReal[int64](a, t)
	case core.Uint8:
		return addReal[uint8](a, t)
	case core.Uint16:
		return addReal[uint16](a, t)
	case core.Uint32:
		return addReal[uint32](a, t)
	case core.Uint64:
		return addReal[uint64](a, t)
	case core.Float16:
		return addVia(a, t, func(v float16.Float16) float64 { return float64(v.Float32()) })
	case core.BFloat16:
		return addVia(a, t, func(v core.BF16) float64 { return float64(v.Float32()) })
	case core.Float32:
		return addReal[float32](a, t)
	case core.Float64:
		return addReal[float64](a, t)
	}
	return errs.Errorf(errNoStats, "no summary for %s", t.DType())
}

// memoryOrder is a view of t with its dimensions in decreasing order of stride.
func memoryOrder(t *core.Tensor) (*core.Tensor, error) {
	st := t.Strides()
	axes := make([]int, len(st))
	for i := range axes {
		axes[i] = i
	}
	slices.SortStableFunc(axes, func(a, b int) int { return cmp.Compare(st[b], st[a]) })
	return t.Permute(axes...)
}

// realElement is the element types whose values convert to float64 directly.
type realElement interface {
	int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64 | float32 | float64
}

// addReal adds the span of a real tensor. Values are summed in float64 in blocks, and the block
// sums with Neumaier's compensation, so that the mean of a long span keeps its digits.
func addReal[T realElement](acc *accumulator, t *core.Tensor) error {
	span, _, err := core.ReadOnlySpan[T](t)
	if err != nil {
		return err
	}
	const block = 1024
	for len(span) > 0 {
		n := min(block, len(span))
		lo, hi, sum := acc.lo, acc.hi, 0.0
		var nan, count int64
		for _, v := range span[:n] {
			x := float64(v)
			if x != x {
				nan++
				continue
			}
			count++
			sum += x
			if x < lo {
				lo = x
			}
			if x > hi {
				hi = x
			}
		}
		acc.lo, acc.hi = lo, hi
		acc.add(sum, count, nan)
		span = span[n:]
	}
	return nil
}

// addVia is addReal for elements that convert through f (bool, float16, bfloat16).
func addVia[T core.Element](acc *accumulator, t *core.Tensor, f func(T) float64) error {
	span, _, err := core.ReadOnlySpan[T](t)
	if err != nil {
		return err
	}
	for _, v := range span {
		x := f(v)
		if x != x {
			acc.add(0, 0, 1)
			continue
		}
		acc.lo, acc.hi = min(acc.lo, x), max(acc.hi, x)
		acc.add(x, 1, 0)
	}
	return nil
}

// accumulator gathers a summary: the min and max seen, and the sum of the values that are not
// NaN, with Neumaier's compensation.
type accumulator struct {
	lo, hi     float64
	sum, comp  float64
	count, nan int64
	nulls      int64 // null elements of a Parquet column, not among the values
}

func newAccumulator() *accumulator { return &accumulator{lo: math.Inf(1), hi: math.Inf(-1)} }

func (a *accumulator) add(sum float64, count, nan int64) {
	a.nan += nan
	if count == 0 {
		return
	}
	a.count += count
	u := a.sum + sum
	if math.Abs(a.sum) >= math.Abs(sum) {
		a.comp += (a.sum - u) + sum
	} else {
		a.comp += (sum - u) + a.sum
	}
	a.sum = u
}

func (a *accumulator) stats() *stats {
	s := &stats{NaN: a.nan, Nulls: a.nulls}
	if a.count > 0 {
		total := a.sum + a.comp
		if math.IsInf(a.sum, 0) || math.IsNaN(a.sum) { // an infinity among the values
			total = a.sum
		}
		s.Min, s.Max, s.Mean = num{a.lo, true}, num{a.hi, true}, num{total / float64(a.count), true}
	}
	return s
}
