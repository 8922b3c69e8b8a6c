"""The CPU calling convention of lowered functions: signatures and calls.

The contract is the "ABI" section of the package docstring (what
`ember-opt --help-pass convert-loop-to-llvm` prints); this module implements
it. Each memref argument becomes a pointer followed by one i64 per dynamic
part of its type, and each scalar argument its LLVM type; a function marked
`ember.packed_buffers` takes its inputs and outputs as one array of pointers
instead, each loaded where it is used, then the weights and arena pointers.
A `func.call` passes what the callee's signature asks for.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects import func, llvm
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    DictionaryAttr,
    MemRefType,
    ModuleOp,
    NoneAttr,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.utils.exceptions import DiagnosticException

from ember.dialects.loop import ABI_BUFFERS, PACKED_BUFFERS_ATTR, marked_argument
from ember.lowering.loop_to_llvm.builder import (
    FunctionBuilder,
    HandlerTable,
    StridedLayout,
    registrar,
)
from ember.lowering.loop_to_llvm.llvm_types import PTR, lowerable, scalar_type
from ember.lowering.loop_to_llvm.memory import layout_of, row_major_strides, static_layout
from ember.passes.loop.outline_kernels import KERNEL_ATTR

EXTERNAL = llvm.LinkageAttr("external")

HANDLERS: HandlerTable = {}
_lowers = registrar(HANDLERS)


def dynamic_parts(memref_type: MemRefType) -> list[tuple[str, int]]:
    """The parts of a memref type the ABI passes as i64 arguments after its
    pointer, in order: ("offset", 0) if dynamic, ("size", d) per dynamic dim,
    ("stride", d) per dynamic stride of an explicit strided layout (an
    identity layout's strides follow from the sizes)."""
    layout = static_layout(memref_type)
    explicit = not isinstance(memref_type.layout, NoneAttr)
    return [
        *([("offset", 0)] if layout.offset == DYNAMIC_INDEX else []),
        *(("size", d) for d, s in enumerate(layout.sizes) if s == DYNAMIC_INDEX),
        *(("stride", d) for d, s in enumerate(layout.strides) if explicit and s == DYNAMIC_INDEX),
    ]


def parameter_types(t: Attribute, pointer: Attribute = PTR) -> list[Attribute]:
    """The LLVM parameters one loop-level argument of type `t` becomes (a
    memref's data pointer of type `pointer`: another target's kernels take
    theirs in another address space)."""
    if isinstance(t, MemRefType):
        return [pointer, *(i64 for _ in dynamic_parts(t))]
    return [scalar_type(t)]


def call_arguments(lw: FunctionBuilder, values: Sequence[SSAValue]) -> list[SSAValue]:
    """The LLVM arguments that pass loop-level `values` (a memref's pointer,
    then its dynamic parts) to a function in the unpacked form."""
    arguments: list[SSAValue] = []
    for value in values:
        arguments.append(lw.values[value])
        if isinstance(value.type, MemRefType):
            layout = layout_of(lw, value)
            for part, dim in dynamic_parts(value.type):
                quantity = {"offset": layout.offset, "size": layout.sizes[dim],
                            "stride": layout.strides[dim]}[part]  # fmt: skip
                arguments.append(lw.index(quantity))  # type: ignore[arg-type]
    return arguments


@_lowers(func.CallOp)
def lower_call(lw: FunctionBuilder, op: Operation) -> None:
    """A call to another loop-level function, in its unpacked form."""
    assert isinstance(op, func.CallOp)
    lw.emit(llvm.CallOp(op.callee.string_value(), *call_arguments(lw, op.arguments)))


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


def bind_unpacked_parameters(
    lw: FunctionBuilder, args: Sequence[SSAValue], pointer: Attribute = PTR
) -> list[Attribute]:
    """Binds each of a function's `args` to its parameters in the unpacked
    form (added to `lw.entry`; memref pointers of type `pointer`) and
    returns the parameter types."""
    for old in args:
        types = parameter_types(old.type, pointer)
        params = [lw.entry.insert_arg(t, len(lw.entry.args)) for t in types]
        lw.values[old] = params[0]
        params[0].name_hint = old.name_hint
        if isinstance(old.type, MemRefType) and len(params) > 1:
            layout = static_layout(old.type)
            given = iter(params[1:])
            for part, dim in dynamic_parts(old.type):
                value = next(given)
                value.name_hint = f"{old.name_hint}_{part}{dim}" if old.name_hint else None
                if part == "offset":
                    layout.offset = value
                elif part == "size":
                    layout.sizes[dim] = value
                else:
                    layout.strides[dim] = value
            if isinstance(old.type.layout, NoneAttr):
                layout.strides = row_major_strides(lw, layout.sizes)
            lw.layouts[old] = StridedLayout(layout.offset, layout.sizes, layout.strides)
    return [a.type for a in lw.entry.args]


def takes_dims(fn: func.FuncOp) -> bool:
    """Whether a packed function takes `dims` (an input or output has dims
    known only at run time)."""
    abi_args = {marked_argument(fn, marker) for marker in ABI_BUFFERS}
    return any(isinstance(a.type, MemRefType) and dynamic_parts(a.type)
               for a in fn.args if a not in abi_args)  # fmt: skip


def _packed_parameters(lw: FunctionBuilder, fn: func.FuncOp, pass_name: str) -> list[Attribute]:
    """`buffers`, [`dims`,] `weights`, `arena`: the inputs and outputs are
    loaded from `buffers` where used, their run-time sizes from `dims` (each
    buffer's dynamic dims in order, inputs then outputs) at the entry; the
    weights and arena arguments, present or not, are always the last two
    parameters."""
    dims = takes_dims(fn)
    buffers = lw.entry.insert_arg(PTR, 0)
    buffers.name_hint = "buffers"
    sizes = lw.entry.insert_arg(PTR, 1) if dims else None
    if sizes is not None:
        sizes.name_hint = "dims"
    abi_args = {marker: marked_argument(fn, marker) for marker in ABI_BUFFERS}
    for marker in ABI_BUFFERS:
        param = lw.entry.insert_arg(PTR, len(lw.entry.args))
        param.name_hint = marker.removeprefix("ember.")
        if (arg := abi_args[marker]) is not None:
            lw.values[arg] = param
    io = [a for a in fn.args if a not in abi_args.values()]
    read = 0
    for i, old in enumerate(io):
        parts = dynamic_parts(old.type) if isinstance(old.type, MemRefType) else []
        if not isinstance(old.type, MemRefType) or any(p != "size" for p, _ in parts):
            raise DiagnosticException(
                f"{pass_name}: @{fn.sym_name.data} takes its buffers packed "
                f"({PACKED_BUFFERS_ATTR}), which needs row-major memrefs, not {old.type}"
            )
        lw.values.deferred[old] = _buffer_pointer(lw, buffers, i, old.name_hint)
        if parts:
            assert sizes is not None
            layout = static_layout(old.type)
            for _, dim in parts:
                slot = lw.emit(llvm.GEPOp.from_mixed_indices(sizes, [read], i64, inbounds=True))
                layout.sizes[dim] = lw.emit(llvm.LoadOp(slot, i64))
                read += 1
            layout.strides = row_major_strides(lw, layout.sizes)
            lw.layouts[old] = StridedLayout(layout.offset, layout.sizes, layout.strides)
    return [PTR] * (4 if dims else 3)


POINTER_FLAGS = ("llvm.noalias",)
"""Argument attributes of a memref argument that its pointer parameter keeps
(`loop-mark-noalias` sets `llvm.noalias`; xDSL's translation hands them to LLVM)."""


def _pointer_flags(fn: func.FuncOp) -> ArrayAttr[DictionaryAttr] | None:
    """The unpacked parameters' attributes: each memref argument's
    `POINTER_FLAGS` on its pointer, nothing on the rest (None: none at all)."""
    if fn.arg_attrs is None:
        return None
    flags: list[DictionaryAttr] = []
    for arg, attrs in zip(fn.args, fn.arg_attrs.data):
        kept = {k: v for k, v in attrs.data.items() if k in POINTER_FLAGS}
        flags.append(DictionaryAttr(kept if isinstance(arg.type, MemRefType) else {}))
        flags += [DictionaryAttr({})] * (len(parameter_types(arg.type)) - 1)
    return ArrayAttr(flags) if any(f.data for f in flags) else None


def lower_function(fn: func.FuncOp, handlers: HandlerTable,
                   externals: dict[str, llvm.LLVMFunctionType], pass_name: str) -> llvm.FuncOp:  # fmt: skip
    """The `llvm.func` of `fn`, its body lowered by `handlers`, with the ABI's signature."""
    inputs = fn.function_type.inputs.data
    if fn.function_type.outputs.data or not all(lowerable(t) for t in inputs):
        raise DiagnosticException(
            f"{pass_name}: @{fn.sym_name.data} must take memrefs and scalars and return nothing"
        )
    lw = FunctionBuilder(Block(), handlers, externals=externals, pass_name=pass_name)
    if PACKED_BUFFERS_ATTR in fn.attributes:
        params = _packed_parameters(lw, fn, pass_name)
    else:
        params = bind_unpacked_parameters(lw, fn.args)
    lw.lower_block(fn.body.block)
    signature = llvm.LLVMFunctionType(params)
    flags = None if PACKED_BUFFERS_ATTR in fn.attributes else _pointer_flags(fn)
    other: dict[str, Attribute | None] = {} if flags is None else {"arg_attrs": flags}
    result = llvm.FuncOp(fn.sym_name.data, signature, EXTERNAL, body=lw.finish(),
                         other_props=other)  # fmt: skip
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
