"""The levels import downwards only: dialects < passes < lowering < targets.

Each module under the level folders is read as source (its imports found in
the syntax tree, those inside functions included), so a lazy import cannot
hide a cycle. Below the API only a few modules of `ember/` itself may be
imported: the errors, the reference interpreter, and the options and report
a target's pipeline fills; never the compiler, the CLI or the registry,
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
BASE_MODULES = ("errors", "reference", "options", "report")
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
