"""A kernel function's own buffers become arguments its callers allocate.

A fused group outlined before its loops were generated (the CPU pipeline's
first `loop-outline-kernels`) keeps the `memref.alloc`s of its region: the
padded input of a convolution, a packed operand, what passes values
between its nests. One function serves every call, so the buffers cannot
be placed in it; `loop-plan-memory` places buffers in the caller's arena.
`hoist_kernel_buffers` therefore makes each top-level `memref.alloc` of a
kernel function (`ember.kernel`) an argument, after the others, and gives
every call an alloc of that type in front of it, passed in that place.
What the function does with the buffer is unchanged; only who allocates it
moves. The caller's planner then sees the buffer live only during the
call, and `kernel_argument_spans` says during which of the kernel's
top-level ops, so buffers of one kernel that are live in different nests
still share memory, as they did while the kernel was a region.

Allocs of a size known only at run time never reach a kernel function
outlined early (the outliner leaves their groups in place), and allocs
inside loops are left where they are.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from xdsl.dialects import memref
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, FunctionType, ModuleOp
from xdsl.dialects.func import CallOp, FuncOp
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from ember.dialects.loop import KERNEL_ATTR


def kernel_functions(module: ModuleOp) -> dict[str, FuncOp]:
    """The module's kernel functions with a body, by name."""
    return {
        op.sym_name.data: op
        for op in module.ops
        if isinstance(op, FuncOp) and KERNEL_ATTR in op.attributes and not op.is_declaration
    }


def calls_by_callee(module: ModuleOp) -> dict[str, list[CallOp]]:
    """Every `func.call` of the module, by the name it calls."""
    calls: dict[str, list[CallOp]] = {}
    for op in module.walk():
        if isinstance(op, CallOp):
            calls.setdefault(op.callee.root_reference.data, []).append(op)
    return calls


def append_argument(func: FuncOp, argument_type: Attribute, name: str | None) -> BlockArgument:
    """A new last argument of `func` (its type and argument attributes kept
    in step)."""
    block = func.body.block
    argument = block.insert_arg(argument_type, len(block.args))
    argument.name_hint = name
    if func.arg_attrs is not None:
        func.arg_attrs = ArrayAttr([*func.arg_attrs.data, DictionaryAttr({})])
    func.function_type = FunctionType.from_lists([a.type for a in block.args],
                                                 func.function_type.outputs.data)  # fmt: skip
    return argument


def passed_values(argument: SSAValue,
                  calls: Mapping[str, Sequence[CallOp]]) -> list[SSAValue] | None:  # fmt: skip
    """What each call (`calls`, by callee) passes for `argument` of a kernel
    function, or None where `argument` is no kernel function's argument."""
    if not isinstance(argument, BlockArgument):
        return None
    func = argument.block.parent_op()
    if not isinstance(func, FuncOp) or KERNEL_ATTR not in func.attributes:
        return None
    return [call.arguments[argument.index] for call in calls.get(func.sym_name.data, ())]


def _append_arguments(func: FuncOp, allocs: list[memref.AllocOp]) -> None:
    for alloc in allocs:
        arg = append_argument(func, alloc.memref.type, alloc.memref.name_hint)
        alloc.memref.replace_all_uses_with(arg)
        Rewriter.erase_op(alloc)


def _pass_new_buffers(call: CallOp, allocs: list[memref.AllocOp]) -> None:
    buffers: list[SSAValue] = []
    for alloc in allocs:
        fresh = memref.AllocOp([], [], alloc.memref.type)  # type: ignore[arg-type]
        fresh.memref.name_hint = alloc.memref.name_hint
        Rewriter.insert_op(fresh, InsertPoint.before(call))
        buffers.append(fresh.memref)
    replacement = CallOp(call.callee, [*call.arguments, *buffers], [])
    replacement.location = call.location
    Rewriter.replace_op(call, replacement)


def hoist_kernel_buffers(module: ModuleOp) -> None:
    """Makes the top-level static allocs of every kernel function arguments
    that each of its calls allocates (see the module docstring)."""
    calls = calls_by_callee(module)
    for name, func in kernel_functions(module).items():
        allocs = [op for op in func.body.block.ops
                  if isinstance(op, memref.AllocOp) and not op.dynamic_sizes]  # fmt: skip
        if not allocs:
            continue
        for call in calls.get(name, []):
            _pass_new_buffers(call, allocs)
        _append_arguments(func, allocs)


def drop_unused_arguments(module: ModuleOp,
                          erase_dead: Callable[[list[SSAValue]], None]) -> None:  # fmt: skip
    """Drops the arguments no kernel function of `module` uses any more (a
    pooling window's buffer once its loops are generated) and what its calls
    passed there; `erase_dead` then erases those operands' producers that
    nothing else uses."""
    calls = calls_by_callee(module)
    for name, func in kernel_functions(module).items():
        block = func.body.block
        unused = [index for index, arg in enumerate(block.args) if not arg.uses]
        if not unused:
            continue
        for call in calls.get(name, []):
            dropped = [call.arguments[i] for i in unused]
            kept = [v for i, v in enumerate(call.arguments) if i not in unused]
            replacement = CallOp(call.callee, kept, [])
            replacement.location = call.location
            Rewriter.replace_op(call, replacement)
            erase_dead(dropped)
        for index in reversed(unused):
            block.erase_arg(block.args[index])
        if func.arg_attrs is not None:
            func.arg_attrs = ArrayAttr([a for i, a in enumerate(func.arg_attrs.data)
                                        if i not in unused])  # fmt: skip
        func.function_type = FunctionType.from_lists([a.type for a in block.args],
                                                     func.function_type.outputs.data)  # fmt: skip


def top_level_ops(func: FuncOp) -> list[Operation]:
    """`func`'s top-level ops but its terminator: the kernel's time line."""
    return list(func.body.block.ops)[:-1]


def kernel_argument_spans(
    func: FuncOp, uses_span: Callable[[SSAValue, dict[Operation, int]], tuple[int, int]]
) -> tuple[int, list[tuple[int, int]]]:
    """The length of kernel function `func`'s time line (its top-level ops,
    at least 1) and, for each argument, the (first, last) op of it that uses
    the argument, as `uses_span` finds them ((0, 0) for one never used)."""
    ops = top_level_ops(func)
    positions = {op: index for index, op in enumerate(ops)}
    spans = [uses_span(arg, positions) for arg in func.body.block.args]
    return max(len(ops), 1), [(a, b) if b >= 0 else (0, 0) for a, b in spans]


__all__ = ["append_argument", "calls_by_callee", "drop_unused_arguments", "hoist_kernel_buffers", "kernel_argument_spans", "kernel_functions",
           "passed_values", "top_level_ops"]  # fmt: skip
