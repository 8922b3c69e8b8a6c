"""ONNX's node conformance suite through Ember's ONNX backend.

    python benchmarks/conformance.py                 # all 1,884 cases, pass rate per op
    python benchmarks/conformance.py -k conv         # cases whose name contains "conv"
    python benchmarks/conformance.py --write-passing tests/conformance/passing.txt
    python benchmarks/conformance.py --peer --write-doc docs/conformance.md

Each case is compiled for the CPU and compared with ONNX's expected outputs
at the case's own tolerances. A case fails by mismatch, by error (an Ember
diagnostic: unsupported op, dtype, dynamic shape ...) or by crash (any other
exception, which is a bug). `--peer` runs onnxruntime's ONNX backend on the
same cases under the same rules, beside Ember. A case is filed under the op
it tests: its first node's op, or for an `_expanded` case (the op's function
body inlined) the op of the case it expands. The passing list feeds the CI
test tests/conformance/test_onnx_node_cases.py; `--write-doc` writes the
per-op table and every failing case with its reason (docs/conformance.md).
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import time
import warnings
from dataclasses import dataclass

import numpy as np

# Every case is compiled, not stored in (or loaded from) the compile cache.
os.environ.setdefault("EMBER_CACHE", "0")


_NUMPY_DROPOUT = (
    "random: the expected output drops by NumPy's Mersenne Twister seeded with 0; Ember's "
    "masks are SplitMix64 numbers from the seed attribute (onnxruntime has its own generator)"
)
_NUMPY_BERNOULLI = (
    "random: the expected output is np.random.binomial's draws (NumPy's Mersenne Twister, "
    "the seed attribute unused); Ember's draws are SplitMix64 uniforms from the seed "
    "attribute below p, which ONNX allows (onnxruntime has its own generator)"
)
_F32_DFT = (
    "float32 noise in the expected output: Ember's transform (summed in f64, rounded once to "
    "f32) gives 3e-15 where the exact value is 0 and the expected output holds 1.9e-7, its "
    "generator's float32 rounding, above the case's atol of 1e-7"
)

EXPLAINED_MISMATCHES = {
    "test_training_dropout": _NUMPY_DROPOUT,
    "test_training_dropout_default": _NUMPY_DROPOUT,
    "test_training_dropout_default_mask": _NUMPY_DROPOUT,
    "test_training_dropout_mask": _NUMPY_DROPOUT,
    **{
        f"test_bernoulli{variant}{expanded}": _NUMPY_BERNOULLI
        for variant in ("", "_double", "_seed")
        for expanded in ("", "_expanded")
    },
    "test_attention_4d_causal_fp16_expanded": (
        "f16 rounding: each op of the expanded body correctly rounded to f16 (as Ember's "
        "reference interpreter and compiled code give it) lands 2 ulps from the expected "
        "output at two elements, which rounds Softmax's exp, sum and quotient to f16 one "
        "by one; at 0.469, rtol 1e-3 (4.7e-4) is less than 2 f16 ulps (4.9e-4)"
    ),
    "test_dft_inverse": _F32_DFT,
    "test_dft_inverse_opset19": _F32_DFT,
}
"""Mismatches understood not to be Ember's error: why, for the failure list."""


@dataclass
class Outcome:
    case: str
    op: str
    status: str  # pass | mismatch | error | crash
    detail: str = ""


def node_cases(pattern: str = "") -> list:
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = collect_testcases(None)
    return [c for c in cases if pattern in c.name]


def _first_op(case) -> str:  # noqa: ANN001 - onnx's TestCase
    nodes = case.model.graph.node
    return (nodes[0].domain + "." if nodes[0].domain else "") + nodes[0].op_type if nodes else "?"


def ops_tested(cases: list) -> dict[str, str]:
    """Each case's op: its first node's, or for an `_expanded` case the op of
    the case it expands (its first node is often a Constant of the body)."""
    first = {case.name: _first_op(case) for case in cases}
    ops = {}
    for name, op in first.items():
        plain = name.removesuffix("_expanded")
        ops[name] = f"{first[plain]} (expanded)" if plain != name and plain in first else op
    return ops


def _compare(outputs: list, expected: list, case) -> None:  # noqa: ANN001
    """Raises AssertionError where `outputs` differ from the case's outputs,
    compared as ONNX's runner (`onnx.backend.test.runner`) compares them: its
    own `assert_similar_outputs` (bfloat16 at two ulps), expected outputs held
    as `TensorProto`s read with `numpy_helper`."""
    from onnx import TensorProto, numpy_helper
    from onnx.backend.test.runner import Runner

    if len(outputs) != len(expected):
        raise AssertionError(f"{len(outputs)} outputs, expected {len(expected)}")
    expected = [numpy_helper.to_array(w) if isinstance(w, TensorProto) else np.asarray(w)
                for w in expected]  # fmt: skip
    for got, want in zip(outputs, expected):
        got = np.asarray(got)
        if got.shape != want.shape or got.dtype != want.dtype:
            raise AssertionError(f"{got.dtype}{list(got.shape)} vs {want.dtype}{list(want.shape)}")
    Runner.assert_similar_outputs(expected, list(outputs), case.rtol, case.atol)


