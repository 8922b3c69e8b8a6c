"""docs/graph-dialect.md lists every `graph` op with its ONNX name."""

from __future__ import annotations

from pathlib import Path

from ember.dialects.graph import OPS

DOC = Path(__file__).resolve().parents[2] / "docs" / "graph-dialect.md"


def test_every_op_is_documented() -> None:
    text = DOC.read_text()
    missing = [op.name for op in OPS if f"| `{op.name}` | {op.SPEC.onnx_type} |" not in text]
    assert not missing, f"add these ops to {DOC.name}: {missing}"
