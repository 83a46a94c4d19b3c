#!/usr/bin/env python3
"""arrowx against pyarrow, where Python has pyarrow (the GPU host; Debian 12 packages none).

It loads the C shared library built from devicecheck/pyarrowlib ($DLPACK_ARROW_LIB, which
devicecheck/devicecheck.sh unpacks from .devicebuild/libdlpackarrow.so.xz; else .devicebuild/libdlpackarrow.so)
with dlpackgo.Library, and checks:

  * the Arrow C Data Interface, pyarrow -> Go: primitive arrays (with an offset) and a
    FixedSizeList become tensors over pyarrow's buffers (same address), read-only, the values
    equal; the array outlives pyarrow's own references until Go lets go;
  * Go -> pyarrow: a Go tensor (NumPy's memory, handed to Go) exported into pyarrow shares its
    memory, a 2-D one as a FixedSizeList;
  * Arrow Flight: a Go server (arrowx/flightx) on 127.0.0.1 and pyarrow.flight as the client:
    DoGet of a tensor Go holds (schema metadata, values), DoPut of a tensor Python sends (Go reads
    it back), ListFlights;
  * Parquet: pyarrow.parquet reads the arrow.fixed_shape_tensor column arrowx/parquetx writes
    (type, shape, values), and parquetx reads the FixedShapeTensorArray columns pyarrow writes, in
    several row groups, whole and by row group.

A self-test (Go -> the C structs -> Go) runs first, everywhere. Prints PASS/FAIL lines and a
summary. Exit status: 0 all passed, 1 a failure, 2 no pyarrow (only the self-test ran).
"""

import ctypes
import gc
import os
import sys
import tempfile
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIB_PATH = os.environ.get("DLPACK_ARROW_LIB", os.path.join(ROOT, ".devicebuild", "libdlpackarrow.so"))
sys.path.insert(0, os.path.join(ROOT, "pyexchange", "python"))

import numpy as np  # noqa: E402

import dlpackgo  # noqa: E402


class ArrowArray(ctypes.Structure):  # the Arrow C Data Interface's struct ArrowArray
    _fields_ = [("length", ctypes.c_int64), ("null_count", ctypes.c_int64), ("offset", ctypes.c_int64),
                ("n_buffers", ctypes.c_int64), ("n_children", ctypes.c_int64), ("buffers", ctypes.c_void_p),
                ("children", ctypes.c_void_p), ("dictionary", ctypes.c_void_p), ("release", ctypes.c_void_p),
                ("private_data", ctypes.c_void_p)]


class ArrowSchema(ctypes.Structure):  # struct ArrowSchema
    _fields_ = [("format", ctypes.c_char_p), ("name", ctypes.c_char_p), ("metadata", ctypes.c_void_p),
                ("flags", ctypes.c_int64), ("n_children", ctypes.c_int64), ("children", ctypes.c_void_p),
                ("dictionary", ctypes.c_void_p), ("release", ctypes.c_void_p), ("private_data", ctypes.c_void_p)]


results = []


def check(name, fn):
    try:
        detail = fn()
        results.append((name, "PASS"))
        print("PASS %s%s" % (name, ": " + detail if detail else ""), flush=True)
    except Exception as e:  # noqa: BLE001 - every failure is reported
        results.append((name, "FAIL"))
        print("FAIL %s: %s: %s" % (name, type(e).__name__, e), flush=True)
        traceback.print_exc(limit=4)


def expect(cond, msg):
    if not cond:
        raise AssertionError(msg)


def settle(lib, base, what):
    for _ in range(100):
        gc.collect()
        lib.collect()
        if lib.live_foreign() == base:
            return
        time.sleep(0.02)
    raise AssertionError("%s: %d foreign blocks still held, want %d" % (what, lib.live_foreign(), base))


