"""The CPU calling convention of lowered functions: signatures and calls.

The contract is the "ABI" section of the package docstring (what
`ember-opt --help-pass convert-loop-to-llvm` prints); this module implements
it. Each memref argument becomes a pointer, and the weights and arena
pointers follow; a function marked `ember.packed_buffers` takes one array of
pointers instead, each loaded where it is used. A `func.call` passes the
callee its buffers, then the caller's own weights and arena.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import func, llvm
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.utils.exceptions import DiagnosticException

from ember.lowering.loop_to_llvm.builder import FunctionBuilder, HandlerTable, registrar
from ember.lowering.loop_to_llvm.llvm_types import PTR
from ember.passes.loop.outline_kernels import KERNEL_ATTR

PACKED_BUFFERS_ATTR = "ember.packed_buffers"
"""Marks a function whose memref arguments arrive as one array of pointers."""
EXTERNAL = llvm.LinkageAttr("external")

HANDLERS: HandlerTable = {}
_lowers = registrar(HANDLERS)


@_lowers(func.CallOp)
def _call(lw: FunctionBuilder, op: Operation) -> None:
    """A call to another loop-level function: its buffers, then weights and arena."""
    assert isinstance(op, func.CallOp)
    lw.emit(llvm.CallOp(op.callee.string_value(), *lw.args(op), lw.weights, lw.arena))


def _buffer_pointer(
    lw: FunctionBuilder, buffers: SSAValue, index: int, name: str | None
) -> Callable[[], SSAValue]:
    """Loads `buffers[index]` at the current block (a packed argument's use)."""

    def load() -> SSAValue:
        slot = lw.emit(llvm.GEPOp.from_mixed_indices(buffers, [index], PTR, inbounds=True))
        pointer = lw.emit(llvm.LoadOp(slot, PTR))
        pointer.name_hint = name
        return pointer

    return load


def lower_function(fn: func.FuncOp, handlers: HandlerTable,
                   externals: dict[str, llvm.LLVMFunctionType], pass_name: str) -> llvm.FuncOp:  # fmt: skip
    """The `llvm.func` of `fn`, its body lowered by `handlers`, with the ABI's signature."""
    inputs = fn.function_type.inputs.data
    if fn.function_type.outputs.data or not all(isinstance(t, MemRefType) for t in inputs):
        raise DiagnosticException(
            f"{pass_name}: @{fn.sym_name.data} must take only memrefs and return nothing"
        )
    packed = PACKED_BUFFERS_ATTR in fn.attributes
    entry = Block(arg_types=[PTR] * ((1 if packed else len(inputs)) + 2))
    *params, weights, arena = entry.args
    weights.name_hint, arena.name_hint = "weights", "arena"
    lw = FunctionBuilder(entry, handlers, weights=weights, arena=arena, externals=externals,
                         pass_name=pass_name)  # fmt: skip
    if packed:
        params[0].name_hint = "buffers"
        for i, old in enumerate(fn.args):
            lw.values.deferred[old] = _buffer_pointer(lw, params[0], i, old.name_hint)
    else:
        for old, new in zip(fn.args, params):
            lw.values[old] = new
            new.name_hint = old.name_hint
    lw.lower_block(fn.body.block)
    signature = llvm.LLVMFunctionType([PTR] * len(entry.args))
    result = llvm.FuncOp(fn.sym_name.data, signature, EXTERNAL, body=lw.finish())
    for marker in (KERNEL_ATTR, PACKED_BUFFERS_ATTR):  # the signature's reason stays visible
        if marker in fn.attributes:
            result.attributes[marker] = fn.attributes[marker]
    return result


def check_packed_not_called(module: ModuleOp, pass_name: str) -> None:
    """A call passes buffers one by one, which a packed function does not take."""
    packed = {op.sym_name.data for op in module.ops
              if isinstance(op, func.FuncOp) and PACKED_BUFFERS_ATTR in op.attributes}  # fmt: skip
    for op in module.walk():
        if isinstance(op, func.CallOp) and op.callee.string_value() in packed:
            raise DiagnosticException(
                f"{pass_name}: @{op.callee.string_value()} takes its buffers packed "
                f"({PACKED_BUFFERS_ATTR}), so loop-level code cannot call it"
            )
