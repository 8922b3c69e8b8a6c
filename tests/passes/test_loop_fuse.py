"""loop-fuse's incremental merging (loop summaries, bodies fused as they
grow) gives exactly the IR of its definition: merge adjacent legal siblings,
then fuse the merged body again from its start, checked on random graphs
lowered to loops. Store forwarding too: each nest's accesses come up from
its blocks once, where the definition walks a nest again for each loop
around it."""

from __future__ import annotations

import onnx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from onnx import helper
from xdsl.context import Context
from xdsl.dialects import memref, vector
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.rewriter import Rewriter

import ember
from ember.dialects.loop import KERNEL_ATTR, KernelOp
from ember.dialects.loop_nests import Loop, induction_variable, is_loop, static_bounds
from ember.passes.loop.contract_buffers import contract_buffers
from ember.passes.loop.fuse import (
    FuseLoopsPass,
    _merge,
    _movable,
    accesses,
    buffer_root,
    remove_write_only_buffers,
)
from ember.targets.cpu.pipeline import cpu_passes
from tests.compiler.test_random_graphs import _model, random_graphs


def reference_can_merge(first: Loop, second: Loop) -> bool:
    """The legality rule, recomputed from both loops' accesses."""
    if static_bounds(first) is None or static_bounds(first) != static_bounds(second):
        return False
    for loop in (first, second):
        if any(op.name.startswith(("memref.", "func.")) and op.name not in
               ("memref.load", "memref.store") for op in loop.walk()):  # fmt: skip
            return False
    both = [(a, induction_variable(first)) for a in accesses(first)]
    both += [(a, induction_variable(second)) for a in accesses(second)]
    written = [{a.root for a, iv in both if a.is_store and iv is induction_variable(loop)}
               for loop in (first, second)]  # fmt: skip
    touched = [{a.root for a, iv in both if iv is induction_variable(loop)}
               for loop in (first, second)]  # fmt: skip
    for root in (written[0] & touched[1]) | (written[1] & touched[0]):
        positions = set()
        for access, iv in both:
            if access.root is not root:
                continue
            position = tuple(i for i, index in enumerate(access.indices) if index is iv)
            if access.buffer is not root or not position:
                return False
            positions.add(position)
        if len(positions) != 1:
            return False
    return True


def reference_forward_stores(block: Block) -> None:
    """Store forwarding as defined: after forwarding inside a nested op, every
    buffer its remaining loads and stores touch is forgotten (stores: also
    their stored values), found by walking the op."""
    stored: dict[SSAValue, dict[tuple[SSAValue, tuple[SSAValue, ...]], SSAValue]] = {}
    unread: dict[SSAValue, dict[tuple[SSAValue, tuple[SSAValue, ...]], memref.StoreOp]] = {}
    for op in list(block.ops):
        if isinstance(op, memref.StoreOp):
            key = (op.memref, tuple(op.indices))
            root = buffer_root(op.memref)
            stored[root] = {key: op.value}
            overwritten = unread.setdefault(root, {}).get(key)
            if overwritten is not None:
                Rewriter.erase_op(overwritten)
            unread[root][key] = op
        elif isinstance(op, memref.LoadOp):
            root = buffer_root(op.memref)
            value = stored.get(root, {}).get((op.memref, tuple(op.indices)))
            if value is not None:
                op.res.replace_all_uses_with(value)
                Rewriter.erase_op(op)
            else:
                unread.pop(root, None)
        elif isinstance(op, vector.LoadOp | vector.StoreOp):
            root = buffer_root(op.base)
            unread.pop(root, None)
            if isinstance(op, vector.StoreOp):
                stored.pop(root, None)
        elif op.regions:
            for region in op.regions:
                for inner in region.blocks:
                    reference_forward_stores(inner)
            for access in accesses(op):
                unread.pop(access.root, None)
                if access.is_store:
                    stored.pop(access.root, None)


def reference_fuse_siblings(block: Block) -> None:
    previous: Loop | None = None
    between: list[Operation] = []
    for op in list(block.ops):
        if not is_loop(op):
            between.append(op)
            continue
        if (previous is not None and all(_movable(b) for b in between)
                and reference_can_merge(previous, op)):  # fmt: skip
            for moved in between:
                moved.detach()
                block.insert_op_before(moved, previous)
            previous, _ = _merge(previous, op)  # type: ignore[arg-type]
            reference_fuse_siblings(previous.body.block)
        else:
            previous = op  # type: ignore[assignment]
        between = []


def _lowered(model: onnx.ModelProto) -> ModuleOp:
    """The model at the loop level, just before loop-fuse."""
    module = ember.import_onnx(model)
    for _, compiler_pass in cpu_passes():
        if isinstance(compiler_pass, FuseLoopsPass):
            return module
        compiler_pass.apply(Context(), module)
    raise AssertionError("the -O2 pipeline runs loop-fuse")


def _chains(draw: st.DrawFn) -> onnx.ModelProto:
    """An elementwise chain with branches that rejoin (one group of many nests)."""
    values, nodes = ["x"], []
    for index in range(draw(st.integers(2, 25))):
        out = f"v{index}"
        if draw(st.booleans()):
            nodes.append(helper.make_node("Sin", [values[-1]], [out]))
        else:
            other = draw(st.sampled_from(values))
            nodes.append(helper.make_node("Add", [values[-1], other], [out]))
        values.append(out)
    return _model([("x", (2, 3)), ("y", (2, 3)), *((v, (2, 3)) for v in values[1:])], nodes)


@st.composite
def models(draw: st.DrawFn) -> onnx.ModelProto:
    if draw(st.booleans()):
        return _chains(draw)
    values, nodes = draw(random_graphs())
    return _model(values, nodes)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None
)
@given(models())
def test_fused_loops_match_the_definition(model: onnx.ModelProto) -> None:
    module = _lowered(model)
    expected = module.clone()
    FuseLoopsPass().apply(Context(), module)
    for func in expected.walk():
        if isinstance(func, FuncOp) and not func.is_declaration:
            if KERNEL_ATTR in func.attributes:  # a group outlined before loop-generate
                kernels = [func.body.block]
            else:
                kernels = [op.body.block for op in func.body.block.ops if isinstance(op, KernelOp)]
            for kernel in kernels:
                reference_fuse_siblings(kernel)
            reference_forward_stores(func.body.block)
            for block in kernels if kernels == [func.body.block] else [func.body.block, *kernels]:
                remove_write_only_buffers(block)
            for kernel in kernels:  # its own rule, checked in test_contract_buffers
                contract_buffers(kernel)
    assert str(module) == str(expected)
