"""The contextual encoder's layers by ONNX Runtime, fp32 and int8, beside deptree's numpy.

    pip install onnx      # onnxruntime is in requirements/contextual.txt already
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python bench/contextual/ort_ab.py [SENTENCES]

Issue 60 measured ONNX Runtime's int8 encoder at about 1.45 times its fp32 one, and
the default request spends 44% of its time in the encoder (journal 23): int8 would
bring the request to about its speed goal. This builds the shipped en_ewt model's
encoder layers (e5-small, 1..5) as one ONNX graph from the weights deptree reads (the
same post-norm arithmetic as `models/contextual/encoder.py`), runs each variant twice,
interleaved, over the first SENTENCES (800) sentences of en_ewt dev (tokenizing and
pooling included; process CPU seconds on one thread), and scores what each does to
the contextual analyser: the UAS of its own arc scores' argmax (no decoder) and the
largest difference from numpy's features. int8 is ONNX Runtime's dynamic quantization
(weights per channel, activations per tensor at run time); "int8 ffn-in" quantizes
only each layer's first feed-forward product.
"""
from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from models.conllu import read_conllu  # noqa: E402
from models.contextual.encoder import BATCH_PIECES, Encoder  # noqa: E402
from models.serve.pipeline import Pipeline  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DEV = ROOT.parent / "shared" / "data" / "en_ewt" / "dev.conllu"
OPSET = 17        # LayerNormalization is an ONNX op from 17 on


