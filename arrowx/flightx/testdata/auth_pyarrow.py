"""pyarrow.flight against a flightx server with TLS and tokens (auth_pyarrow_test.go).

argv: location (grpc+tls://host:port), the server's certificate (PEM file), the read-write
token, the read-only token. Prints one line per check; the Go test compares them.
"""
import sys

import numpy as np
import pyarrow as pa
import pyarrow.flight as fl

location, cert_file, rw, ro = sys.argv[1:5]
with open(cert_file, "rb") as f:
    roots = f.read()


def client():
    return fl.FlightClient(location, tls_root_certs=roots)


def outcome(fn):
    try:
        fn()
        return "ok"
    except fl.FlightUnauthenticatedError:
        return "unauthenticated"
    except fl.FlightUnauthorizedError:
        return "unauthorized"
    except Exception as e:  # anything else is a failure the test shows
        return "error " + type(e).__name__ + ": " + str(e).splitlines()[0]


def put(opts, name, values):
    def go():
        # flightx's flat wire format (dlpack.dtype, dlpack.shape): pyarrow's
        # FixedShapeTensorArray.from_numpy_ndarray (permutation [0]) and a plain nullable
        # FixedSizeList column are refused by flightx's reader, a matter apart from access
        schema = pa.schema([pa.field("data", pa.float32(), nullable=False)],
                           metadata={"dlpack.dtype": "float32", "dlpack.shape": ",".join(map(str, values.shape)),
                                     "dlpack.order": "C"})
        table = pa.table({"data": pa.array(values.ravel())}, schema=schema)
        w, r = client().do_put(fl.FlightDescriptor.for_path(name), table.schema, options=opts)
        w.write_table(table)
        w.done_writing()
        r.read()
        w.close()
    return go


def get(opts, name):
    def go():
        t = client().do_get(fl.Ticket(name.encode()), options=opts).read_all()
        print("got", name, t.column(0).combine_chunks().to_numpy_ndarray().tolist())
    return go


def delete(opts, name):
    return lambda: list(client().do_action(fl.Action("delete", name.encode()), options=opts))


none = fl.FlightCallOptions()
wrong = fl.FlightCallOptions(headers=[(b"authorization", b"Bearer nope")])
rw_opts = fl.FlightCallOptions(headers=[(b"authorization", ("Bearer " + rw).encode())])
# the read-only token learned through Flight's Handshake, as pyarrow's basic-token helper does it
pair = client().authenticate_basic_token(b"reader", ro.encode())
print("handshake", pair[0].decode(), pair[1].decode() == "Bearer " + ro)
ro_opts = fl.FlightCallOptions(headers=[pair])

x = np.arange(6, dtype=np.float32).reshape(2, 3)
print("none put", outcome(put(none, "x", x)))
print("none list", outcome(lambda: list(client().list_flights(options=none))))
print("wrong put", outcome(put(wrong, "x", x)))
print("ro put", outcome(put(ro_opts, "w", x)))
print("ro delete", outcome(delete(ro_opts, "w")))
print("ro get", outcome(get(ro_opts, "w")))
print("rw put", outcome(put(rw_opts, "x", x)))
print("rw get", outcome(get(rw_opts, "x")))
print("rw delete", outcome(delete(rw_opts, "x")))
