// The JavaScript side of the interoperability matrix (arrowx/internal/interop): apache-arrow
// (Arrow's JavaScript library) for IPC stream and file, and arrow-rs through parquet-wasm for
// Parquet (its tables cross from and to apache-arrow as IPC streams).
//
// node -e <this> write|read MANIFEST
//
// write: writes every cell's file (the extension's name and metadata on the field, as Arrow's
// IPC format has them; a bool8 child is Int8 with arrow.bool8 on its field). read: reads every
// cell's file (written by dlpack-go) and checks the extension name and metadata, the storage
// and every value. Prints {cell name: "ok" or what was wrong} as JSON. Values follow the formula
// of spec_test.go.
const fs = require("fs");
const A = require("apache-arrow");
const PW = require("parquet-wasm/node");

const MUL = 0x9E3779B97F4A7C15n, ADD = 12345n;
const EXT_NAME = "ARROW:extension:name", EXT_META = "ARROW:extension:metadata";
const WIDTH = { int8: 8, int16: 16, int32: 32, int64: 64, uint8: 8, uint16: 16, uint32: 32, uint64: 64 };

function value(dtype, k) {
  if (dtype === "bool8" || dtype === "bool") return k % 3 === 1 ? 0 : 1;
  if (dtype.startsWith("float")) return (((37 * k) % 101) - 50) / 8;
  const w = WIDTH[dtype];
  const u = BigInt(k) * MUL + ADD;
  const v = dtype.startsWith("int") ? BigInt.asIntN(w, u) : BigInt.asUintN(w, u);
  return w === 64 ? v : Number(v);
}

// the bits of a float16 holding x exactly (the formula's values are multiples of 1/8 below 8)
function halfBits(x) {
  if (x === 0) return 0;
  const sign = x < 0 ? 0x8000 : 0;
  const a = Math.abs(x);
  const e = Math.floor(Math.log2(a));
  const m = Math.round((a / 2 ** e - 1) * 1024);
  return sign | ((e + 15) << 10) | m;
}

function arrowType(dtype) {
  switch (dtype) {
    case "float16": return new A.Float16();
    case "float32": return new A.Float32();
    case "float64": return new A.Float64();
    case "int8": case "bool8": return new A.Int8();
    case "int16": return new A.Int16();
    case "int32": return new A.Int32();
    case "int64": return new A.Int64();
    case "uint8": return new A.Uint8();
    case "uint16": return new A.Uint16();
    case "uint32": return new A.Uint32();
    case "uint64": return new A.Uint64();
  }
  throw new Error("no dtype " + dtype);
}

const ARRAYS = { float16: Uint16Array, float32: Float32Array, float64: Float64Array, int8: Int8Array,
  int16: Int16Array, int32: Int32Array, int64: BigInt64Array, uint8: Uint8Array, uint16: Uint16Array,
  uint32: Uint32Array, uint64: BigUint64Array, bool8: Int8Array };

function valuesData(dtype, k0, n) {
  const data = new ARRAYS[dtype](n);
  for (let i = 0; i < n; i++) {
    const v = value(dtype, k0 + i);
    data[i] = dtype === "float16" ? halfBits(v) : v;
  }
  return A.makeData({ type: arrowType(dtype), length: n, data });
}

function childField(dtype, nullable) {
  const md = dtype === "bool8" ? new Map([[EXT_NAME, "arrow.bool8"], [EXT_META, ""]]) : undefined;
  return new A.Field("item", arrowType(dtype), nullable, md);
}

const prod = (s) => s.reduce((a, b) => a * b, 1);

function fixedMeta(spec) {
  const f = spec.fixed;
  return { shape: f.shape, dim_names: f.dim_names, permutation: f.permutation };
}
function variableMeta(spec) {
  const v = spec.variable;
  return { dim_names: v.dim_names, uniform_shape: v.uniform_shape };
}
function extField(type, name, meta) {
  return new A.Field("tensor", type, true, new Map([[EXT_NAME, name], [EXT_META, JSON.stringify(meta)]]));
}

function fixedColumn(spec, c) {
  const f = spec.fixed, size = prod(f.shape);
  const type = new A.FixedSizeList(size, childField(c.dtype, c.nullable));
  const data = A.makeData({ type, length: f.rows, child: valuesData(c.dtype, 0, f.rows * size) });
  return [extField(type, "arrow.fixed_shape_tensor", fixedMeta(spec)), data];
}

function variableColumn(spec, c) {
  const shapes = spec.variable.shapes, n = shapes.length, ndim = shapes[0].length;
  const offsets = new Int32Array(n + 1);
  shapes.forEach((s, i) => { offsets[i + 1] = offsets[i] + prod(s); });
  const listType = new A.List(childField(c.dtype, c.nullable));
  const data = A.makeData({ type: listType, length: n, valueOffsets: offsets, child: valuesData(c.dtype, 0, offsets[n]) });
  const shapeType = new A.FixedSizeList(ndim, new A.Field("item", new A.Int32(), c.nullable));
  const shapeVals = A.makeData({ type: new A.Int32(), length: n * ndim, data: Int32Array.from(shapes.flat()) });
  const shape = A.makeData({ type: shapeType, length: n, child: shapeVals });
  const type = new A.Struct([new A.Field("data", listType, true), new A.Field("shape", shapeType, true)]);
  const st = A.makeData({ type, length: n, children: [data, shape] });
  return [extField(type, "arrow.variable_shape_tensor", variableMeta(spec)), st];
}