def run_case(case, op: str = "", peer: bool = False) -> Outcome:  # noqa: ANN001 - onnx's TestCase
    """Runs one case through Ember (or, with `peer`, onnxruntime's backend)
    as ONNX's runner does: the inputs passed as the case holds them (arrays or
    `TensorProto`s, which the backend reads)."""
    from ember.errors import EmberError

    if peer:
        import onnxruntime.backend as backend
    else:
        import ember.onnx_backend as backend
    op = op or _first_op(case)
    try:
        rep = backend.prepare(case.model)
        for inputs, expected in case.data_sets:
            _compare(list(rep.run(inputs)), list(expected), case)
    except AssertionError as error:
        numbers = str(error).strip().splitlines()[-1][:120]
        reason = EXPLAINED_MISMATCHES.get(case.name) if not peer else None
        return Outcome(case.name, op, "mismatch", f"{reason} ({numbers.strip()})" if reason
                       else numbers)  # fmt: skip
    except EmberError as error:
        return Outcome(case.name, op, "error", str(error).splitlines()[0][:160])
    except Exception as error:  # noqa: BLE001 - a crash is a finding to report
        status = "error" if peer else "crash"
        return Outcome(case.name, op, status, f"{type(error).__name__}: {_one_line(error)}")
    return Outcome(case.name, op, "pass")


def _one_line(error: Exception) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return (lines[0] if lines else "")[:160]


def run_all(cases: list, peer: bool = False) -> list[Outcome]:
    ops = ops_tested(cases)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [run_case(case, ops[case.name], peer) for case in cases]


def _passes_by_op(outcomes: list[Outcome]) -> dict[str, tuple[int, int]]:
    by_op: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0])
    for outcome in outcomes:
        by_op[outcome.op][0] += outcome.status == "pass"
        by_op[outcome.op][1] += 1
    return {op: (passed, total) for op, (passed, total) in by_op.items()}


def print_table(outcomes: list[Outcome], peer: list[Outcome] | None) -> None:
    by_op: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for outcome in outcomes:
        by_op[outcome.op][outcome.status] += 1
    peer_by_op = _passes_by_op(peer) if peer else {}
    peer_head = "  onnxruntime" if peer else ""
    print(f"{'op':<40} {'pass':>5} {'total':>5}  mismatch error crash{peer_head}")
    for op in sorted(by_op):
        counts = by_op[op]
        total = sum(counts.values())
        peer_text = f"  {peer_by_op[op][0]:>11}" if peer else ""
        print(f"{op:<40} {counts['pass']:>5} {total:>5}  {counts['mismatch']:>8} "
              f"{counts['error']:>5} {counts['crash']:>5}{peer_text}")  # fmt: skip


def _rate(outcomes: list[Outcome]) -> str:
    passed = sum(o.status == "pass" for o in outcomes)
    return (
        f"{passed:,} of {len(outcomes):,} cases pass ({100 * passed / max(len(outcomes), 1):.1f}%)"
    )


def write_doc(path: str, outcomes: list[Outcome], peer: list[Outcome] | None) -> None:
    """docs/conformance.md: the totals, the per-op table, every failing case."""
    ours = _passes_by_op(outcomes)
    theirs = _passes_by_op(peer) if peer else {}
    lines = [
        "# ONNX node conformance",
        "",
        "ONNX's node test cases (`onnx.backend.test`), each compiled for the CPU",
        "through `ember.onnx_backend` and compared with the case's expected",
        "outputs at its own tolerances. Written by",
        "`python benchmarks/conformance.py --peer --write-doc docs/conformance.md`;",
        "do not edit by hand. The passing cases are",
        "`tests/conformance/passing.txt`, which the default test suite runs.",
        "",
        f"**Ember: {_rate(outcomes)}.**",
    ]
    if peer:
        lines.append(f"onnxruntime's backend under the same rules: {_rate(peer)}.")
    lines += [
        "",
        "A case is filed under the op it tests (an `_expanded` case, the op's",
        'function body inlined, under "OP (expanded)").',
        "",
        "| op | Ember | cases |" + (" onnxruntime |" if peer else ""),
        "|---|---:|---:|" + ("---:|" if peer else ""),
    ]
    for op in sorted(ours):
        passed, total = ours[op]
        peer_cell = f" {theirs.get(op, (0, 0))[0]} |" if peer else ""
        lines.append(f"| {op} | {passed} | {total} |{peer_cell}")
    lines += ["", "## Cases that fail, and why", ""]
    failing: dict[str, list[Outcome]] = collections.defaultdict(list)
    for outcome in outcomes:
        if outcome.status != "pass":
            failing[outcome.op].append(outcome)
    for op in sorted(failing):
        lines += [f"### {op}", ""]
        for o in failing[op]:
            detail = o.detail.replace("|", "\\|").replace(o.case + ": ", "")
            lines.append(f"- `{o.case}`: {o.status}: {detail}")
        lines.append("")
    with open(path, "w") as stream:
        stream.write("\n".join(lines).rstrip() + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-k", default="", help="only cases whose name contains this")
    parser.add_argument("--write-passing", help="write the names of passing cases to this file")
    parser.add_argument("--write-doc", help="write the per-op table and failures (Markdown)")
    parser.add_argument("--peer", action="store_true", help="run onnxruntime on the cases too")
    parser.add_argument("-v", action="store_true", help="print every failing case")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    cases = node_cases(args.k)
    outcomes = run_all(cases)
    peer = run_all(cases, peer=True) if args.peer else None
    print_table(outcomes, peer)
    print(f"\nEmber: {_rate(outcomes)}, {time.perf_counter() - start:.0f}s")
    if peer:
        print(f"onnxruntime: {_rate(peer)}")
    if args.v:
        for outcome in outcomes:
            if outcome.status != "pass":
                print(f"  {outcome.status:<8} {outcome.case}: {outcome.detail}")
    if args.write_passing:
        with open(args.write_passing, "w") as stream:
            stream.write(
                "# ONNX node test cases that pass through Ember (benchmarks/conformance.py)\n"
            )
            stream.writelines(f"{o.case}\n" for o in outcomes if o.status == "pass")
    if args.write_doc:
        write_doc(args.write_doc, outcomes, peer)
    return 0


if __name__ == "__main__":
    sys.exit(main())
