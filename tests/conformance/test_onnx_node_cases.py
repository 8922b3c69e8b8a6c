"""ONNX's node conformance cases that Ember passes stay passing.

`passing.txt` is written by `python benchmarks/conformance.py --write-passing
tests/conformance/passing.txt`; the full suite (with failures) is that
command without the option. The default suite runs a fifth of the passing
cases (every fifth by name, never an `_expanded` one: an op's function body
inlined, a composition of ops whose own cases run, nor one of `HEAVY`), so
that it stays within its time; the slow tests run the others, and CI runs both, so every passing
case is checked on every landing.
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


HEAVY = frozenset({"test_melweightmatrix"})
"""Cases of several seconds each on two cores (a large constant table): slow."""


def _in_default_suite(index: int, name: str) -> bool:
    """Every fifth case but the `_expanded` and `HEAVY` ones, by the list's
    (sorted) order."""
    return index % 5 == 0 and not name.endswith("_expanded") and name not in HEAVY


@pytest.mark.parametrize(
    "name",
    [n if _in_default_suite(i, n) else pytest.param(n, marks=pytest.mark.slow)
     for i, n in enumerate(sorted(PASSING))],
)  # fmt: skip
def test_node_case(name: str) -> None:
    outcome = run_case(cases_by_name()[name])
    assert outcome.status == "pass", f"{outcome.status}: {outcome.detail}"
