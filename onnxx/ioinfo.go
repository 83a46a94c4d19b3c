package onnxx

import (
	"strconv"
	"strings"
)

// String describes the input or output on one line, as a notebook or a log shows it: its name,
// its element type and its shape, each dimension its size, its symbolic name ("batch") or "?"
// when dynamic and unnamed; "any shape" for an unknown rank, "scalar" for rank 0. An overridable
// initializer says so, and a value this package cannot pass says why:
//
//	X: float32 [batch 3 224 224]
//	W: float32 [3 3], initializer
//	S: string [?], unsupported: ...
func (i IOInfo) String() string {
	var b strings.Builder
	b.WriteString(i.Name)
	b.WriteString(": ")
	if i.DType.Bits != 0 {
		b.WriteString(i.DType.String())
	} else {
		b.WriteString("ONNX " + i.ElementType.String())
	}
	switch {
	case i.UnknownRank:
		b.WriteString(", any shape")
	case len(i.Shape) == 0:
		b.WriteString(", scalar")
	default:
		b.WriteString(" [")
		for k, d := range i.Shape {
			if k > 0 {
				b.WriteByte(' ')
			}
			switch {
			case d >= 0:
				b.WriteString(strconv.FormatInt(d, 10))
			case k < len(i.Symbols) && i.Symbols[k] != "":
				b.WriteString(i.Symbols[k])
			default:
				b.WriteByte('?')
			}
		}
		b.WriteByte(']')
	}
	if i.Initializer {
		b.WriteString(", initializer")
	}
	if i.err != nil {
		b.WriteString(", unsupported: ")
		b.WriteString(i.err.Error())
	}
	return b.String()
}