def c_data(lib, pa):
    base = lib.live_foreign()

    def pyarrow_to_go():
        def case(label, arr, shape):
            child = arr.values if isinstance(arr, pa.FixedSizeListArray) else arr
            size = child.type.bit_width // 8
            address = child.buffers()[1].address + child.offset * size
            want = (arr.flatten() if child is not arr else arr).to_numpy()
            return label, arr, shape, address, want

        out = []
        for label, arr, shape, address, want in (
                case("float32", pa.array(np.arange(10, dtype=np.float32)), (10,)),
                case("int64, offset 3", pa.array(np.arange(10, dtype=np.int64)).slice(3, 5), (5,)),
                case("FixedSizeList<float64>[4]", pa.FixedSizeListArray.from_arrays(
                    pa.array(np.arange(12, dtype=np.float64)), 4), (3, 4))):
            c_arr, c_sch = ArrowArray(), ArrowSchema()
            arr._export_to_c(ctypes.addressof(c_arr), ctypes.addressof(c_sch))
            del arr  # the exported ArrowArray holds pyarrow's buffers now
            t = lib.arrow_import(ctypes.addressof(c_arr), ctypes.addressof(c_sch))
            expect(c_arr.release is None, "%s: the ArrowArray was not moved" % label)
            expect(t.shape == shape and t.readonly, "%s: shape %s, read-only %s" % (label, t.shape, t.readonly))
            expect(t.data_ptr == address, "%s: not zero-copy (%#x vs pyarrow's %#x)" % (label, t.data_ptr, address))
            gc.collect()
            got = np.asarray(t).reshape(-1)
            expect(np.array_equal(got, want), "%s: values %s" % (label, got))
            t.release()
            del t, got  # and the view NumPy's array was made through
            out.append(label)
        settle(lib, base, "imports")
        return "zero-copy, read-only: " + ", ".join(out)

    def go_to_pyarrow():
        out = []
        for label, a in (("float64", np.arange(12, dtype=np.float64)),
                         ("int32 2-D", np.arange(12, dtype=np.int32).reshape(3, 4))):
            g = lib.from_dlpack(a)  # Go's tensor over NumPy's memory
            c_arr, c_sch = ArrowArray(), ArrowSchema()
            lib.arrow_export(g, ctypes.addressof(c_arr), ctypes.addressof(c_sch))
            back = pa.Array._import_from_c(ctypes.addressof(c_arr), ctypes.addressof(c_sch))
            g.release()  # the export holds the memory until pyarrow releases it
            values = back.values if a.ndim > 1 else back
            expect(len(back) == a.shape[0], "%s: length %d" % (label, len(back)))
            expect(values.buffers()[1].address == a.ctypes.data, "%s: not zero-copy" % label)
            expect(np.array_equal(values.to_numpy(), a.reshape(-1)), "%s: values" % label)
            del back, values
            out.append(label)
        settle(lib, base, "exports")
        return "zero-copy: " + ", ".join(out)

    check("C Data Interface: pyarrow -> Go", pyarrow_to_go)
    check("C Data Interface: Go -> pyarrow", go_to_pyarrow)


