"""dlpackgo: call Go functions on NumPy and PyTorch arrays, and exchange tensors with a Go library
both ways without copying, through DLPack.

A Go library built with ``go build -buildmode=c-shared`` that imports the Go package
``github.com/dlpack-go/dlpack/pyexchange`` and registers functions::

    func init() { pyexchange.Register("scale", scale, "scale(x, factor)\\n\\nx *= factor, in place.") }

is used from Python as::

    lib = dlpackgo.Library("./libexample.so")
    lib.scale(a, 2.0)          # a NumPy array, a torch tensor: Go writes a's memory in place
    x = lib.solve(a, b)        # tensor results: NumPy arrays over Go memory (returns="torch", ...)

``help(lib.scale)`` shows the signature and the Go docstring, ``dir(lib)`` lists the functions.
Go errors raise ``GoError`` (or ``GoValueError``, ``GoTypeError``, ``GoBufferError``,
``GoMemoryError``, which are also ``ValueError``, ...), Go panics ``GoPanic``; wrong arguments
raise ``TypeError`` before Go runs. The GIL is released while Go runs.

The modules: ``dlpackgo._exchange`` (the DLPack exchange: ``Library``, ``Tensor``; it was the
single-file module ``dlpackgo.py`` before the package) and ``dlpackgo._functions`` (registered
functions, the exceptions).
"""

from ._exchange import (CPU, DLPACK_VERSION, FLAG_IS_COPIED, FLAG_READ_ONLY, Library, Tensor,
                        dtype_name)
from ._functions import (Array, GoBufferError, GoError, GoMemoryError, GoPanic, GoTypeError,
                         GoValueError)

__all__ = ["Library", "Tensor", "Array", "GoError", "GoValueError", "GoTypeError", "GoBufferError",
           "GoMemoryError", "GoPanic", "dtype_name", "DLPACK_VERSION", "CPU", "FLAG_READ_ONLY",
           "FLAG_IS_COPIED"]
# The version is the Go module's (core.ModuleVersion, core/version.go); pyproject.toml reads it
# from here, and TestPythonPackageVersion (pyexchange) fails when the two disagree.
__version__ = "0.9.1"
__license__ = "Apache-2.0"
