"""Opening libraries: one that registers nothing, bare file names, a second Go library.

Run by TestPythonLibrary in pyexchange, with DLPACKGO_TESTLIB (the test library) and
DLPACKGO_EMPTYLIB (internal/emptylib: imports pyexchange, registers no function). Each case runs
in a Python process of its own (the interpreter that runs this file): a process holds one Go
library, and the case of two needs a fresh one.
"""

import os
import subprocess
import sys
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TESTLIB = os.environ["DLPACKGO_TESTLIB"]
EMPTYLIB = os.environ["DLPACKGO_EMPTYLIB"]


def run(code, cwd=None):
    """Runs code in a fresh interpreter with dlpackgo importable; returns (rc, stdout+stderr)."""
    env = dict(os.environ, PYTHONPATH=HERE)
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=cwd, env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    return p.returncode, p.stdout


class EmptyLibrary(unittest.TestCase):
    def test_opens_with_no_functions(self):
        rc, out = run(f"""
            import ctypes, dlpackgo
            lib = dlpackgo.Library({EMPTYLIB!r})
            assert lib.functions == {{}}, lib.functions
            # the exchange works: a NumPy array in, a Tensor out, Go holds it and lets go
            import numpy as np
            a = np.arange(6.0)
            t = lib.from_dlpack(a)
            assert t.handle and t.data_ptr == a.ctypes.data
            t.release()
            print("ok")
            """)
        self.assertEqual(rc, 0, out)
        self.assertEqual(out.strip().splitlines()[-1], "ok", out)


class BareName(unittest.TestCase):
    def test_resolves_against_the_current_directory(self):
        d, name = os.path.split(EMPTYLIB)
        rc, out = run(f"""
            import dlpackgo
            lib = dlpackgo.Library({name!r})
            assert lib.functions == {{}}
            print(lib.cdll._name)
            """, cwd=d)
        self.assertEqual(rc, 0, out)
        self.assertEqual(out.strip().splitlines()[-1], EMPTYLIB, out)

    def test_missing_says_where_it_looked(self):
        rc, out = run("""
            import os, dlpackgo
            try:
                dlpackgo.Library("libdlpackgo_nowhere.so")
            except OSError as e:
                msg = str(e)
                assert "not in the current directory" in msg and os.getcwd() in msg, msg
                assert "./libdlpackgo_nowhere.so" in msg, msg
                print("ok")
            """, cwd=HERE)
        self.assertEqual(rc, 0, out)
        self.assertEqual(out.strip().splitlines()[-1], "ok", out)


class TwoLibraries(unittest.TestCase):
    def test_second_go_library_says_what_to_do(self):
        rc, out = run(f"""
            import dlpackgo
            first = dlpackgo.Library({TESTLIB!r})
            try:
                dlpackgo.Library({EMPTYLIB!r})
            except OSError as e:
                msg = str(e)
                assert "static TLS" in msg, msg
                assert "one Go library per process" in msg, msg
                assert "GLIBC_TUNABLES=glibc.rtld.optional_static_tls=" in msg, msg
                assert isinstance(e.__cause__, OSError), e.__cause__
                print("ok")
            else:
                print("loaded")
            # the first library still works
            import numpy as np
            a = np.arange(4.0)
            first.scale(a, 2.0)
            assert a.tolist() == [0.0, 2.0, 4.0, 6.0]
            """, cwd=HERE)
        self.assertEqual(rc, 0, out)
        self.assertEqual(out.strip().splitlines()[-1], "ok", out)


if __name__ == "__main__":
    unittest.main()
