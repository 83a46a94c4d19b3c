"""ort_run.py MANIFEST RESULTS: runs every case of MANIFEST (written by convert.py) through ONNX
Runtime's own Python package (onnxruntime, CPU) and compares its outputs with the expected ones
as ONNX's backend test runner does (same dtype, np.testing.assert_allclose with rtol 1e-3 and
atol 1e-7); writes RESULTS, a JSON object {"<category>/<case>": "" (pass) or the reason of the
failure}. Runs under the project's venv (scripts/pyvenv.sh: onnxruntime, numpy, ml_dtypes)."""
import json
import sys

import ml_dtypes
import numpy as np
import onnxruntime as ort

RTOL, ATOL = 1e-3, 1e-7


def load(v):
    dt = ml_dtypes.bfloat16 if v["dtype"] == "bfloat16" else np.dtype(v["dtype"]).newbyteorder("<")
    return np.fromfile(v["file"], dtype=dt).reshape(v["shape"])


def run(case):
    so = ort.SessionOptions()
    so.log_severity_level = 4
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(case["model"], so, providers=["CPUExecutionProvider"])
    for s in case["sets"]:
        feed = {v["name"]: load(v) for v in s["inputs"]}
        names = [v["name"] for v in s["outputs"]]
        got = sess.run(names, feed)
        for v, g in zip(s["outputs"], got):
            want = load(v)
            g = np.asarray(g)
            if g.dtype != want.dtype:
                return "output %s: dtype %s, want %s" % (v["name"], g.dtype, want.dtype)
            if want.dtype == ml_dtypes.bfloat16:
                g, want = g.astype(np.float32), want.astype(np.float32)
            np.testing.assert_allclose(g, want, rtol=RTOL, atol=ATOL, err_msg="output " + v["name"])
    return ""


def main(manifest, results):
    with open(manifest) as f:
        cases = json.load(f)["cases"]
    out = {}
    for c in cases:
        if "unsupported" in c:
            continue
        try:
            out[c["category"] + "/" + c["name"]] = run(c)
        except Exception as e:  # the reason, in one line
            lines = [l.strip() for l in str(e).splitlines() if l.strip()]
            out[c["category"] + "/" + c["name"]] = (type(e).__name__ + ": " + " ".join(lines[:3]))[:300]
    with open(results, "w") as f:
        json.dump(out, f, indent=0, sort_keys=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
