// Writes the benchmark's Parquet file with arrow-rs (parquet-wasm, its default writer
// properties): one column "tensor" of ROWS arrow.fixed_shape_tensor rows of shape [DIM] float32,
// with a non-nullable child as arrow-rs makes them; value k is
// ((k·2654435761) mod 2^32) / 2^32 - 0.5 as float32, as bench_test.go's.
//
// node -e <this> PATH ROWS DIM
const fs = require("fs");
const A = require("apache-arrow");
const PW = require("parquet-wasm/node");

const [path, rowsArg, dimArg] = process.argv.slice(1);
const rows = Number(rowsArg), dim = Number(dimArg), n = rows * dim;
const values = new Float32Array(n);
for (let k = 0; k < n; k++) values[k] = (Math.imul(k, 2654435761) >>> 0) / 4294967296 - 0.5;
const type = new A.FixedSizeList(dim, new A.Field("item", new A.Float32(), false));
const child = A.makeData({ type: new A.Float32(), length: n, data: values });
const data = A.makeData({ type, length: rows, child });
const md = new Map([["ARROW:extension:name", "arrow.fixed_shape_tensor"], ["ARROW:extension:metadata", JSON.stringify({ shape: [dim] })]]);
const schema = new A.Schema([new A.Field("tensor", type, false, md)]);
const batch = new A.RecordBatch(schema, A.makeData({ type: new A.Struct(schema.fields), length: rows, children: [data] }));
const wasm = PW.Table.fromIPCStream(A.tableToIPC(new A.Table(schema, batch), "stream"));
fs.writeFileSync(path, PW.writeParquet(wasm));
