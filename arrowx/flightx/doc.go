// Package flightx moves named tensors between processes and machines over Apache Arrow Flight
// (gRPC), with arrow-go's Flight implementation: a Server that holds tensors and serves them,
// and a Client that fetches (DoGet), sends (DoPut) and lists (ListFlights) them. Any dtype the
// suite knows travels (sub-byte types excepted), any shape, with string metadata. The streams
// are plain Arrow record batches, so a Python service needs only pyarrow.flight to speak to it:
// devicecheck/check_pyarrow.py does DoGet, DoPut and ListFlights with pyarrow.flight against a Go
// server where Python has pyarrow (the GPU host's device check; the tests here talk to Go peers
// and hand-made streams: Debian 12 has no pyarrow).
//
// It is pure Go (no cgo). It is not a tensor store: the server keeps tensors in memory, with no
// persistence or eviction (see the example in examples/flight for what serving many clients
// would take).
//
// # Access
//
// By default Serve speaks plain TCP and anyone who reaches its port may put, overwrite and
// delete tensors: fine on loopback, not across a network. WithTLS serves over TLS (and WithClientCAs
// requires client certificates: mutual TLS); WithTokens admits only callers that send one of its
// bearer tokens ("authorization: Bearer <token>"), each ReadOnly (list, describe, fetch) or
// ReadWrite (also put, overwrite, delete), refusing the others with gRPC status Unauthenticated or
// PermissionDenied before the store is touched. A Client takes the matching WithTLS and WithToken;
// SelfSigned makes a certificate when no authority is at hand. Client.Delete (the Flight action
// "delete") removes a tensor.
//
// # Wire format
//
// A tensor is one Flight stream. Its ticket (DoGet) and its descriptor path (DoPut, ListFlights)
// is the tensor's name. The schema has one column, "data", of Arrow's canonical extension type
// arrow.fixed_shape_tensor (arrowx.FixedShapeTensorType: a FixedSizeList storage, with
// ARROW:extension:name and the JSON ARROW:extension:metadata {"shape":[...]} on the field), so
// that a Flight client in any language finds the element type and the shape in Arrow's own
// types; and the schema's metadata says the rest:
//
//	dlpack.dtype   the element type, as core.DLDataType.String writes it: "float32", "bfloat16", "complex64", "bool", "int8x4"
//	dlpack.shape   the whole shape, decimal sizes joined by commas: "2,3,4" ("" for a 0-d tensor)
//	dlpack.order   "C": the rows hold the elements in row-major order
//	anything else  the tensor's own metadata (keys must not start with "dlpack.")
//
// Each row of the column is one tensor of the trailing dimensions: a tensor of shape [N, S...]
// whose rows of S take at most the sender's chunk size (WithChunkBytes, default 1 MiB) is a
// column of N rows of shape S, exactly as pyarrow's FixedShapeTensorArray.from_numpy_ndarray
// would make it, and the batches carry as many whole rows as fit the chunk size (one at least),
// the rows of the first dimension split across batches. When a row of the first dimension is
// larger than the chunk, the leading dimensions are merged: the rows are those of the first
// trailing run of dimensions that fits ([16, 1024, 1024] float32 in 1 MiB batches is a column
// of 16384 rows of shape [1024]; a [1, 64Mi] tensor, rows of single elements, shape []), so that
// every batch stays within the chunk size (or one row), and dlpack.shape gives the whole shape.
// A 0-d tensor is one row of shape []. The batches have no nulls; all but the last carry the
// same number of rows, at least half the chunk size when a row is smaller than that.
//
// What a reader that knows only Arrow sees: pyarrow (reader.read_all()) gets a table whose
// column is a pyarrow.FixedShapeTensorArray (pyarrow registers the type):
// column.combine_chunks().to_numpy_ndarray() is the tensor reshaped to [rows, S...], and
// .reshape(shape from dlpack.shape) gives it back. A reader where no fixed_shape_tensor type
// is registered (Java's arrow-vector unless the application registers one in its
// ExtensionTypeRegistry) gets the FixedSizeList<T> storage, the extension name and metadata in
// the field's metadata, and the same values. The element type is the Arrow primitive of the dtype
// when it has one (int8…uint64, float16, float32, float64). Dtypes Arrow lacks travel in the
// Arrow primitive of their width with their bits unchanged, and dlpack.dtype names them:
//
//	bool            uint8, one byte of 0 or 1 per element (numpy: .view(bool)); not bit-packed,
//	                so that it is sent and received without a copy and a receiver's memory stays
//	                bounded by what came (Arrow's canonical arrow.bool8 is the same bytes, but
//	                arrowx does not map extension element types yet)
//	bfloat16        uint16, the bfloat16 bits (numpy with ml_dtypes: .view(ml_dtypes.bfloat16))
//	float8_*        uint8, the float8 bits (ml_dtypes.float8_e4m3fn and so on)
//	complex64/128   float32/float64 with one more trailing dimension of 2, real then imaginary
//	                (numpy: .view(np.complex64)[..., 0])
//	lanes (int8x4)  the lane type with one more trailing dimension of the lane count
//
// A receiver checks that the column is the dtype's carrier of a row shape that ends the
// tensor's shape (no permutation), and refuses anything else with ErrProtocol. It still reads
// the format of earlier versions of this package, which WithFlatColumn sends: one flat column of
// the dtype's Arrow primitive (FixedSizeBinary of the element size for bool, bfloat16, complex,
// float8, lanes), batches of consecutive runs of elements, the shape only in dlpack.shape.
//
// A stream without dlpack.dtype and dlpack.shape, from a sender that knows only Arrow (pyarrow's
// flight.RecordBatchStream of a FixedShapeTensorArray, arrow-go's flight.NewRecordWriter), is
// read too: its one column, an arrow.fixed_shape_tensor of an Arrow primitive (no permutation)
// or a primitive column itself, gives the dtype and the row shape, and the number of rows is
// learnt at its end: the tensor is [rows, row shape...] ([elements] for a primitive column), its
// metadata the schema's. Such a receiver keeps the batches until the stream ends (one batch is
// kept as a view and returned as the tensor, without a copy; more are copied once into one),
// within WithMaxBytes (ErrTooLarge past it) and the server's WithMaxInFlight; Stream's Info has
// Shape[0] -1 (Info.Unsized) for such a stream. A plain stream whose one column is an
// arrow.variable_shape_tensor of an Arrow primitive (no permutation) is read as a list of
// tensors (see below), one a row across all its batches: Client.GetTensors returns it, and a
// server's DoPut stores it as a list, within WithMaxBytes (checked as its tensors come) and
// WithMaxInFlight; a null row is refused with ErrProtocol (and arrowx.ErrNulls).
//
// Every header is checked before arrow-go reads it, the metadata is parsed as untrusted input,
// and a stream announcing more than the receiver's limit (WithMaxBytes, default 1 GiB) is refused
// with ErrTooLarge. Bool bytes other than 0 and 1 are normalised to 1 (a Go bool must hold 0 or
// 1), as numpyx does with the bool data of files; a batch holding such bytes is copied rather
// than viewed.
//
// # Lists of tensors of their own shapes
//
// A list of tensors of one dtype and number of dimensions, each of its own shape (the boxes of
// a batch of images, token sequences), is one flight too: Server.PutTensors and
// Client.PutTensors store and send it, Client.GetTensors and Server.GetTensors give it back,
// List and GetFlightInfo describe it (Info.Variable, Info.Ndim, Info.Elements; Shape is [n],
// the number of tensors). Its one column, "data", is Arrow's canonical
// arrow.variable_shape_tensor (arrowx.VariableShapeTensorType: a Struct of "data", a List of
// the elements in row-major order, and "shape", a FixedSizeList<int32>[ndim]), one row a tensor,
// of the dtype's carrier as above (complex pairs and lanes add their trailing dimension; a 0-d
// tensor is a row of shape [1]); the schema's metadata holds dlpack.dtype, dlpack.order "C",
// dlpack.ndim, dlpack.tensors and dlpack.elements (the tensors, and their elements together),
// and no dlpack.shape, so that a receiver of this package reads it only as a list: Get of a list
// and GetTensors of one tensor fail with ErrMismatch, as does a list that mixes dtypes or numbers
// of dimensions. The batches carry whole tensors, as many as fit the sender's chunk size (one
// at least, however large), so that a receiver may keep each tensor as a view of its batch's
// message (GetTensors does: each tensor holds that message until released, as Get's tensors
// hold theirs). A receiver refuses a list whose elements and 64 bytes a tensor pass its
// WithMaxBytes with ErrTooLarge before anything is allocated, and checks every batch's counts,
// offsets and shapes against the metadata (ErrProtocol). An empty list travels as float32
// tensors of one dimension (the column needs a type).
//
// A reader that knows only Arrow gets the same column: arrow-go, with arrowx imported, an
// extension array of arrowx.VariableShapeTensorType whose Tensor(i) is tensor i (in its
// carrier's type, with the carrier's trailing dimension where there is one). pyarrow had no
// Python class for this type when this was written (no pa.VariableShapeTensorType: its wrapper,
// apache/arrow#40354, was still under review in 2026), so do not count on one: a pyarrow reader
// gets the column as its storage, a StructArray, with the extension's name and metadata in the
// field's metadata (what Arrow readers do with an extension type they do not know), or, where
// its C++ library registers the type, as an extension array whose .storage is that StructArray.
// Tensor i is then np.asarray(st.field("data")[i].values).reshape(st.field("shape")[i].as_py()),
// viewed as the dtype dlpack.dtype names where its carrier is another type (bool, bfloat16,
// float8, complex, lanes), as for a single tensor.
//
// # Memory a sender can make a server hold
//
// A server allocates as batches come, never what a stream announces: until half the tensor
// has come it keeps the batches (large ones as views of their messages, small ones copied into
// staging that grows with what came), then allocates the whole tensor. A stream thus holds at
// most about twice what it sent, and one and a half times the tensor while it is put together;
// a batch whose message carries much more than its values is copied out rather than kept as a
// view of it all. A server bounds the memory its DoPut streams hold together (WithMaxInFlight,
// default 2 GiB: a stream that would pass it is refused with ErrBusy) and ends a stream that
// sends nothing for its idle timeout (WithIdleTimeout, default 30 s: ErrIdle), releasing what
// it held. A Client's Get allocates the tensor at the first batch (what it asked for, within
// WithMaxBytes), so that each batch is copied once while it is still in the processor's cache;
// a large tensor gets mapped memory (package memory's NewUninit), whose pages are committed only as the
// batches write them. The same timeout ends a DoGet whose client stops reading (a send that waits that long
// for the client's flow-control window), so that such a client cannot hold a server goroutine
// and a view of the tensor until its connection closes. Server.InFlight tells the memory held
// now.
//
// # Zero-copy and copies
//
//	step                                                   copies
//	send a C-contiguous host tensor (Put on Dial's           none: each batch's body is the tensor's
//	connection)                                              own memory, handed to gRPC as a buffer
//	                                                         of its own (not marshalled), which the
//	                                                         transport writes to the socket
//	send it on another connection (NewClient), or the       none in this package: protobuf copies
//	server's DoGet                                           each body into the message's buffer
//	send any other layout                                   one C-order copy first
//	receive a tensor that fits one batch (Get, DoPut)       none after the network read: the tensor
//	                                                         is a read-only view of the received
//	                                                         message body, held until released
//	receive a larger tensor whole (Get, DoPut)              each batch once, into one C-order tensor
//	                                                         (flagged core.FlagIsCopied): gRPC gives
//	                                                         every message its own buffer, so one
//	                                                         contiguous tensor needs the copy;
//	                                                         in DoPut, batches under 64 KiB of the
//	                                                         first half twice (staged until the
//	                                                         tensor is allocated)
//	receive chunk by chunk (Stream)                         none: each chunk is a view of its message
//	store a list (Server.PutTensors)                        one: the tensors into one block, in C order
//	send a list (PutTensors, the server's DoGet of one)     the message body assembled once (values,
//	                                                         offsets and shapes are several buffers),
//	                                                         after one gather of each batch's tensors
//	                                                         into one buffer, except for a list that
//	                                                         Server.PutTensors stored (one block)
//	receive a list (GetTensors, DoPut)                      none after the network read: each tensor
//	                                                         is a read-only view of its batch's message
//
// A batch whose values a sender put at an address misaligned for their dtype (IPC aligns every
// buffer to 8 bytes: only a hostile or broken sender does this) is copied once into memory of its
// own (flagged core.FlagIsCopied), so that no element is read through a misaligned pointer.
//
// (Below this package, the network read: on Dial's connections and on the server Serve runs, each
// message's body is copied once out of gRPC's network buffers into memory of its own, from a pool
// that takes a body back once the receiver copied it into the tensor, the other fields decoded by
// protobuf; a connection from NewClient and a server given to Register keep gRPC's codec, which
// gathers the message into one buffer and has protobuf copy the body out of that. On Dial's
// connection Put's chunks leave as the tensor's memory: gRPC may read a chunk after the Put's last
// send, and after a Put that failed, so the Put holds a view of the tensor until gRPC has let go
// of every chunk, on every path. This uses gRPC's experimental ForceCodecV2 call option; the
// content type on the wire is application/grpc+proto, and the bytes are protobuf's; the server's
// codec is set with ForceServerCodecV2, experimental too.) Memory stays bounded: a sender holds
// the tensor and one batch in flight; a receiver of Stream one batch; a receiver of DoPut at most
// one and a half times the tensor, and one batch; of Get the tensor and one batch.
//
// # Ownership
//
// Server.Put keeps a view of the tensor (the caller may release its own); Delete, a later Put
// of the same name and Close release it, after transfers under way end. Tensors that Get
// returns hold the received memory (they count in core.LiveForeign) until released. Every
// transfer ends its gRPC stream before returning, whether it succeeded, failed, or its context
// was cancelled: no goroutine is left behind. A server whose listener fails stops (Serve
// returns only when nothing of it runs).
//
// A peer that goes away mid-transfer (a server stopped or killed, a connection closed or reset,
// while a Put sends or a Get receives) fails the transfer with ErrTransport as soon as the
// connection reports it, in milliseconds on a loopback. A peer that hangs with its connection
// open cannot be told from a slow one: only the context's deadline ends that transfer, so give
// long transfers one.
//
// # Errors
//
// ErrNotFound (no such tensor), ErrProtocol (a malformed stream, on either side), ErrMismatch
// (a destination that does not fit, a list of mixed tensors, a list asked for as one tensor or
// the reverse), ErrTooLarge
// (over the receiver's limit), ErrBusy (the server's memory in flight at its limit), ErrIdle
// (a stream the server's idle timeout ended), ErrTransport (the network or the peer failed: a server that died,
// a cancelled call), ErrName; the gRPC status stays wrapped inside (status.Code reads it).
//
// No stream is meant to panic a server; as defence in depth, a panic in one of its handlers
// (or in the goroutine that runs a DoGet's sends) ends only that call, with status Internal,
// after what the call held is released: it is logged with its stack (package log) and counted
// (Server.Panics), and the server goes on serving.
package flightx
