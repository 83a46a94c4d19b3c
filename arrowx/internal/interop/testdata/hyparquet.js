// The hyparquet side of the interoperability matrix (arrowx/internal/interop): hyparquet and
// hyparquet-writer, a Parquet implementation in JavaScript that is not Arrow's.
//
// node -e <this> write|read MANIFEST
//
// write: writes every matrix cell's file with hyparquet-writer: columns c0, c1, ... of the
// [rows, cols] matrix of the cell's values, of the Parquet type of its dtype (REQUIRED, or
// OPTIONAL for nullable cells), in row groups of 1000 rows and then 100000 (its default). read:
// reads every cell's file (written by dlpack-go) with hyparquet, checks that the file stores its
// Arrow schema (ARROW:schema) and every value and row shape. Prints {cell name: "ok" or what was
// wrong} as JSON. Values follow the formula of spec_test.go.
const fs = require("fs");

const MUL = 0x9E3779B97F4A7C15n, ADD = 12345n;
const WIDTH = { int8: 8, int16: 16, int32: 32, int64: 64, uint8: 8, uint16: 16, uint32: 32, uint64: 64 };

function value(dtype, k) {
  if (dtype === "bool8") return k % 3 === 1 ? 0 : 1;
  if (dtype === "bool") return k % 3 !== 1;
  if (dtype.startsWith("float")) return (((37 * k) % 101) - 50) / 8;
  const w = WIDTH[dtype];
  const u = BigInt(k) * MUL + ADD;
  const v = dtype.startsWith("int") ? BigInt.asIntN(w, u) : BigInt.asUintN(w, u);
  return w === 64 ? v : Number(v);
}

const PARQUET = {
  float16: { type: "FIXED_LEN_BYTE_ARRAY", type_length: 2, logical_type: { type: "FLOAT16" } },
  float32: { type: "FLOAT" }, float64: { type: "DOUBLE" },
  int8: { type: "INT32", converted_type: "INT_8" }, int16: { type: "INT32", converted_type: "INT_16" },
  int32: { type: "INT32" }, int64: { type: "INT64" },
  uint8: { type: "INT32", converted_type: "UINT_8" }, uint16: { type: "INT32", converted_type: "UINT_16" },
  uint32: { type: "INT32", converted_type: "UINT_32" }, uint64: { type: "INT64", converted_type: "UINT_64" },
  bool: { type: "BOOLEAN" },
};

const prod = (s) => s.reduce((a, b) => a * b, 1);

(async () => {
  const { parquetWriteBuffer } = await import("hyparquet-writer");
  const { parquetReadObjects, parquetMetadata } = await import("hyparquet");

  function write(spec, c) {
    if (c.kind !== "matrix") throw new Error("hyparquet-writer writes the matrix cells only");
    const { rows, cols } = spec.matrix;
    const columnData = [];
    const schema = [{ name: "root", num_children: cols }];
    for (let j = 0; j < cols; j++) {
      const data = [];
      for (let i = 0; i < rows; i++) data.push(value(c.dtype, i * cols + j));
      columnData.push({ name: "c" + j, data });
      schema.push({ name: "c" + j, ...PARQUET[c.dtype], repetition_type: c.nullable ? "OPTIONAL" : "REQUIRED" });
    }
    fs.writeFileSync(c.path, new Uint8Array(parquetWriteBuffer({ columnData, schema })));
  }

  function same(got, want, what) {
    if (got !== want) throw new Error(`${what} is ${got}, want ${want}`);
  }

  async function check(spec, c) {
    const b = fs.readFileSync(c.path);
    const file = b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength);
    const md = parquetMetadata(file);
    if (!(md.key_value_metadata || []).some((kv) => kv.key === "ARROW:schema")) throw new Error("no ARROW:schema in the file's metadata");
    const rows = await parquetReadObjects({ file });
    if (c.kind === "matrix") {
      const { rows: n, cols } = spec.matrix;
      same(rows.length, n, "rows");
      rows.forEach((r, i) => { for (let j = 0; j < cols; j++) same(r["c" + j], value(c.dtype, i * cols + j), `c${j}[${i}]`); });
      return;
    }
    if (c.kind === "fixed_shape") {
      const f = spec.fixed, size = prod(f.shape);
      same(rows.length, f.rows, "tensors");
      rows.forEach((r, i) => {
        same(r.tensor.length, size, `tensor ${i}'s length`);
        r.tensor.forEach((v, e) => same(v, value(c.dtype, i * size + e), `tensor ${i} value ${e}`));
      });
      return;
    }
    const shapes = spec.variable.shapes;
    same(rows.length, shapes.length, "tensors");
    let k = 0;
    rows.forEach((r, i) => {
      same(JSON.stringify(r.tensor.shape), JSON.stringify(shapes[i]), `tensor ${i}'s shape`);
      same(r.tensor.data.length, prod(shapes[i]), `tensor ${i}'s length`);
      r.tensor.data.forEach((v) => { same(v, value(c.dtype, k), `tensor ${i} value ${k}`); k++; });
    });
  }

  const [mode, path] = process.argv.slice(1);
  const m = JSON.parse(fs.readFileSync(path, "utf8"));
  const out = {};
  for (const c of m.cells) {
    try {
      await (mode === "write" ? write : check)(m.spec, c);
      out[c.name] = "ok";
    } catch (e) {
      out[c.name] = String(e && e.stack ? e.stack.split("\n").slice(0, 3).join(" | ") : e);
    }
  }
  console.log(JSON.stringify(out));
})().catch((e) => { console.error(e); process.exit(1); });