def build_graph(layers: Sequence, hidden: int, heads: int, eps: float, read: Sequence[int]):
    """onnx.ModelProto of `layers` (encoder.Layer, in order): inputs `x` [B, T, H] and
    `bias` [B, 1, 1, T] (0 or -1e9), an output `layer{i}` for each i in `read` (1-based,
    at most len(layers))."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    hd = hidden // heads
    inits, nodes = [], []

    def const(name: str, value: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def op(kind: str, inputs: list[str], out: str, **attrs) -> str:
        nodes.append(helper.make_node(kind, inputs, [out], name=out, **attrs))
        return out

    qkv_shape = const("qkv_shape", np.array([0, 0, 3, heads, hd], np.int64))
    ctx_shape = const("ctx_shape", np.array([0, 0, hidden], np.int64))
    scale = const("scale", np.array(1.0 / np.sqrt(hd), np.float32))
    half, one = const("half", np.array(0.5, np.float32)), const("one", np.array(1.0, np.float32))
    root2 = const("root2", np.array(np.sqrt(2.0), np.float32))
    picks = [const(f"pick{j}", np.array(j, np.int64)) for j in range(3)]
    x = "x"
    for i, ly in enumerate(layers, 1):
        p = f"l{i}."

        def w(name: str, value: np.ndarray, p: str = p) -> str:
            return const(p + name, np.asarray(value, np.float32))

        qkv = op("Add", [op("MatMul", [x, w("qkv_w", ly.qkv_w)], p + "qkv0"),
                         w("qkv_b", ly.qkv_b)], p + "qkv1")
        qkv = op("Transpose", [op("Reshape", [qkv, qkv_shape], p + "qkv2")], p + "qkv",
                 perm=[2, 0, 3, 1, 4])                                   # [3, B, h, T, d]
        q, k, v = (op("Gather", [qkv, picks[j]], p + n, axis=0) for j, n in enumerate("qkv"))
        s = op("MatMul", [op("Mul", [q, scale], p + "qs"),
                          op("Transpose", [k], p + "kt", perm=[0, 1, 3, 2])], p + "s0")
        s = op("Softmax", [op("Add", [s, "bias"], p + "s1")], p + "s", axis=-1)
        ctx = op("Transpose", [op("MatMul", [s, v], p + "c0")], p + "c1", perm=[0, 2, 1, 3])
        ctx = op("Reshape", [ctx, ctx_shape], p + "ctx")
        a = op("Add", [op("MatMul", [ctx, w("out_w", ly.out_w)], p + "a0"),
                       w("out_b", ly.out_b)], p + "a")
        x = op("LayerNormalization", [op("Add", [x, a], p + "r1"), w("ln1_w", ly.ln1_w),
                                      w("ln1_b", ly.ln1_b)], p + "h", axis=-1, epsilon=eps)
        f = op("Add", [op("MatMul", [x, w("ff_w", ly.ff_w)], p + "f0"), w("ff_b", ly.ff_b)],
               p + "f1")
        erf = op("Erf", [op("Div", [f, root2], p + "f2")], p + "f3")        # exact GELU
        f = op("Mul", [op("Mul", [f, half], p + "f4"), op("Add", [erf, one], p + "f5")],
               p + "g")
        f = op("Add", [op("MatMul", [f, w("ff_out_w", ly.ff_out_w)], p + "o0"),
                       w("ff_out_b", ly.ff_out_b)], p + "o")
        x = op("LayerNormalization", [op("Add", [x, f], p + "r2"), w("ln2_w", ly.ln2_w),
                                      w("ln2_b", ly.ln2_b)], f"layer{i}", axis=-1,
               epsilon=eps)
    states = helper.make_tensor_value_info
    graph = helper.make_graph(
        nodes, "encoder",
        [states("x", TensorProto.FLOAT, ["B", "T", hidden]),
         states("bias", TensorProto.FLOAT, ["B", 1, 1, "T"])],
        [states(f"layer{i}", TensorProto.FLOAT, ["B", "T", hidden]) for i in read],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    onnx.checker.check_model(model)
    return model


class OrtEncoder:
    """An `Encoder` whose layers run in an ONNX Runtime session (its embeddings, a
    4-bit table read row by row, stay in numpy)."""

    def __init__(self, enc, session):
        self.enc, self.session = enc, session
        self.outputs = [o.name for o in session.get_outputs()]

    def __getattr__(self, name):
        return getattr(self.enc, name)

    def forward(self, ids, lengths, layers):
        x = self.enc.forward(ids, lengths, [0])[0]     # the embeddings' output, in numpy
        steps = ids.shape[1]
        bias = np.where(np.arange(steps)[None, :] < np.asarray(lengths)[:, None], 0.0,
                        -1e9).astype(np.float32)[:, None, None, :]
        got = dict(zip(range(1, len(self.outputs) + 1),
                       self.session.run(self.outputs, {"x": x, "bias": bias})))
        got[0] = x
        return np.stack([got[i] for i in layers])

    def run(self, sequences, layers, batch_pieces=BATCH_PIECES):
        return Encoder.run(self, sequences, layers, batch_pieces)   # batches, via forward


def session(model, quantize=None):
    import onnx
    import onnxruntime as ort
    from onnxruntime.quantization import QuantType, quantize_dynamic

    data = model.SerializeToString()
    if quantize is not None:
        with tempfile.TemporaryDirectory() as d:
            onnx.save(model, d + "/f.onnx")
            mm = [n.name for n in model.graph.node if n.op_type == "MatMul"]
            quantize_dynamic(d + "/f.onnx", d + "/q.onnx", weight_type=QuantType.QInt8,
                             per_channel=True,
                             nodes_to_exclude=[m for m in mm if not quantize(m)])
            data = Path(d, "q.onnx").read_bytes()
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    opts.log_severity_level = 3
    return ort.InferenceSession(data, opts, providers=["CPUExecutionProvider"])


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 800
    gold = [s for _, s in zip(range(count), read_conllu(DEV))]
    sents = [[w.form for w in s.words] for s in gold]
    pipe = Pipeline.load(ROOT / "models" / "pretrained" / "en_ewt")
    an = pipe.c.with_contextual().analyser
    ctx = an.context
    enc = ctx.encoder
    h = enc.file.header
    model = build_graph(enc.layers, h.hidden, h.heads, h.eps, range(1, enc.depth + 1))
    variants = {"numpy": enc,
                "ort fp32": OrtEncoder(enc, session(model)),
                "ort int8": OrtEncoder(enc, session(model, lambda m: True)),
                "ort int8 ffn-in": OrtEncoder(enc, session(model, lambda m: m.endswith(".f0")))}
    words = sum(map(len, sents))
    speed = {k: [] for k in variants}
    feats = {}
    for _ in range(2):
        for name, e in variants.items():
            ctx.encoder = e
            ctx.sentences(sents[:20])
            t = time.process_time()
            feats[name] = ctx.sentences(sents)
            speed[name].append(words / (time.process_time() - t))
    base = feats["numpy"]
    print(f"{words} words of en_ewt dev, e5-small layers 1..{enc.depth}, one thread")
    print("| encoder | words / CPU-s (x numpy) | max abs diff | analyser arc argmax UAS |")
    print("|---|---|---|---|")
    for name, e in variants.items():
        ctx.encoder = e
        an._recent.clear()
        ok = 0
        for a, s in zip(an.analyze_batch(sents), gold):
            ok += sum(int(x) == w.head for x, w in zip(a.arc_logp[:, 1:].argmax(0), s.words))
        diff = max(float(np.abs(x - y).max()) for x, y in zip(base, feats[name]))
        best = max(speed[name])
        print(f"| {name} | {best:.0f} (x{best / max(speed['numpy']):.2f}) | {diff:.2g} "
              f"| {100 * ok / words:.2f} |")
    ctx.encoder = enc


if __name__ == "__main__":
    main()
