"""A pyarrow.flight server of canonical tensor streams (arrowx/internal/interop's TestInteropFlight).

python flight_server.py MANIFEST

Serves, on a loopback port it prints on its first line, one flight per dtype of the manifest:
"<dtype>", a table whose one column "data" is a FixedShapeTensorArray of spec.shape[1:] tensors
(FixedShapeTensorArray.from_numpy_ndarray, nothing of dlpack-go's in it). A do_put is checked
(its column must be a FixedShapeTensorArray whose to_numpy_ndarray() is the manifest's tensor of
the dtype after the descriptor's "back-") and stored, so a client can get it back. Runs until
killed. Values follow the formula of spec_test.go.
"""
import json
import sys

import numpy as np
import pyarrow as pa
from pyarrow import flight

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from pyarrow_matrix import values  # noqa: E402


class Server(flight.FlightServerBase):
    def __init__(self, shape, dtypes):
        super().__init__("grpc://127.0.0.1:0")
        self.shape = shape
        self.tables = {}
        for dt in dtypes:
            self.tables[dt] = pa.table({"data": pa.FixedShapeTensorArray.from_numpy_ndarray(self.want(dt))})

    def want(self, dt):
        return values(dt, 0, int(np.prod(self.shape))).reshape(self.shape)

    def info(self, name):
        t = self.tables[name]
        d = flight.FlightDescriptor.for_path(name)
        return flight.FlightInfo(t.schema, d, [flight.FlightEndpoint(name.encode(), [])], t.num_rows, t.nbytes)

    def list_flights(self, context, criteria):
        for name in list(self.tables):
            yield self.info(name)

    def get_flight_info(self, context, descriptor):
        return self.info(descriptor.path[0].decode())

    def do_get(self, context, ticket):
        return flight.RecordBatchStream(self.tables[ticket.ticket.decode()])

    def do_put(self, context, descriptor, reader, writer):
        name = descriptor.path[0].decode()
        table = reader.read_all()
        col = table.column(0).combine_chunks()
        if not isinstance(col, pa.FixedShapeTensorArray):
            raise flight.FlightServerError(f"{name}: a column of {col.type}, not a FixedShapeTensorArray")
        got, want = col.to_numpy_ndarray(), self.want(name.removeprefix("back-"))
        full = [int(d) for d in (table.schema.metadata or {}).get(b"dlpack.shape", b"").decode().split(",") if d]
        if full:
            got = got.reshape(full)
        if got.dtype != want.dtype or got.shape != want.shape or not np.array_equal(got, want):
            raise flight.FlightServerError(f"{name}: {got.dtype}{list(got.shape)}, want {want.dtype}{list(want.shape)}")
        self.tables[name] = table


def main():
    with open(sys.argv[1]) as f:
        m = json.load(f)
    s = Server(m["shape"], m["dtypes"])
    print(s.port, flush=True)
    s.serve()


main()
