"""Compile work grows linearly with model size: for each synthetic family of
`benchmarks/compile_time.py`, the Python function calls per graph node that
the CPU pipeline makes (graph IR to the LLVM IR text of its parts) at
10,000 nodes are within 1.5x of those at 1,000.

Work is counted, not timed (machines and their load differ): cProfile
counts every Python call, so a pass that compares each kernel with every
earlier one, or walks the module once per op it rewrites, shows up as a
count that grows with the model. LLVM's own work (C++) is not counted; a
test of Ember's passes need not time LLVM. Each family takes one to a few
minutes under the profiler, so these are slow tests."""

from __future__ import annotations

import cProfile
import pstats
from collections.abc import Callable

import onnx
import pytest

from benchmarks.compile_time import chain, conv, fan, mlp, wide
from ember.frontends.onnx import import_onnx
from ember.report import CompileReport
from ember.targets.cpu.llvm_module import to_llvmlite
from ember.targets.cpu.module_parts import part_count, split_module
from ember.targets.cpu.pipeline import fewer_collections, lower_to_llvm
from ember.targets.stages import VERIFY_ENV

SIZES = (1_000, 10_000)
GROWTH = 1.5
"""How much more work per node the larger size may take (fixed costs make
the smaller one's per-node count the larger, so flat work passes easily)."""


def calls_per_node(model: onnx.ModelProto) -> float:
    """Python calls made importing and lowering `model` to LLVM IR parts, per node."""
    profile = cProfile.Profile()
    profile.enable()
    module = import_onnx(model)
    lower_to_llvm(module, CompileReport())
    with fewer_collections():
        llvm_module = to_llvmlite(module)
        split_module(llvm_module, part_count(llvm_module))
    profile.disable()
    calls = sum(entry[1] for entry in pstats.Stats(profile).stats.values())  # type: ignore[attr-defined]
    return calls / len(model.graph.node)


@pytest.mark.slow
@pytest.mark.parametrize("family", [chain, wide, fan, conv, mlp], ids=lambda f: f.__name__)
def test_compile_work_per_node_is_flat(family: Callable[[int], onnx.ModelProto],
                                       monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    # As a user's compile runs: the loop stage unverified (the suite verifies
    # it, and xDSL's func.call verifier looks its callee up among all of the
    # module's functions, so verifying thousands of calls of thousands of
    # kernels is quadratic where compiling them is not).
    monkeypatch.delenv(VERIFY_ENV, raising=False)
    small, large = (calls_per_node(family(size)) for size in SIZES)
    assert large <= GROWTH * small, (
        f"{family.__name__}: {large:.0f} calls per node at {SIZES[1]} nodes, "
        f"{small:.0f} at {SIZES[0]}"
    )
