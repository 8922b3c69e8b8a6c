"""ONNX's node conformance suite through Ember's ONNX backend.

    python benchmarks/conformance.py                 # all 1,884 cases, pass rate per op
    python benchmarks/conformance.py -k conv         # cases whose name contains "conv"
    python benchmarks/conformance.py --write-passing tests/conformance/passing.txt

Each case is compiled for the CPU and compared with ONNX's expected outputs
at the case's own tolerances. A case fails by mismatch, by error (an Ember
diagnostic: unsupported op, dtype, dynamic shape ...) or by crash (any other
exception, which is a bug). The passing list feeds the CI test
tests/conformance/test_onnx_node_cases.py.
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
import warnings
from dataclasses import dataclass

import numpy as np


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


def run_case(case) -> Outcome:  # noqa: ANN001 - onnx's TestCase
    """One case as ONNX's runner (`onnx.backend.test.runner`) runs it: the
    inputs passed as the case holds them (arrays or `TensorProto`s, which the
    backend reads), the outputs compared by the runner's own
    `assert_similar_outputs` (bfloat16 at two ulps)."""
    from onnx import TensorProto, numpy_helper
    from onnx.backend.test.runner import Runner

    import ember.onnx_backend as backend
    from ember.errors import EmberError

    op = case.model.graph.node[0].op_type if case.model.graph.node else "?"
    try:
        rep = backend.prepare(case.model)
        for inputs, expected in case.data_sets:
            outputs = rep.run(inputs)
            if len(outputs) != len(expected):
                return Outcome(
                    case.name, op, "mismatch", f"{len(outputs)} outputs, expected {len(expected)}"
                )
            expected = [numpy_helper.to_array(w) if isinstance(w, TensorProto) else np.asarray(w)
                        for w in expected]  # fmt: skip
            for got, want in zip(outputs, expected):
                if got.shape != want.shape or got.dtype != want.dtype:
                    return Outcome(case.name, op, "mismatch",
                                   f"{got.dtype}{list(got.shape)} vs {want.dtype}{list(want.shape)}")  # fmt: skip
            Runner.assert_similar_outputs(expected, list(outputs), case.rtol, case.atol)
    except AssertionError as error:
        return Outcome(case.name, op, "mismatch", str(error).strip().splitlines()[-1][:120])
    except EmberError as error:
        return Outcome(case.name, op, "error", str(error).splitlines()[0][:160])
    except Exception as error:  # noqa: BLE001 - a crash is a finding to report
        return Outcome(case.name, op, "crash", f"{type(error).__name__}: {str(error)[:160]}")
    return Outcome(case.name, op, "pass")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-k", default="", help="only cases whose name contains this")
    parser.add_argument("--write-passing", help="write the names of passing cases to this file")
    parser.add_argument("-v", action="store_true", help="print every failing case")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    outcomes = [run_case(case) for case in node_cases(args.k)]
    by_op: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for outcome in outcomes:
        by_op[outcome.op][outcome.status] += 1
    print(f"{'op':<28} {'pass':>5} {'total':>5}  mismatch error crash")
    for op in sorted(by_op):
        counts = by_op[op]
        total = sum(counts.values())
        print(
            f"{op:<28} {counts['pass']:>5} {total:>5}  {counts['mismatch']:>8} {counts['error']:>5} {counts['crash']:>5}"
        )
    passed = sum(o.status == "pass" for o in outcomes)
    print(f"\n{passed} of {len(outcomes)} cases pass ({100 * passed / max(len(outcomes), 1):.1f}%), "
          f"{time.perf_counter() - start:.0f}s")  # fmt: skip
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
