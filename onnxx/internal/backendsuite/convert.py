"""convert.py DATA OUT: lists ONNX's backend test cases under DATA (Debian's libonnx-testdata:
DATA/<category>/<case>/model.onnx with test_data_set_*/input_*.pb and output_*.pb) and writes
each tensor they hold as raw little-endian elements into OUT, with OUT/manifest.json naming, for
each case and data set, the model's input and output names, dtypes, shapes and files, as ONNX's
runner pairs them (input_i is the model's graph input i). A case whose inputs or outputs are not
numeric tensors (sequences, maps, optionals, strings, complex numbers) is listed with the reason
and no files. Runs under Debian's /usr/bin/python3 with python3-onnx and python3-numpy."""
import glob
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper

DTYPES = {
    TensorProto.FLOAT: "float32", TensorProto.DOUBLE: "float64", TensorProto.FLOAT16: "float16",
    TensorProto.BFLOAT16: "bfloat16", TensorProto.INT8: "int8", TensorProto.INT16: "int16",
    TensorProto.INT32: "int32", TensorProto.INT64: "int64", TensorProto.UINT8: "uint8",
    TensorProto.UINT16: "uint16", TensorProto.UINT32: "uint32", TensorProto.UINT64: "uint64",
    TensorProto.BOOL: "bool",
}


def kind(type_proto):
    """The reason a value of this type is not a numeric tensor, or None."""
    which = type_proto.WhichOneof("value")
    if which != "tensor_type":
        return "not a tensor (%s)" % (which or "no type").replace("_type", "")
    et = type_proto.tensor_type.elem_type
    if et not in DTYPES:
        return "a %s tensor" % TensorProto.DataType.Name(et).lower()
    return None


def tensor(path, type_proto, out, stem):
    t = TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    name = DTYPES[type_proto.tensor_type.elem_type]
    if t.data_type == TensorProto.BFLOAT16:  # onnx 1.12's to_array widens bfloat16 to float32
        bits = np.frombuffer(t.raw_data, "<u2") if t.raw_data else np.array(t.int32_data, dtype=np.uint16)
        raw, shape = bits.astype("<u2").tobytes(), list(t.dims)
    else:
        a = numpy_helper.to_array(t)
        raw, shape = a.astype(a.dtype.newbyteorder("<")).tobytes(), list(a.shape)
    file = os.path.join(out, stem + ".bin")
    with open(file, "wb") as f:
        f.write(raw)
    return {"dtype": name, "shape": shape, "file": file}


def main(data, out):
    cases = []
    for model in sorted(glob.glob(os.path.join(data, "*", "*", "model.onnx"))):
        case_dir = os.path.dirname(model)
        category = os.path.basename(os.path.dirname(case_dir))
        name = os.path.basename(case_dir)
        c = {"category": category, "name": name, "model": model, "sets": []}
        cases.append(c)
        try:
            g = onnx.load(model, load_external_data=False).graph
        except Exception as e:  # listed, not run
            c["unsupported"] = "onnx cannot load the model: %s" % str(e).splitlines()[0]
            continue
        for set_dir in sorted(glob.glob(os.path.join(case_dir, "test_data_set_*"))):
            s = {"inputs": [], "outputs": []}
            for kind_, values in (("input", g.input), ("output", g.output)):
                n = len(glob.glob(os.path.join(set_dir, kind_ + "_*.pb")))
                for i in range(n):
                    why = kind(values[i].type)
                    if why:
                        c["unsupported"] = "%s %s is %s" % (kind_, values[i].name, why)
                        break
                    stem = "%s_%s_%s_%s_%d" % (category, name, os.path.basename(set_dir), kind_, i)
                    v = tensor(os.path.join(set_dir, "%s_%d.pb" % (kind_, i)), values[i].type, out, stem)
                    v["name"] = values[i].name
                    s[kind_ + "s"].append(v)
                if "unsupported" in c:
                    break
            if "unsupported" in c:
                c["sets"] = []
                break
            c["sets"].append(s)
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump({"cases": cases}, f)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
