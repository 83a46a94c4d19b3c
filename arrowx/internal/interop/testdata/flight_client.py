"""pyarrow.flight as a client of a flightx server (arrowx/internal/interop's TestInteropFlight).

python flight_client.py ADDRESS MANIFEST

The test has put "go-<dtype>" tensors of shape spec.shape on the server. For every dtype this
puts "py-<dtype>" (a FixedShapeTensorArray of spec.shape[1:] tensors, as pyarrow makes one of an
ndarray), gets "go-<dtype>" back (read_all: the column must be a FixedShapeTensorArray whose
to_numpy_ndarray() is the tensor), and lists the flights. Prints {check: "ok" or what was wrong}.
Values follow the formula of spec_test.go.
"""
import json
import sys

import numpy as np
import pyarrow as pa
from pyarrow import flight

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from pyarrow_matrix import values  # noqa: E402  (the formula, once)


def main():
    addr, path = sys.argv[1], sys.argv[2]
    with open(path) as f:
        m = json.load(f)
    shape, dtypes = m["shape"], m["dtypes"]
    client = flight.connect("grpc://" + addr)
    out = {}

    def check(name, fn):
        try:
            fn()
            out[name] = "ok"
        except Exception as e:
            out[name] = f"{type(e).__name__}: {e}"

    for dt in dtypes:
        want = values(dt, 0, int(np.prod(shape))).reshape(shape)

        def put(dt=dt, want=want):
            arr = pa.FixedShapeTensorArray.from_numpy_ndarray(want)
            table = pa.table({"data": arr})
            w, _ = client.do_put(flight.FlightDescriptor.for_path("py-" + dt), table.schema)
            w.write_table(table)
            w.close()

        def get(dt=dt, want=want):
            table = client.do_get(flight.Ticket(("go-" + dt).encode())).read_all()
            col = table.column("data").combine_chunks()
            if not isinstance(col, pa.FixedShapeTensorArray):
                raise AssertionError(f"read as {type(col).__name__} of {col.type}")
            got = col.to_numpy_ndarray()
            md = table.schema.metadata or {}
            full = [int(d) for d in md[b"dlpack.shape"].decode().split(",")]
            if full != shape or md[b"dlpack.dtype"].decode() != dt:
                raise AssertionError(f"dlpack.shape {full}, dlpack.dtype {md[b'dlpack.dtype']}")
            got = got.reshape(full)
            if got.dtype != want.dtype or not np.array_equal(got, want):
                raise AssertionError(f"{got.dtype}{list(got.shape)} {got.ravel()[:6]}, want {want.ravel()[:6]}")

        check(dt + "/put", put)
        check(dt + "/get", get)

    def listing():
        infos = list(client.list_flights())
        names = sorted(i.descriptor.path[0].decode() for i in infos)
        want = sorted(["go-" + d for d in dtypes] + ["py-" + d for d in dtypes])
        if names != want:
            raise AssertionError(f"flights {names}, want {want}")
        for i in infos:
            if i.schema.field(0).type.extension_name != "arrow.fixed_shape_tensor":
                raise AssertionError(f"{i.descriptor.path[0]}: schema {i.schema}")

    check("list", listing)
    client.close()
    json.dump(out, sys.stdout)


main()
