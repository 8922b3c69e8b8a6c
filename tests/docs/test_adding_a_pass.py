"""The worked example of docs/adding-a-pass.md (graph-fold-double-relu): the
doc's pass, registered the way the doc says, passes the doc's lit test."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
from xdsl.parser import Parser

import ember
from ember.context import make_context
from ember.dialects.graph import ReluOp
from tests.test_typed_matching import string_matches

DOC = Path(__file__).resolve().parents[2] / "docs" / "adding-a-pass.md"
MODULE = "ember.passes.graph.fold_double_relu"

# Runs ember-opt with the doc's module imported under the name the doc gives
# it and its row added to `PASSES`, as step 2's registration does in the tree.
DRIVER = """
import importlib.util, sys
import ember.registry
spec = importlib.util.spec_from_file_location({module!r}, {path!r})
module = importlib.util.module_from_spec(spec)
sys.modules[{module!r}] = module
spec.loader.exec_module(module)
ember.registry.PASSES[module.FoldDoubleReluPass.name] = {module!r} + ".FoldDoubleReluPass"
from ember.opt import main
sys.exit(main())
"""


def _block(language: str, marker: str) -> str:
    blocks = re.findall(rf"```{language}\n(.*?)```", DOC.read_text(), re.DOTALL)
    matching = [b for b in blocks if marker in b]
    assert len(matching) == 1, f"the doc's {language} block with {marker!r} is missing"
    return matching[0]


def _pass_source() -> str:
    return _block("python", "class FoldDoubleReluPass")


def _write_driver(tmp_path: Path) -> Path:
    source = tmp_path / "fold_double_relu.py"
    source.write_text(_pass_source())
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER.format(module=MODULE, path=str(source)))
    return driver


def test_step1_the_pass_matches_by_class() -> None:
    source = _pass_source()
    assert "@op_type_rewrite_pattern" in source
    assert "op: ReluOp" in source
    assert string_matches(source) == []


def test_step2_the_registration_row_names_the_class() -> None:
    row = _block("python", ".FoldDoubleReluPass").strip()
    assert row == f'"graph-fold-double-relu": "{MODULE}.FoldDoubleReluPass",'
    assert re.search(r'^    "graph-infer-shapes": "ember\.passes\.graph\.infer_shapes\.\w+",$',
                     (DOC.parents[1] / "ember" / "registry.py").read_text(), re.M)  # fmt: skip


def test_step3_the_doc_lit_test_passes(tmp_path: Path) -> None:
    driver = _write_driver(tmp_path)
    test = tmp_path / "fold-double-relu.mlir"
    test.write_text(_block("mlir", "// RUN:"))
    runs = re.findall(r"^// RUN: (.*)$", test.read_text(), re.MULTILINE)
    assert runs and all(
        "--verify-diagnostics --split-input-file" in r
        or "--split-input-file --verify-diagnostics" in r
        for r in runs
    )
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    for run in runs:
        command = run.replace("ember-opt", f"{sys.executable} {driver}").replace("%s", str(test))
        result = subprocess.run(["bash", "-o", "pipefail", "-c", command], capture_output=True,
                                text=True, env=env)  # fmt: skip
        assert result.returncode == 0, f"{run}\n{result.stdout}\n{result.stderr}"


def test_step3_a_check_that_does_not_hold_fails(tmp_path: Path) -> None:
    """The lit run above can fail: with the pass left out, @twice keeps both Relus."""
    driver = _write_driver(tmp_path)
    test = tmp_path / "fold-double-relu.mlir"
    test.write_text(_block("mlir", "// RUN:").replace("-p graph-fold-double-relu", "-p dce"))
    run = re.findall(r"^// RUN: (.*)$", test.read_text(), re.MULTILINE)[0]
    command = run.replace("ember-opt", f"{sys.executable} {driver}").replace("%s", str(test))
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    result = subprocess.run(["bash", "-o", "pipefail", "-c", command], capture_output=True,
                            text=True, env=env)  # fmt: skip
    assert result.returncode != 0


def test_the_pass_keeps_the_values() -> None:
    """Numerics against the reference interpreter, before and after the pass."""
    namespace: dict[str, object] = {"__name__": MODULE}
    exec(compile(_pass_source(), str(DOC), "exec"), namespace)
    pass_class = namespace["FoldDoubleReluPass"]
    source = _block("mlir", "// RUN:").split("// -----")[0]
    module = Parser(make_context(), source).parse_module()
    x = np.array([[-1.0, 0.5, np.nan], [-0.0, 3.0, -2.0]], dtype=np.float32)
    before = ember.reference.run(module, [x])[0]
    pass_class().apply(make_context(), module)  # type: ignore[operator]
    after = ember.reference.run(module, [x])[0]
    np.testing.assert_array_equal(after, before)
    assert sum(1 for op in module.walk() if isinstance(op, ReluOp)) == 1
