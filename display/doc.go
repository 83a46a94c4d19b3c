// Package display shows tensors to people: Repr writes a tensor the way NumPy's repr writes an
// array, HTML writes a table under a caption line (dtype, shape, device, strides, layout, flags),
// Image draws a 2-D tensor (or [H, W, 1|3|4]) as a picture, and MIME bundles the three by MIME
// type, for notebooks.
//
// Importing this package installs MIME as what core.Tensor.SimpleRender returns (core.SetRenderer),
// the method Jupyter's Go kernel (gophernotes) calls on the last value of a cell: a notebook that
// imports core and display sees every tensor as its HTML table, and a picture where the tensor
// reads as one. Package core stays free of image and HTML code; it keeps only that method.
//
// # Invariants
//
//   - Nothing here changes a tensor, and device memory is never read: a tensor whose memory the
//     CPU cannot address, a released one, or one whose dtype has no decoding (float8, sub-byte,
//     vector lanes, opaque handles) is shown by its metadata alone.
//   - Every function holds the tensor's memory (core.Hold) while it reads it; a tensor released
//     meanwhile on another goroutine is shown as released, never read after it is gone.
//   - Output is bounded whatever the shape: Repr summarises as NumPy does (and gives a one-line
//     summary past 2^20 shown elements), HTML shows at most 20 entries of a dimension and 4 2-D
//     slices, pictures are drawn up to 2^26 pixels (Image) and embedded up to 2048 on a side.
//   - The HTML is a well-formed fragment: every tag is closed, every text and attribute value
//     is escaped (tensor metadata such as dtype names included).
package display
