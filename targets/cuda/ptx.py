"""Lowered kernels to PTX text, through llvmlite's NVPTX back end.

`ptx_of(module, arch)` takes the output of `convert-gpu-to-nvvm`: a
`gpu.module` holding `llvm.func`s and `llvm.mlir.global`s, or a builtin
module holding exactly one such `gpu.module`. It translates the
`gpu.module`'s contents to an llvmlite module (`targets/llvm_translation`,
whose GEPs keep their address space), adds what the `llvm` dialect cannot
say (`to_llvmlite`): each `nvvm.kernel` function gets the `ptx_kernel`
calling convention (a PTX `.entry`) and each global its alignment (an
internal global without a value, shared memory, is `undef`, as NVPTX
requires: llvmlite writes it so); then parses and verifies it for `nvptx64-nvidia-cuda`
with the target machine's data layout, runs LLVM's O2 pipeline, and
prints PTX for `arch` (a compute capability: `sm_80`, `sm_90`, ...).
"""

from __future__ import annotations

import functools
import re

import llvmlite.binding as llvm
from llvmlite import ir as llvmir
from xdsl.dialects import gpu
from xdsl.dialects import llvm as llvm_dialect
from xdsl.dialects.builtin import ModuleOp

from ember.lowering.gpu_to_nvvm import KERNEL_ATTR, PASS, gpu_modules
from ember.targets.cuda.errors import PtxCodegenError
from ember.targets.llvm_translation import convert_module

TRIPLE = "nvptx64-nvidia-cuda"
DEFAULT_ARCH = "sm_90"
OPT_LEVEL = 2
_ARCH = re.compile(r"sm_[1-9][0-9]+[af]?")


@functools.cache
def _initialize() -> None:
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()


@functools.cache
def target_machine(arch: str = DEFAULT_ARCH) -> llvm.TargetMachine:
    """NVPTX's target machine for compute capability `arch` (one per arch)."""
    if not _ARCH.fullmatch(arch):
        raise PtxCodegenError(f"not a compute capability: {arch!r} (expected e.g. sm_80, sm_90)")
    _initialize()
    return llvm.Target.from_triple(TRIPLE).create_target_machine(cpu=arch, opt=OPT_LEVEL)


def lowered_gpu_module(module: ModuleOp | gpu.ModuleOp) -> gpu.ModuleOp:
    """The one `gpu.module` of `module` (or `module` itself), checked to be
    lowered: only `llvm.func`s and `llvm.mlir.global`s."""
    if isinstance(module, ModuleOp):
        found = gpu_modules(module)
        if len(found) != 1:
            raise PtxCodegenError(f"ptx_of: expected one gpu.module, found {len(found)}")
        module = found[0]
    leftover = sorted({op.name for op in module.body.block.ops
                       if not isinstance(op, llvm_dialect.FuncOp | llvm_dialect.GlobalOp)})  # fmt: skip
    if leftover:
        raise PtxCodegenError(f"ptx_of: run {PASS} first (found {', '.join(leftover)})")
    return module


def to_llvmlite(module: ModuleOp | gpu.ModuleOp) -> llvmir.Module:
    """The llvmlite module (NVPTX triple) of a lowered `gpu.module` (see the
    module docstring for what it adds to xDSL's translation)."""
    container = lowered_gpu_module(module)
    ops = list(container.body.block.ops)
    kernels = {op.sym_name.data for op in ops
               if isinstance(op, llvm_dialect.FuncOp) and KERNEL_ATTR in op.attributes}  # fmt: skip
    globals_ = [op for op in ops if isinstance(op, llvm_dialect.GlobalOp)]
    translated = convert_module(ModuleOp([op.clone() for op in ops]), triple=TRIPLE)
    for function in translated.functions:
        if function.name in kernels:
            function.calling_convention = "ptx_kernel"
    for op in globals_:
        variable = translated.get_global(op.sym_name.data)
        if op.alignment is not None:
            variable.align = op.alignment.value.data
    return translated


def _one_line(error: Exception) -> str:
    return " | ".join(line.strip() for line in str(error).splitlines() if line.strip())


def ptx_of(module: ModuleOp | gpu.ModuleOp, arch: str = DEFAULT_ARCH) -> str:
    """The PTX of a lowered `gpu.module` for compute capability `arch`,
    after LLVM's O2 pipeline; each kernel is an `.entry`."""
    machine = target_machine(arch)
    source = str(to_llvmlite(module))
    try:
        parsed = llvm.parse_assembly(source)
        parsed.triple = TRIPLE
        parsed.data_layout = str(machine.target_data)
        parsed.verify()
    except RuntimeError as error:
        raise PtxCodegenError(f"ptx_of: LLVM IR does not verify: {_one_line(error)}") from error
    options = llvm.create_pipeline_tuning_options(speed_level=OPT_LEVEL)
    builder = llvm.create_pass_builder(machine, options)
    builder.getModulePassManager().run(parsed, builder)
    return machine.emit_assembly(parsed)


__all__ = [
    "DEFAULT_ARCH",
    "TRIPLE",
    "lowered_gpu_module",
    "ptx_of",
    "target_machine",
    "to_llvmlite",
]
