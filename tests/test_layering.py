"""The levels import downwards only: dialects < passes < lowering < targets.

Each module under the level folders is read as source (its imports found in
the syntax tree, those inside functions included), so a lazy import cannot
hide a cycle. Below the API only a few modules of `ember/` itself may be
imported: the errors, the reference interpreter, the options and report
a target's pipeline fills, and the writer of output files; never the compiler, the CLI or the registry,
which import the levels.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

FORBIDDEN_LEVELS: dict[str, tuple[str, ...]] = {
    "dialects": ("passes", "lowering", "targets", "frontends"),
    "passes": ("lowering", "targets", "frontends"),
    "lowering": ("targets", "frontends"),
    "targets": ("frontends",),
    "frontends": ("passes", "lowering", "targets"),
}
"""What each level folder must not import (as `ember.<level>`)."""

LEVELS = ("dialects", "passes", "lowering", "targets", "frontends")
BASE_MODULES = ("errors", "reference", "options", "report", "output_files")
"""The modules of `ember/` itself that the levels may import."""

REUSABLE_EDGES = ("builder", "llvm_types", "control_flow", "memory", "scalars")
"""Pieces of convert-loop-to-llvm another path to LLVM reuses: not tied to the CPU ABI."""


def _imports(source: str, package: str) -> list[tuple[int, str]]:
    """(line, module) of every import in `source`, a module of `package`,
    relative ones resolved."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            # `from ember import compiler` imports ember.compiler
            found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
            found.append((node.lineno, base))
    return found


def _package(path: Path) -> str:
    return ".".join(["ember", *path.relative_to(ROOT).parent.parts])


def _violations(source: str, package: str, level: str) -> list[str]:
    """`line: module` for each import a module of `package`, under `level`, must not make."""
    bad = []
    for line, module in sorted(set(_imports(source, package))):
        parts = module.split(".")
        if parts[0] != "ember" or len(parts) < 2:
            continue
        top = parts[1]
        if top in FORBIDDEN_LEVELS[level] or top not in (*LEVELS, *BASE_MODULES):
            bad.append(f"{line}: {module}")
    return bad


@pytest.mark.parametrize("level", LEVELS)
def test_a_level_imports_only_levels_below_it_and_base_modules(level: str) -> None:
    files = sorted((ROOT / level).rglob("*.py"))
    assert files
    found = {str(path.relative_to(ROOT)): _violations(path.read_text(), _package(path), level)
             for path in files}  # fmt: skip
    assert {path: bad for path, bad in found.items() if bad} == {}


def test_the_reusable_lowering_edges_do_not_import_the_cpu_abi_or_the_pass() -> None:
    package = ROOT / "lowering" / "loop_to_llvm"
    bad = []
    for name in REUSABLE_EDGES:
        path = package / f"{name}.py"
        for line, module in _imports(path.read_text(), _package(path)):
            if module in ("ember.lowering.loop_to_llvm", "ember.lowering.loop_to_llvm.abi"):
                bad.append(f"{name}.py:{line} imports {module}")
    assert bad == []


def test_the_checker_sees_lazy_relative_and_from_ember_imports() -> None:
    source = (
        "import numpy\nfrom ember.passes.graph import fuse\nfrom ember.errors import EmberError\n"
        "def f():\n    from ember.lowering.tensor_to_loop import X\n"
        "from ember import compiler\nfrom ...lowering import tensor_to_loop\n"
    )
    assert _violations(source, "ember.passes.graph", "passes") == [
        "5: ember.lowering.tensor_to_loop",
        "5: ember.lowering.tensor_to_loop.X",
        "6: ember.compiler",
        "7: ember.lowering",
        "7: ember.lowering.tensor_to_loop",
    ]


def _target_packages() -> list[str]:
    """The target packages: the folders under targets/ with a `target.py`."""
    return sorted(p.parent.name for p in (ROOT / "targets").glob("*/target.py"))


def _cross_target_imports(source: str, package: str, target: str, targets: list[str]) -> list[str]:
    """`line: module` for each import of another target's package."""
    bad = []
    for line, module in sorted(set(_imports(source, package))):
        parts = module.split(".")
        if parts[:2] == ["ember", "targets"] and len(parts) > 2:
            if parts[2] in targets and parts[2] != target:
                bad.append(f"{line}: {module}")
    return bad


def test_a_target_never_imports_another_target() -> None:
    targets = _target_packages()
    assert {"cpu", "npu"} <= set(targets)
    found = {}
    for target in targets:
        for path in sorted((ROOT / "targets" / target).rglob("*.py")):
            bad = _cross_target_imports(path.read_text(), _package(path), target, targets)
            if bad:
                found[str(path.relative_to(ROOT))] = bad
    assert found == {}


def test_the_cross_target_check_sees_an_import_of_another_target() -> None:
    source = (
        "from ember.targets.cpu.model import compile_module\nfrom ember.targets.calls import X\n"
    )
    assert _cross_target_imports(source, "ember.targets.npu", "npu", ["cpu", "npu"]) == [
        "1: ember.targets.cpu.model",
        "1: ember.targets.cpu.model.compile_module",
    ]


def _tests_of_a_target_name(source: str, names: list[str]) -> list[int]:
    """The lines of `source` comparing something with a target's name
    (`target == "npu"`, `args.target != "cpu"`, `target in ("cpu", ...)`)."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        named = any(isinstance(s, ast.Name) and "target" in s.id
                    or isinstance(s, ast.Attribute) and "target" in s.attr for s in sides)  # fmt: skip
        literal = [s.value for s in sides if isinstance(s, ast.Constant)]
        literal += [e.value for s in sides if isinstance(s, ast.Tuple | ast.List | ast.Set)
                    for e in s.elts if isinstance(e, ast.Constant)]  # fmt: skip
        if named and any(v in names for v in literal):
            lines.append(node.lineno)
    return lines


def test_nothing_above_the_targets_tests_a_target_name() -> None:
    names = _target_packages()
    found = {}
    for folder in ("ember", *LEVELS):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if lines := _tests_of_a_target_name(path.read_text(), names):
                found[str(path.relative_to(ROOT))] = lines
    assert found == {}


def test_the_target_name_check_sees_a_comparison() -> None:
    source = 'if args.target == "npu":\n    pass\nif target in ("cpu", "x"):\n    pass\nif t == "npu": pass\n'
    assert _tests_of_a_target_name(source, ["cpu", "npu"]) == [1, 3]
