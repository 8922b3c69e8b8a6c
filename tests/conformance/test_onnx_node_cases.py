"""ONNX's node conformance cases that Ember passes stay passing.

`passing.txt` is written by `python benchmarks/conformance.py --write-passing
tests/conformance/passing.txt`; the full suite (with failures) is that
command without the option.
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


@pytest.mark.parametrize("name", PASSING)
def test_node_case(name: str) -> None:
    outcome = run_case(cases_by_name()[name])
    assert outcome.status == "pass", f"{outcome.status}: {outcome.detail}"
