"""Calls two Go functions (main.go) on NumPy arrays and PyTorch tensors, without copying.

    go build -buildmode=c-shared -o /tmp/libexample.so ./examples/python
    PYTHONPATH=pyexchange/python python3 examples/python/example.py /tmp/libexample.so

(python3: any interpreter with NumPy and PyTorch; or dlpackgo installed in a venv, as README.md says.)
"""

import inspect
import sys

import numpy as np
import torch

import dlpackgo

lib = dlpackgo.Library(sys.argv[1] if len(sys.argv) > 1 else "./libexample.so")
print("functions:", sorted(lib.functions))
print("signature:", "solve" + str(inspect.signature(lib.solve)))

# NumPy: a Gonum solve; x comes back as a NumPy array over Go's memory
a = np.array([[3.0, 1.0], [1.0, 2.0]])
b = np.array([9.0, 8.0])
x = lib.solve(a, b)
print("NumPy solve:", x.tolist(), "a @ x == b:", bool(np.allclose(a @ x, b)))

# in place: Go writes NumPy's memory, a strided column included
lib.scale(a[:, 1], 10.0)
print("NumPy a[:, 1] scaled in place:", a.tolist())

# PyTorch: the same functions; returns="torch" gives torch tensors back
t = torch.tensor([[2.0, 0.0], [0.0, 4.0]], dtype=torch.float64)
y = lib.solve(t, torch.eye(2, dtype=torch.float64), returns="torch")
print("PyTorch inverse:", y.tolist(), type(y).__name__)
v = torch.arange(4, dtype=torch.float32)
lib.scale(v, 0.5)
print("PyTorch scaled in place:", v.tolist())

# Go errors are Python exceptions carrying Go's message
for bad in (lambda: lib.solve(np.zeros((2, 2)), b), lambda: lib.scale(np.arange(3), 2.0),
            lambda: lib.scale(a, "twice")):
    try:
        bad()
    except (ValueError, TypeError) as e:
        print(type(e).__name__ + ":", str(e).split("\n")[0])
