"""Runs the lit + FileCheck suite (tests/filecheck/) as part of pytest, one
pytest case per lit file, so one command runs everything."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LIT_FILES = sorted(
    p.relative_to(ROOT)
    for suffix in ("*.mlir", "*.test")
    for p in (ROOT / "tests" / "filecheck").rglob(suffix)
    if "Inputs" not in p.parts and "Output" not in p.parts
)


SLOW_LIT_FILES = {
    Path("tests/filecheck") / name
    for name in ("tools/ember-opt-errors.test", "tools/ember-import-errors.test",
                 "tools/ember-compile-versions.test", "tools/ember-opt-help.test",
                 "tools/ember-tune.test", "tools/ember-npu.test", "tools/ember-opt-print.mlir",
                 "lowering/symbolic-sizes.mlir", "lowering/symbolic-batch-conv.mlir",
                 "frontends/onnx/import-symbolic.test")
}  # fmt: skip
"""Lit files of many tool runs each (5 to 22 s on two cores): with the slow
tests."""


@pytest.mark.parametrize(
    "path",
    [pytest.param(p, marks=pytest.mark.slow) if p in SLOW_LIT_FILES else p for p in LIT_FILES],
    ids=str,
)
def test_lit(path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-c", "from lit.main import main; main()", "-v", str(path)],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
