"""A loop-level model lowered to LLVM one part at a time, each part compiled
while the next is lowered.

Lowering a model's loop nests to the `llvm` dialect and then to llvmlite's
IR is Python work on one core; LLVM's optimisation and code generation of
the result is the larger share, spread over the codegen workers
(`parallel_codegen.py`). Done one after the other, the workers wait for the
whole lowering. Here the module's functions are cut into parts first (the
same units `module_parts.py` cuts an LLVM module into: the functions C can
call, and each kernel with the parallel bodies it launches), each part is
lowered on its own (`lower_functions` on a module of its functions, the
kernels of other parts declared) and handed to a worker as soon as its text
is made (`PartCompiler`), so LLVM compiles the first parts while this
thread lowers the next; then this thread compiles what is left with them.
Part 0 holds the functions C can call (the entry function); every kernel is
external and hidden, as `split_module` makes them when a module has several
parts, so the objects link into one program exactly as the parts of a split
module do.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Sequence

from llvmlite import ir
from xdsl.context import Context
from xdsl.dialects import llvm
from xdsl.dialects.builtin import FunctionType, ModuleOp
from xdsl.dialects.func import CallOp, FuncOp

from ember.dialects.loop import KERNEL_ATTR, PARALLEL_THREADS_ATTR
from ember.lowering.loop_to_llvm import ConvertLoopToLLVMPass, check_lowerable, lower_functions
from ember.lowering.loop_to_llvm.abi import EXTERNAL, parameter_types
from ember.report import CompileReport
from ember.targets.cpu.llvm_module import to_llvmlite
from ember.targets.cpu.module_parts import part_count, split_module, standalone_part
from ember.targets.cpu.parallel_codegen import (
    PartCompiler,
    PartObject,
    compile_parts,
    worker_count,
)
from ember.targets.stages import apply_passes, diagnostics_as_errors

PART_OPS = 1500
"""The loop-level ops (counted with their regions') a part collects before
it is lowered and handed on: about `module_parts.MIN_PART_INSTRUCTIONS`
LLVM instructions, a fifth of a second of LLVM's work, so the first part
reaches a worker early and the last ones are small."""


def compile_streamed(
    module: ModuleOp,
    report: CompileReport,
    opt_level: int,
    hidden: Collection[str] = (),
    add_functions: Callable[[ir.Module], None] | None = None,
    here: Callable[[str], PartObject] | None = None,
    extra_parts: Sequence[str] = (),
    last_stage: str = "llvm-object",
) -> list[PartObject]:
    """The objects of `module` (loop level, consumed: its functions move
    into the parts), part 0 first, then those of `extra_parts` (IR text of
    the same program); `hidden` names functions not to export,
    `add_functions` may add functions to part 0's llvmlite module, `here`
    compiles the parts this thread takes (default: `compile_part`). The
    stage `llvm` times the lowering (while the workers compile), the stage
    `last_stage` the compiling left after it."""
    if report.observer is not None:  # it sees the whole module's llvm stage
        return _compile_whole(module, report, opt_level, hidden, add_functions, here,
                              extra_parts, last_stage)  # fmt: skip
    with diagnostics_as_errors():
        check_lowerable(module)
    signatures = {f.sym_name.data: f.function_type for f in module.ops if isinstance(f, FuncOp)}
    parts = list(_parts(module))
    with PartCompiler(opt_level, here, workers=len(parts) + len(extra_parts) - 1) as compiler:
        with report.stage("llvm"):
            for index, functions in enumerate(parts):
                part = ModuleOp([])
                for function in functions:
                    function.detach()
                    part.body.block.add_op(function)
                with report.timed_pass("convert-loop-to-llvm"), diagnostics_as_errors():
                    lower_functions(part)
                    _declare_callees(part, signatures)
                with report.timed_pass("llvm-ir-text"):
                    llvm_module = to_llvmlite(part)
                    if index == 0 and add_functions is not None:
                        add_functions(llvm_module)
                    if len(parts) == 1:  # the whole program: its kernels stay internal
                        compiler.submit(split_module(llvm_module, 1, hidden)[0])
                    else:
                        compiler.submit(standalone_part(llvm_module, hidden))
            for text in extra_parts:
                compiler.submit(text)
        with report.stage(last_stage):
            return compiler.finish()


def _compile_whole(module: ModuleOp, report: CompileReport, opt_level: int,
                   hidden: Collection[str], add_functions: Callable[[ir.Module], None] | None,
                   here: Callable[[str], PartObject] | None, extra_parts: Sequence[str],
                   last_stage: str) -> list[PartObject]:  # fmt: skip
    """`compile_streamed` as one module lowered first, then split and
    compiled (the `llvm` stage's passes observed as every other stage's)."""
    with report.stage("llvm"):
        apply_passes(module, [ConvertLoopToLLVMPass()], report, Context())
    with report.stage(last_stage):
        with report.timed_pass("llvm-ir-text"):
            llvm_module = to_llvmlite(module)
            if add_functions is not None:
                add_functions(llvm_module)
            texts = split_module(llvm_module, part_count(llvm_module), hidden)
        return compile_parts([*texts, *extra_parts], opt_level, here)


def _parts(module: ModuleOp) -> Iterator[list[FuncOp]]:
    """The module's functions in parts: first the functions that are not
    kernels, then the kernels, each with the kernels it launches in
    parallel (whose tasks its calls name), about `PART_OPS` ops a part, or
    everything in one part where no worker would take any, or the module
    has fewer than `PART_OPS` ops (a worker then costs more than it saves)."""
    functions = [f for f in module.ops if isinstance(f, FuncOp) and not f.is_declaration]
    by_name = {f.sym_name.data: f for f in functions}
    sizes: dict[str, int] = {}
    launched: dict[str, list[FuncOp]] = {}
    bodies: set[str] = set()
    for function in functions:  # one walk each: its size and the bodies it launches
        size = 0
        for op in function.walk():
            size += 1
            if isinstance(op, CallOp) and PARALLEL_THREADS_ATTR in op.attributes:
                body = op.callee.string_value()
                if body in by_name and body not in bodies:
                    launched.setdefault(function.sym_name.data, []).append(by_name[body])
                    bodies.add(body)
        sizes[function.sym_name.data] = size
    if worker_count() == 0 or sum(sizes.values()) < PART_OPS:
        yield functions
        return
    yield [f for f in functions if KERNEL_ATTR not in f.attributes]
    part: list[FuncOp] = []
    size = 0
    for kernel in functions:
        if KERNEL_ATTR not in kernel.attributes or kernel.sym_name.data in bodies:
            continue
        for function in [kernel, *launched.get(kernel.sym_name.data, [])]:
            part.append(function)
            size += sizes[function.sym_name.data]
        if size >= PART_OPS:
            yield part
            part, size = [], 0
    if part:
        yield part


def _declare_callees(part: ModuleOp, signatures: dict[str, FunctionType]) -> None:
    """Declares in `part` (lowered) each function of the model it calls
    but does not define, with the ABI's parameters."""
    defined = {op.sym_name.data for op in part.ops if isinstance(op, llvm.FuncOp)}
    called = {op.callee.string_value() for op in part.walk() if isinstance(op, llvm.CallOp)}
    for name in sorted((called - defined) & signatures.keys()):
        params = [p for t in signatures[name].inputs.data for p in parameter_types(t)]
        part.body.block.add_op(llvm.FuncOp(name, llvm.LLVMFunctionType(params), EXTERNAL))


def launches_parallel_loops(module: ModuleOp) -> bool:
    """Whether a function of `module` (loop level) launches a parallel loop
    on the thread pool (`loop-parallelize`)."""
    return any(isinstance(op, CallOp) and PARALLEL_THREADS_ATTR in op.attributes
               for function in module.ops if isinstance(function, FuncOp)
               for op in function.walk())  # fmt: skip


__all__ = ["PART_OPS", "compile_streamed", "launches_parallel_loops"]
