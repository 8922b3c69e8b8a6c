"""loop-outline-kernels finds what each kernel captures from around it (the
values it uses but does not define) with one walk and a set of the values
defined so far; on real kernels (SqueezeNet's, with nested loops, loop
carried values and micro-kernels) that is exactly the definition: every
operand whose defining op or block lies outside the kernel, with its uses in
walk order."""

from __future__ import annotations

import onnx
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.ir import Block, Operation, SSAValue

import ember
from ember.dialects.loop import KernelOp
from ember.passes.loop.form_kernels import form_kernels
from ember.passes.loop.outline_kernels import OutlineKernelsPass, _captured
from ember.targets.cpu.pipeline import cpu_passes
from tests.support.models import light_model_path, with_random_weights


def reference_captured(kernel: KernelOp) -> dict[SSAValue, list[tuple[Operation, int]]]:
    captured: dict[SSAValue, list[tuple[Operation, int]]] = {}
    for op in kernel.body.walk():
        for index, value in enumerate(op.operands):
            owner = value.owner
            inside = owner.parent_op() if isinstance(owner, Block) else owner
            if not kernel.is_ancestor(inside):  # type: ignore[arg-type]
                captured.setdefault(value, []).append((op, index))
    return captured


def _before_outlining(model: onnx.ModelProto) -> ModuleOp:
    module = ember.import_onnx(model)
    for _, compiler_pass in cpu_passes():
        if isinstance(compiler_pass, OutlineKernelsPass):
            return module
        compiler_pass.apply(Context(), module)
    raise AssertionError("the pipeline outlines kernels")


def test_captured_values_match_the_definition() -> None:
    model = with_random_weights(onnx.load(light_model_path("squeezenet")))
    module = _before_outlining(model)
    kernels = 0
    for func in [op for op in module.ops if isinstance(op, FuncOp) and not op.is_declaration]:
        form_kernels(func)
        for kernel in [op for op in func.body.block.ops if isinstance(op, KernelOp)]:
            captured = _captured(kernel)
            assert captured == reference_captured(kernel)
            assert list(captured) == list(reference_captured(kernel))  # first-use order
            kernels += 1
    assert kernels > 20