def flight_checks(lib, pa):
    from pyarrow import flight

    def round_trip():
        addr = lib.flight_serve()
        try:
            client = flight.connect("grpc://" + addr)
            x = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)
            lib.flight_put("x", x)
            table = client.do_get(flight.Ticket(b"x")).read_all()
            md = table.schema.metadata or {}
            expect(md.get(b"dlpack.dtype") == b"float32" and md.get(b"dlpack.shape") == b"2,3,4",
                   "DoGet schema metadata %s" % md)
            expect(md.get(b"source") == b"go", "the tensor's own metadata %s" % md)
            typ = table.schema.field("data").type
            expect(isinstance(typ, pa.FixedShapeTensorType) and list(typ.shape) == [3, 4]
                   and typ.value_type == pa.float32(), "DoGet column type %s (want arrow.fixed_shape_tensor)" % typ)
            got = pa.concat_arrays(table.column("data").chunks).to_numpy_ndarray()
            expect(got.shape == (2, 3, 4) and np.array_equal(got, x), "DoGet values %s" % got)

            y = np.arange(6, dtype=np.float64).reshape(2, 3) * 0.5
            schema = pa.schema([pa.field("data", pa.float64(), nullable=False)],
                               metadata={"dlpack.dtype": "float64", "dlpack.shape": "2,3",
                                         "dlpack.order": "C", "source": "python"})
            writer, _ = client.do_put(flight.FlightDescriptor.for_path("y"), schema)
            writer.write_batch(pa.record_batch([pa.array(y.reshape(-1))], schema=schema))
            writer.close()
            t = lib.flight_get("y")
            expect(t.shape == (2, 3) and np.array_equal(np.asarray(t), y), "DoPut: Go read %s" % np.asarray(t))
            t.release()
            del t

            # and a tensor column pyarrow makes, as flightx sends them
            z = np.arange(12, dtype=np.int16).reshape(4, 3)
            col = pa.FixedShapeTensorArray.from_numpy_ndarray(z)
            schema = pa.schema([pa.field("data", col.type)],
                               metadata={"dlpack.dtype": "int16", "dlpack.shape": "4,3", "dlpack.order": "C"})
            writer, _ = client.do_put(flight.FlightDescriptor.for_path("z"), schema)
            writer.write_batch(pa.record_batch([col], schema=schema))
            writer.close()
            t = lib.flight_get("z")
            expect(t.shape == (4, 3) and np.array_equal(np.asarray(t), z), "DoPut of a tensor column: Go read %s" % np.asarray(t))
            t.release()
            del t

            names = sorted(info.descriptor.path[0].decode() for info in client.list_flights())
            expect(names == ["x", "y", "z"], "ListFlights %s" % names)
            expect(lib.flight_names() == "x,y,z", "the server holds %s" % lib.flight_names())
            client.close()
        finally:
            lib.flight_stop()
        return ("DoGet of a Go tensor as arrow.fixed_shape_tensor, DoPut of a flat NumPy array and of a "
                "FixedShapeTensorArray, ListFlights (server %s)" % addr)

    check("Arrow Flight: Go server, pyarrow.flight client", round_trip)


def parquet_checks(lib, pa):
    import pyarrow.parquet as pq

    def go_to_pyarrow():
        with tempfile.TemporaryDirectory() as d:
            x = (np.arange(36, dtype=np.float32) * 0.5 - 3).reshape(6, 2, 3)
            lib.parquet_write(os.path.join(d, "go.parquet"), "emb", x)
            col = pq.read_table(os.path.join(d, "go.parquet")).column("emb")
            typ = col.type
            expect(isinstance(typ, pa.FixedShapeTensorType) and list(typ.shape) == [2, 3]
                   and typ.value_type == pa.float32(), "column type %s (want arrow.fixed_shape_tensor)" % typ)
            got = pa.concat_arrays(col.chunks).to_numpy_ndarray()
            expect(got.shape == (6, 2, 3) and np.array_equal(got, x), "values %s" % got)
        return "a float32 [6, 2, 3] tensor as an arrow.fixed_shape_tensor column of [2, 3]"

    def pyarrow_to_go():
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "py.parquet")
            f64 = np.arange(40, dtype=np.float64).reshape(10, 4) / 8
            i32 = (np.arange(40, dtype=np.int32) - 20).reshape(10, 2, 2)
            pq.write_table(pa.table({"f64": pa.FixedShapeTensorArray.from_numpy_ndarray(f64),
                                     "i32": pa.FixedShapeTensorArray.from_numpy_ndarray(i32)}),
                           path, row_group_size=3)
            groups = pq.ParquetFile(path).metadata.num_row_groups
            expect(groups == 4, "pyarrow wrote %d row groups, want 4" % groups)
            t = lib.parquet_read(path, "f64", "")
            expect(t.shape == (10, 4) and np.array_equal(np.asarray(t), f64), "f64: Go read %s" % np.asarray(t))
            t.release()
            t = lib.parquet_read(path, "i32", "1,2")  # rows 3 to 8
            expect(t.shape == (6, 2, 2) and np.array_equal(np.asarray(t), i32[3:9]),
                   "i32, row groups 1 and 2: Go read %s" % np.asarray(t))
            t.release()
            del t
        return "FixedShapeTensorArray columns float64 [4] and int32 [2, 2] in 4 row groups, whole and two groups"

    check("Parquet: Go writes, pyarrow.parquet reads", go_to_pyarrow)
    check("Parquet: pyarrow.parquet writes, Go reads", pyarrow_to_go)


