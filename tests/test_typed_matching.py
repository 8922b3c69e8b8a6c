"""Passes, lowerings and the reference interpreter match `graph` ops by class
(`isinstance`, `op_type_rewrite_pattern`, tables keyed by op class), never by
comparing an op's ONNX type or name with a string: a misspelt string never
matches and nothing says so, a misspelt class is a NameError at import.

The ONNX boundary keeps its strings: the importer's `OPS_BY_ONNX_TYPE` and
the reference kernels, which implement ONNX operators under ONNX's names."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ember.dialects.graph import OPS

ROOT = Path(__file__).resolve().parents[1]
SCANNED = [
    *sorted((ROOT / "passes").rglob("*.py")),
    *sorted((ROOT / "lowering").rglob("*.py")),
    *sorted(p for p in (ROOT / "ember" / "reference").rglob("*.py") if "kernels" not in p.parts),
]

_OP_STRINGS = {op.SPEC.onnx_type for op in OPS} | {op.name for op in OPS}
_LITERAL = r"""["']([\w.]+)["']"""
FORBIDDEN = [
    re.compile(r"onnx_type\s*(==|!=)"),
    re.compile(r"onnx_type\s+(not\s+)?in\b"),
    re.compile(r"\.name\s*(==|!=)\s*" + _LITERAL),
    re.compile(r"(==|!=)\s*" + _LITERAL),
    re.compile(_LITERAL + r"\s*(==|!=)"),
    re.compile(r"\bin\s*[(\[{]\s*" + _LITERAL),
]


def string_matches(source: str) -> list[str]:
    """The lines of `source` that compare an op type or op name with a string."""
    found = []
    for number, line in enumerate(source.splitlines(), 1):
        for pattern in FORBIDDEN:
            match = pattern.search(line)
            if match is None:
                continue
            literals = [g for g in match.groups() if g and g not in ("==", "!=", "not ")]
            if pattern.pattern.startswith("onnx_type") or any(g in _OP_STRINGS for g in literals):
                found.append(f"{number}: {line.strip()}")
                break
    return found


def test_the_scan_covers_the_graph_passes_and_lowering() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in SCANNED}
    assert {"passes/graph/canonicalize.py", "lowering/graph_to_tensor/windows.py",
            "ember/reference/evaluate.py"} <= names  # fmt: skip


@pytest.mark.parametrize(
    "line",
    [
        'if op.SPEC.onnx_type == "MaxPool":',
        "if spec.onnx_type in REARRANGING:",
        'if op.name == "graph.conv":',
        'is_max = "MaxPool" == kind',
        'if kind in ("Shape", "Size"):',
    ],
)
def test_the_scan_catches_string_matching(line: str) -> None:
    assert string_matches(line) != []


def test_the_scan_ignores_other_strings() -> None:
    assert string_matches('if mode == "constant":\nif auto_pad in ("VALID", "SAME_UPPER"):') == []


@pytest.mark.parametrize("path", SCANNED, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_op_is_matched_by_a_string(path: Path) -> None:
    assert string_matches(path.read_text()) == []
