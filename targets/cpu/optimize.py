"""LLVM IR text to a verified module, LLVM's O2 pipeline over it, and its object.

The micro-kernels reach LLVM as vector code; LLVM's loop and SLP
vectorizers do the SIMD work of the other loops (copies, pools,
elementwise ops). They only pick wide vectors when the pass builder knows
the host target machine, which is why `optimize` takes one.
"""

from __future__ import annotations

import time

import llvmlite.binding as llvm
from llvmlite import ir

from ember.targets.cpu.errors import CodegenError
from ember.targets.cpu.machine import LLVM_OPT_LEVEL, host_target_machine, initialize


def parse_ir(
    source: str | ir.Module, target_machine: llvm.TargetMachine | None = None
) -> llvm.ModuleRef:
    """Parse and verify IR, retargeted to `target_machine` (default: the host).

    The triple and data layout are overwritten so that IR produced without
    them (llvmlite's `ir.Module` defaults to "unknown") optimises with the
    host's cost model and links into host objects.
    """
    initialize()
    tm = target_machine or host_target_machine()
    try:
        module = llvm.parse_assembly(str(source))
    except RuntimeError as exc:
        raise CodegenError(f"invalid LLVM IR: {_one_line(exc)}") from exc
    module.triple = tm.triple
    module.data_layout = str(tm.target_data)
    try:
        module.verify()
    except RuntimeError as exc:
        raise CodegenError(f"LLVM IR does not verify: {_one_line(exc)}") from exc
    return module


def optimize(
    module: llvm.ModuleRef, target_machine: llvm.TargetMachine, level: int = LLVM_OPT_LEVEL
) -> float:
    """Run the new pass manager's default `O<level>` pipeline in place.

    Returns the seconds it took. Loop and SLP vectorization are switched on
    explicitly: llvmlite's tuning options do not tie them to the speed level.
    """
    start = time.perf_counter()
    options = llvm.create_pipeline_tuning_options(speed_level=level)
    options.loop_vectorization = level >= 2
    options.slp_vectorization = level >= 2
    options.loop_unrolling = level >= 2
    builder = llvm.create_pass_builder(target_machine, options)
    builder.getModulePassManager().run(module, builder)
    return time.perf_counter() - start


def emit_object(module: llvm.ModuleRef, target_machine: llvm.TargetMachine) -> bytes:
    """The module's machine code as an object file (ELF on Linux)."""
    try:
        return target_machine.emit_object(module)
    except RuntimeError as exc:
        raise CodegenError(f"LLVM code generation failed: {exc}") from exc


def _one_line(exc: Exception) -> str:
    """LLVM's messages start with a generic header line; keep the informative part."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip(" ^\t")]
    if len(lines) > 1 and lines[0].startswith("LLVM IR parsing error"):
        lines = lines[1:]
    return " | ".join(lines)
