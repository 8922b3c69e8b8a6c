"""ONNX's node conformance cases that Ember passes stay passing.

`passing.txt` is written by `python benchmarks/conformance.py --write-passing
tests/conformance/passing.txt`; the full suite (with failures) is that
command without the option. The default suite runs every passing case but
the `_expanded` ones (an op's function body inlined: compositions of ops
whose own cases run here); those run with the slow tests.
"""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from benchmarks.conformance import node_cases, run_case

PASSING = [
    line.strip()
    for line in (Path(__file__).parent / "passing.txt").read_text().splitlines()
    if line.strip() and not line.startswith("#")
]


@functools.cache
def cases_by_name() -> dict:
    return {case.name: case for case in node_cases()}


@pytest.mark.parametrize(
    "name",
    [pytest.param(n, marks=pytest.mark.slow) if n.endswith("_expanded") else n for n in PASSING],
)
def test_node_case(name: str) -> None:
    outcome = run_case(cases_by_name()[name])
    assert outcome.status == "pass", f"{outcome.status}: {outcome.detail}"