function write(spec, c) {
  const [field, data] = (c.kind === "fixed_shape" ? fixedColumn : variableColumn)(spec, c);
  const schema = new A.Schema([field]);
  const batch = new A.RecordBatch(schema, A.makeData({ type: new A.Struct(schema.fields), length: data.length, children: [data] }));
  const table = new A.Table(schema, batch);
  if (c.format === "parquet") {
    const wasm = PW.Table.fromIPCStream(A.tableToIPC(table, "stream"));
    fs.writeFileSync(c.path, PW.writeParquet(wasm));
    return;
  }
  fs.writeFileSync(c.path, A.tableToIPC(table, c.format === "ipc_stream" ? "stream" : "file"));
}

function readTable(c) {
  const bytes = fs.readFileSync(c.path);
  if (c.format === "parquet") return A.tableFromIPC(PW.readParquet(bytes).intoIPCStream());
  return A.tableFromIPC(bytes);
}

// JSON with sorted keys, to compare metadata whatever the writer's key order
function canon(v) {
  if (Array.isArray(v)) return "[" + v.map(canon).join(",") + "]";
  if (v && typeof v === "object") return "{" + Object.keys(v).sort().map((k) => JSON.stringify(k) + ":" + canon(v[k])).join(",") + "}";
  return JSON.stringify(v);
}

function checkChild(field, c, what) {
  if (field.nullable !== c.nullable) throw new Error(`${what}: child nullable ${field.nullable}`);
  if (String(field.type) !== String(arrowType(c.dtype))) throw new Error(`${what}: values of type ${field.type}, want ${arrowType(c.dtype)}`);
  const ext = field.metadata.get(EXT_NAME);
  if ((c.dtype === "bool8") !== (ext === "arrow.bool8")) throw new Error(`${what}: values of extension ${ext}`);
}

function checkValues(got, dtype, k0, what) {
  const vals = Array.from(got);
  for (let i = 0; i < vals.length; i++) {
    const want = value(dtype, k0 + i);
    if (vals[i] !== want) throw new Error(`${what}: value ${i} is ${vals[i]}, want ${want}`);
  }
  return vals.length;
}

function check(spec, c) {
  const table = readTable(c);
  if (table.schema.fields.length !== 1 || table.schema.fields[0].name !== "tensor") throw new Error(`columns ${table.schema.names}`);
  const field = table.schema.fields[0];
  const name = field.metadata.get(EXT_NAME), meta = field.metadata.get(EXT_META);
  const wantName = "arrow." + c.kind + "_tensor";
  if (name !== wantName) throw new Error(`extension ${name}, want ${wantName}`);
  const wantMeta = c.kind === "fixed_shape" ? fixedMeta(spec) : variableMeta(spec);
  if (canon(JSON.parse(meta)) !== canon(wantMeta)) throw new Error(`metadata ${meta}, want ${JSON.stringify(wantMeta)}`);
  const col = table.getChildAt(0);
  if (c.kind === "fixed_shape") {
    const f = spec.fixed, size = prod(f.shape);
    if (field.type.typeId !== A.Type.FixedSizeList || field.type.listSize !== size) throw new Error(`storage ${field.type}`);
    checkChild(field.type.children[0], c, "storage");
    if (col.length !== f.rows) throw new Error(`${col.length} tensors`);
    for (let i = 0; i < col.length; i++) {
      const n = checkValues(col.get(i), c.dtype, i * size, `tensor ${i}`);
      if (n !== size) throw new Error(`tensor ${i} has ${n} values`);
    }
    return;
  }
  const shapes = spec.variable.shapes;
  if (field.type.typeId !== A.Type.Struct) throw new Error(`storage ${field.type}`);
  const byName = Object.fromEntries(field.type.children.map((f) => [f.name, f]));
  if (!byName.data || !byName.shape) throw new Error(`storage ${field.type}`);
  checkChild(byName.data.type.children[0], c, "data");
  const sc = byName.shape.type.children[0];
  if (sc.nullable !== c.nullable || String(sc.type) !== "Int32" || byName.shape.type.listSize !== shapes[0].length) throw new Error(`shape ${byName.shape.type} (child nullable ${sc.nullable})`);
  if (col.length !== shapes.length) throw new Error(`${col.length} tensors`);
  let k = 0;
  for (let i = 0; i < col.length; i++) {
    const row = col.get(i);
    const shape = Array.from(row.shape);
    if (canon(shape) !== canon(shapes[i])) throw new Error(`tensor ${i} has shape ${shape}, want ${shapes[i]}`);
    const n = checkValues(row.data, c.dtype, k, `tensor ${i}`);
    if (n !== prod(shapes[i])) throw new Error(`tensor ${i} has ${n} values`);
    k += n;
  }
}

const [mode, path] = process.argv.slice(1);
const m = JSON.parse(fs.readFileSync(path, "utf8"));
const out = {};
for (const c of m.cells) {
  try {
    (mode === "write" ? write : check)(m.spec, c);
    out[c.name] = "ok";
  } catch (e) {
    out[c.name] = String(e && e.stack ? e.stack.split("\n").slice(0, 3).join(" | ") : e);
  }
}
console.log(JSON.stringify(out));