def self_test(lib):
    """Go -> C structs -> Go, without pyarrow: the library, dlpackgo and these ctypes structs agree
    with arrow-go's C Data Interface (runs everywhere; CI runs it through arrowx/cdatax's tests)."""
    base = lib.live_foreign()

    def round_trip():
        a = np.arange(12, dtype=np.float64).reshape(3, 4)
        g = lib.from_dlpack(a)
        c_arr, c_sch = ArrowArray(), ArrowSchema()
        lib.arrow_export(g, ctypes.addressof(c_arr), ctypes.addressof(c_sch))
        g.release()
        expect((c_arr.length, c_arr.null_count, c_arr.n_children) == (3, 0, 1),
               "ArrowArray length %d, nulls %d, children %d" % (c_arr.length, c_arr.null_count, c_arr.n_children))
        expect(c_sch.format == b"+w:4" and c_sch.n_children == 1, "ArrowSchema format %r" % c_sch.format)
        expect(c_arr.release is not None and c_sch.release is not None, "release callbacks missing")
        t = lib.arrow_import(ctypes.addressof(c_arr), ctypes.addressof(c_sch))
        expect(c_arr.release is None, "the ArrowArray was not moved")
        expect(t.shape == (3, 4) and t.data_ptr == a.ctypes.data and t.readonly,
               "shape %s, data %#x vs %#x" % (t.shape, t.data_ptr, a.ctypes.data))
        expect(np.array_equal(np.asarray(t), a), "values")
        t.release()
        del t  # the view NumPy's arrays of it were made through (__array_interface__) goes with it
        settle(lib, base, "self-test")
        return "a 3x4 float64 tensor out as FixedSizeList<double>[4] and back, zero-copy"

    check("self-test: Go -> C Data Interface -> Go", round_trip)

    def parquet_round_trip():
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "x.parquet")
            x = np.arange(24, dtype=np.int64).reshape(4, 3, 2)
            lib.parquet_write(path, "x", x)
            t = lib.parquet_read(path, "x", "")
            expect(t.shape == (4, 3, 2) and np.array_equal(np.asarray(t), x), "Go read back %s" % np.asarray(t))
            t.release()
            del t
        return "an int64 [4, 3, 2] tensor through a Parquet file and back"

    check("self-test: Go -> Parquet -> Go", parquet_round_trip)


def main():
    try:
        lib = dlpackgo.Library(LIB_PATH, returns="tensor")
    except OSError as e:
        print("FAIL load %s: %s (build it with devicecheck/devicebuild.sh)" % (LIB_PATH, e))
        return 1
    self_test(lib)
    try:
        import pyarrow as pa
    except ImportError as e:
        failed = [n for n, r in results if r == "FAIL"]
        print("NO PYARROW: pyarrow checks not run (%s); self-test %s" % (e, "FAILED" if failed else "passed"))
        return 1 if failed else 2
    print("python %s, numpy %s, pyarrow %s, library %s" % (sys.version.split()[0], np.__version__,
                                                          pa.__version__, LIB_PATH), flush=True)
    c_data(lib, pa)
    flight_checks(lib, pa)
    parquet_checks(lib, pa)
    failed = [n for n, r in results if r == "FAIL"]
    print("SUMMARY: %d passed, %d failed%s" % (len(results) - len(failed), len(failed),
                                               (" — FAILED: " + "; ".join(failed)) if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
