"""docs/adding-a-target.md is true: its lists of what a target must and may
provide match `Target`, the targets in the tree follow its recipe, and its
worked example (the tensor-level interpreter), registered as the doc says,
compiles, runs and deploys a model through every entry point's lookup."""

from __future__ import annotations

import importlib.util
import inspect
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import ember
import ember.reference
from ember.deploy import compile_to_directory
from ember.frontends.onnx import import_onnx
from ember.targets import registry
from ember.targets.registry import target_named, target_names
from ember.targets.target import Target

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "adding-a-target.md"
MODULE = "ember.targets.tensor_interpreter.target"


def _table_names(heading: str) -> set[str]:
    """The first column's names (before any `(`) of the table after `heading`."""
    section = DOC.read_text().split(heading, 1)[1]
    cells = re.findall(r"^\| (`[^|]+) \|", section.split("\n## ", 1)[0], re.MULTILINE)
    return {name.split("(")[0] for cell in cells for name in re.findall(r"`([^`]+)`", cell)}


def test_the_must_list_is_the_abstract_methods_and_the_required_attributes() -> None:
    must = _table_names("## What a target must provide")
    abstract = set(Target.__abstractmethods__)
    required = {n for n, v in vars(Target).get("__annotations__", {}).items()
                if not hasattr(Target, n)}  # fmt: skip
    assert must == abstract | required


def test_the_may_list_is_every_member_with_a_default() -> None:
    may = _table_names("## What a target may provide")
    defaults = {n for n, v in vars(Target).items()
                if not n.startswith("_") and n not in Target.__abstractmethods__}  # fmt: skip
    assert may == defaults


@pytest.mark.parametrize("name", target_names())
def test_every_target_in_the_table_follows_the_recipe(name: str) -> None:
    target = target_named(name)
    assert target.name == name
    module = inspect.getmodule(type(target))
    assert module is not None and module.__name__ == f"ember.targets.{name}.target"
    assert (ROOT / "targets" / name / "target.py").is_file()
    assert target.summary and target.kernel_form


def _doc_target(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> type[Target]:
    """The doc's target module, imported under the name the doc gives it and
    registered as its table row says."""
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.DOTALL)
    [source] = [b for b in blocks if "class TensorInterpreterTarget" in b]
    path = tmp_path / "target.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(MODULE, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, MODULE, module)
    spec.loader.exec_module(module)
    target_class: type[Target] = module.TensorInterpreterTarget
    monkeypatch.setitem(registry.TARGETS, target_class.name, target_class)
    registry.target_named.cache_clear()
    return target_class


def _cnn() -> tuple[object, np.ndarray]:
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.standard_normal(s).astype(np.float32), n)
             for n, s in (("w", (4, 3, 3, 3)), ("b", (4,)))]  # fmt: skip
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("GlobalAveragePool", ["r"], ["y"])]  # fmt: skip
    graph = helper.make_graph(
        nodes, "cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    return model, rng.standard_normal((1, 3, 8, 8)).astype(np.float32)


def test_the_worked_example_compiles_runs_and_deploys(monkeypatch: pytest.MonkeyPatch,
                                                      tmp_path: Path) -> None:  # fmt: skip
    _doc_target(monkeypatch, tmp_path)
    try:
        model, x = _cnn()
        compiled = ember.compile(model, target="tensor-interpreter")
        [expected] = ember.reference.run(import_onnx(model), {"x": x})
        [got] = compiled(x)
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
        assert got.std() > 0
        deployed = compile_to_directory(model, tmp_path / "out", "cnn", target="tensor-interpreter")
        [path] = deployed.files
        assert path.name == "cnn.tensor.mlir" and "linalg" in path.read_text()
    finally:
        registry.target_named.cache_clear()
