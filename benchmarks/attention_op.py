"""A transformer block with ONNX's `Attention` op next to the same block with
the attention written out in MatMul, Div, Add, Softmax and MatMul.

    python benchmarks/attention_op.py [--seq 128] [--hidden 768] [--heads 12] [--runs 20]

The block is the GPT-2-style decoder block of the suite (`gpt_block`):
pre-LayerNorm causal self-attention, output projection, residual,
LayerNorm, GELU MLP, residual. The expanded form is that model as is (its
causal mask an additive constant of -10000); the `Attention` form replaces
its five attention nodes by one `Attention` (is_causal=1, opset 23), its
keys transposed to [batch, heads, sequence, size] as the op takes them.
Both are compiled by Ember in this process and run alternately, one thread;
the table gives the median latencies, their ratio (Attention / expanded,
below 1: the op is faster) and the largest difference between the two
outputs. onnxruntime's latencies on the same two files are given beside.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
from onnx import helper

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import ember  # noqa: E402
from tests.support.models import gpt_block  # noqa: E402

_EXPANDED = ("scores_raw", "scores_scaled", "scores", "probs", "context")
"""The outputs of the nodes that the Attention op replaces."""


def expanded_block(seq: int, hidden: int, heads: int) -> onnx.ModelProto:
    model = gpt_block(seq=seq, hidden=hidden, heads=heads, ffn=4 * hidden)
    model.opset_import[0].version = 23
    return model


def attention_block(seq: int, hidden: int, heads: int) -> onnx.ModelProto:
    """`expanded_block` with its attention as one `Attention` node."""
    model = expanded_block(seq, hidden, heads)
    nodes = []
    for node in model.graph.node:
        if node.output[0] == "k_t":
            node = helper.make_node("Transpose", list(node.input), ["k_t"], perm=[0, 2, 1, 3])
        if node.output[0] in _EXPANDED:
            if node.output[0] == "context":
                nodes.append(helper.make_node("Attention", ["q_t", "k_t", "v_t"], ["context"],
                                              is_causal=1))  # fmt: skip
            continue
        nodes.append(node)
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    kept = [i for i in model.graph.initializer if i.name not in ("scale", "causal_mask")]
    del model.graph.initializer[:]
    model.graph.initializer.extend(kept)
    return model


def _onnxruntime(model: onnx.ModelProto) -> Callable[[np.ndarray], object]:
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    session = onnxruntime.InferenceSession(model.SerializeToString(), options,
                                           providers=["CPUExecutionProvider"])  # fmt: skip
    return lambda x: session.run(None, {"x": x})


def _timed(fn: Callable[[np.ndarray], object], x: np.ndarray, times: list[float]) -> None:
    start = time.perf_counter()
    fn(x)
    times.append((time.perf_counter() - start) * 1e3)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--hidden", type=int, default=768)
    parser.add_argument("--heads", type=int, default=12)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    models = {"expanded": expanded_block(args.seq, args.hidden, args.heads),
              "Attention": attention_block(args.seq, args.hidden, args.heads)}  # fmt: skip
    x = np.random.default_rng(1).standard_normal((1, args.seq, args.hidden)).astype(np.float32)
    compiled = {name: ember.compile(model, threads=1) for name, model in models.items()}
    sessions = {name: _onnxruntime(model) for name, model in models.items()}
    outputs = {name: np.asarray(fn(x)) for name, fn in compiled.items()}
    times: dict[str, list[float]] = {name: [] for name in models}
    ort_times: dict[str, list[float]] = {name: [] for name in models}
    for run in range(args.runs + 3):  # the first 3: warm-up
        for name in models:
            _timed(compiled[name], x, times[name] if run >= 3 else [])
            _timed(sessions[name], x, ort_times[name] if run >= 3 else [])
    ember_ms = {name: statistics.median(t) for name, t in times.items()}
    print(f"GPT block, seq {args.seq}, hidden {args.hidden}, {args.heads} heads, 1 thread, "
          f"median of {args.runs}")  # fmt: skip
    for name in models:
        print(f"  {name:10s} ember {ember_ms[name]:8.3f} ms")  # noqa: E231
    print(f"  ratio Attention / expanded: {ember_ms['Attention'] / ember_ms['expanded']:.2f}")
    difference = float(np.max(np.abs(outputs["Attention"] - outputs["expanded"])))
    print(f"  max |Attention - expanded| = {difference:.3g}")
    ort_ms = {name: statistics.median(t) for name, t in ort_times.items()}
    print("  onnxruntime, same files: " + ", ".join(f"{n} {ms:.3f} ms" for n, ms in ort_ms.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
