"""Round-trips arrays between Python and a Go library, both ways, without copying.

    go build -buildmode=c-shared -o /tmp/libexample.so ./examples/python
    PYTHONPATH=numpyx/python python3 examples/python/roundtrip.py /tmp/libexample.so
"""

import ctypes
import sys

import numpy as np
import torch

import dlpackgo

lib = dlpackgo.Library(sys.argv[1] if len(sys.argv) > 1 else "./libexample.so")
go = lib.cdll
go.example_matrix.argtypes, go.example_matrix.restype = [ctypes.c_int64, ctypes.c_int64], ctypes.c_void_p
go.example_scale.argtypes, go.example_scale.restype = [ctypes.c_void_p, ctypes.c_double], ctypes.c_int
go.example_sum.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_double)]
go.example_sum.restype = ctypes.c_int


def go_sum(t):
    out = ctypes.c_double()
    assert go.example_sum(t.handle, ctypes.byref(out)) == 0
    return out.value


# Go -> NumPy: the array is a view of Go memory
m = lib.tensor(go.example_matrix(2, 3))
a = np.from_dlpack(m)
print("Go -> NumPy:", a.tolist(), "shared:", a.ctypes.data == m.data_ptr)
go.example_scale(m.handle, 10)
print("Go scaled by 10, NumPy sees:", a.tolist())

# Go -> PyTorch: writable, and Go sees torch's writes
x = torch.from_dlpack(m)
x += 1
print("torch added 1, Go sums:", go_sum(m))

# NumPy -> Go: Go works on NumPy's memory in place, strided views included
b = np.arange(6.0).reshape(2, 3)
g = lib.from_dlpack(b.T)
go.example_scale(g.handle, 2)
print("Go doubled NumPy's b.T in place:", b.tolist())
g.release()

# PyTorch -> Go -> NumPy: one buffer, three libraries
y = torch.ones(2, 2, dtype=torch.float32)
h = lib.from_dlpack(y)
z = np.from_dlpack(h)
go.example_scale(h.handle, 3)
print("torch -> Go -> NumPy:", z.tolist(), "torch sees:", y.tolist())

del a, x, z
h.release()
m.release()
print("live handles:", lib.live_handles())
