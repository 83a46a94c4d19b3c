"""The cast rule (issue 33) for registered functions' arguments.

Run by TestPythonCastRule in pyexchange. The test library's functions that compute in
float64 (total, add, kept_total) convert their arguments under adapters.CheckCast: a cast that
keeps every value happens (a copy), any other is refused with a TypeError (GoTypeError) naming
both dtypes, before anything is computed; a complex array never reaches a float64 parameter with
its imaginary parts dropped.
"""

import unittest

import numpy as np
import torch

import dlpackgo
from test_dlpackgo import LIB


class CastRule(unittest.TestCase):
    def test_casts_that_keep_values_happen(self):
        for dtype in ("float16", "float32", "float64", "int8", "uint8", "int16", "uint16", "int32",
                      "uint32"):
            with self.subTest(dtype=dtype):
                a = np.arange(1, 7).astype(dtype)
                self.assertEqual(LIB.total(a), 21.0)
                self.assertEqual(LIB.add(a, a).tolist(), [2.0, 4.0, 6.0, 8.0, 10.0, 12.0])
        self.assertEqual(LIB.total(torch.arange(4, dtype=torch.float32)), 6.0)

    def test_casts_that_change_values_raise_type_error(self):
        cases = [
            (np.array([1 + 2j, 3 - 1j]), "complex128", "drop the imaginary part"),
            (np.array([1 + 2j], dtype=np.complex64), "complex64", "drop the imaginary part"),
            (np.array([2**53 + 1, 1], dtype=np.int64), "int64", ""),
            (np.array([1], dtype=np.uint64), "uint64", ""),
            (torch.tensor([1 + 1j]), "complex64", "drop the imaginary part"),
        ]
        for x, name, why in cases:
            with self.subTest(dtype=name, type=type(x).__name__):
                for call in (lambda: LIB.total(x), lambda: LIB.add(x, x)):
                    with self.assertRaises(dlpackgo.GoTypeError) as cm:
                        call()
                    e = cm.exception
                    self.assertIsInstance(e, TypeError)
                    msg = str(e)
                    self.assertIn(f"tensor is {name}", msg)
                    self.assertIn("float64", msg)
                    self.assertIn(why, msg)
                    self.assertIn("AllowCast", msg)

    def test_kept_views_follow_the_rule(self):
        LIB.drop_kept()
        LIB.keep(np.array([1 + 1j]))
        try:
            with self.assertRaisesRegex(TypeError, "tensor is complex128"):
                LIB.kept_total()
        finally:
            LIB.drop_kept()


if __name__ == "__main__":
    unittest.main()
