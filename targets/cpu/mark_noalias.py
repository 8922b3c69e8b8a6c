"""`loop-mark-noalias`: kernel arguments that never overlap another become `llvm.noalias`.

Every buffer a kernel function (`ember.kernel`) takes is, at its call sites,
a view of the model's arena, of its weights, or one of its inputs and
outputs. Without knowing that they do not overlap, LLVM must assume that a
store to the output may change an input, so it vectorises a loop only
behind run-time overlap checks, or not at all once it has fully unrolled a
short loop (the SLP vectoriser has no such checks). This pass proves the
fact where it holds and writes it as the `llvm.noalias` argument attribute,
which `convert-loop-to-llvm` passes on to LLVM.

A memref argument of a kernel function is marked when, at every call, the
bytes its operand may reach are disjoint from those of every other memref
operand of the call. What an operand may reach (its footprint) is found by
following views to a root, an argument of the calling function or a
buffer it allocates (`memref.alloc`, `memref.alloca`):

- `memref.view %root[%offset]` with a constant byte offset and a static
  type, of a root or of such a view, reaches `[offset, offset + size)` of
  its source's footprint; this is how `loop-plan-memory` places every
  intermediate buffer in the arena. A view of anything else reaches at most
  what its source reaches;
- a subview or a reshape (`memref.subview`, `collapse_shape`,
  `expand_shape`) lies within its source, so it takes its source's
  footprint, and so does a `memref.reinterpret_cast` whose static offset,
  sizes and strides stay within a static source's bytes (the reshapes
  Ember emits); another reinterpret_cast may reach anywhere: unknown;
- a root reaches all of itself; anything else is unknown, and
  overlaps everything.

Two footprints of one root are disjoint when their byte ranges are. Two of
different roots are disjoint when the caller is the model's entry function
(`ember.packed_buffers`), whose ABI promises that its buffers, weights and
arena do not overlap where one is written (`convert-loop-to-llvm`'s
docstring), when both roots are ABI buffers (`ember.weights`,
`ember.arena`), when one is a buffer the caller allocates (no other
buffer reaches its bytes), or when the caller is a kernel and the two arguments lie
apart at every call of it. That last rule is for the parallel bodies
`loop-parallelize` outlines from a kernel: two kernel buffers that
`loop-plan-memory` placed in the same bytes (live in different nests of
one kernel) are never marked in the kernel, but a body that runs one of
those nests reads and writes buffers that lie apart, and is marked. So
functions are visited callers first, each kernel's pairs of arguments that
lie apart known before its own calls are looked at.

Functions that are not kernels, and kernels with no call, are left alone.
Run it after `loop-outline-kernels` (and so after `loop-plan-memory`) and
after `loop-parallelize`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

from xdsl.context import Context
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    NoneAttr,
    UnitAttr,
)
from xdsl.dialects.func import CallOp, FuncOp
from xdsl.ir import BlockArgument, SSAValue
from xdsl.passes import ModulePass

from ember.dialects.loop import (
    ABI_BUFFERS,
    KERNEL_ATTR,
    PACKED_BUFFERS_ATTR,
    byte_size,
    marked_argument,
)
from ember.passes.loop.fuse import VIEW_OPS

NOALIAS = "llvm.noalias"
"""The argument attribute (MLIR's spelling) that `convert-loop-to-llvm` passes on to LLVM."""


@dataclass(frozen=True)
class Footprint:
    """The bytes `[start, end)` of `root` (an argument of the calling
    function, or a buffer it allocates) that a buffer may reach; `end`
    None: to the root's end."""

    root: SSAValue
    start: int
    end: int | None

    def disjoint_from(self, other: Footprint, separate_roots: bool) -> bool:
        """Whether no byte is reachable from both; `separate_roots` says
        whether different roots are known not to overlap."""
        if self.root is not other.root:
            return separate_roots
        if self.end is not None and self.end <= other.start:
            return True
        return other.end is not None and other.end <= self.start


def _constant_index(value: SSAValue) -> int | None:
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def _within_source(cast: memref.ReinterpretCastOp) -> bool:
    """Whether a reinterpret_cast's static offset, sizes and strides address
    only bytes of its (static, identity-layout) source."""
    source, result = cast.source.type, cast.result.type
    if cast.offsets or cast.sizes or cast.strides:
        return False
    if not isinstance(source, MemRefType) or not isinstance(source.layout, NoneAttr):
        return False
    if not source.has_static_shape() or not isinstance(result, MemRefType):
        return False
    sizes, strides = cast.static_sizes.get_values(), cast.static_strides.get_values()
    (offset,) = cast.static_offsets.get_values()
    if any(s <= 0 for s in sizes):
        return True  # addresses nothing
    if offset < 0 or any(s < 0 for s in strides):
        return False
    last = offset + sum((size - 1) * stride for size, stride in zip(sizes, strides))
    element = byte_size(MemRefType(result.element_type, [1]))
    return (last + 1) * element <= byte_size(source)


def _exact(value: SSAValue) -> bool:
    """Whether `value` is a root or a `memref.view` at a constant offset with
    a static type of an exact value: its footprint's start is then where its
    own bytes begin, not a superset's."""
    if isinstance(value, BlockArgument) or _allocated(value):
        return True
    view = value.owner
    if not isinstance(view, memref.ViewOp) or view.sizes:
        return False
    static = isinstance(view.result.type, MemRefType) and view.result.type.has_static_shape()
    return static and _constant_index(view.byte_shift) is not None and _exact(view.source)


def _allocated(value: SSAValue) -> bool:
    return isinstance(value.owner, memref.AllocOp | memref.AllocaOp)


def footprint(value: SSAValue) -> Footprint | None:
    """What `value` (a memref) may reach, or None if unknown."""
    if isinstance(value, BlockArgument) or _allocated(value):
        return Footprint(value, 0, None)
    owner = value.owner
    if isinstance(owner, memref.ViewOp):
        source = footprint(owner.source)
        if source is None or not _exact(value):
            return source
        start = source.start + _constant_index(owner.byte_shift)  # type: ignore[operator]
        return Footprint(source.root, start, start + byte_size(owner.result.type))
    if isinstance(owner, memref.ReinterpretCastOp) and not _within_source(owner):
        return None
    if isinstance(owner, VIEW_OPS):
        return footprint(owner.operands[0])
    return None


def abi_roots(caller: FuncOp) -> set[BlockArgument]:
    """The ABI buffers (weights, arena) among `caller`'s arguments."""
    return {marked_argument(caller, marker) for marker in ABI_BUFFERS} - {None}  # type: ignore[return-value]


Pairs = set[tuple[int, int]]
"""Pairs `(i, j)`, `i < j`, of a function's arguments (or a call's operands)
whose bytes lie apart."""


def apart_operands(call: CallOp, caller: FuncOp, roots: set[BlockArgument],
                   caller_apart: Pairs | None) -> Pairs:  # fmt: skip
    """The pairs of `call`'s memref operands whose footprints are disjoint.
    `roots` are `abi_roots(caller)` (found once per caller: the entry
    function of a model with thousands of outputs makes thousands of
    calls); `caller_apart` holds the pairs of the caller's own arguments
    that lie apart at every call of it, where the caller is a kernel."""
    entry = PACKED_BUFFERS_ATTR in caller.attributes
    buffers = [i for i, v in enumerate(call.arguments) if isinstance(v.type, MemRefType)]
    prints = {i: footprint(call.arguments[i]) for i in buffers}

    def separate_roots(a: SSAValue, b: SSAValue) -> bool:
        if entry or (a in roots and b in roots) or _allocated(a) or _allocated(b):
            return True
        assert isinstance(a, BlockArgument) and isinstance(b, BlockArgument)
        pair = (min(a.index, b.index), max(a.index, b.index))
        return caller_apart is not None and pair in caller_apart

    def apart(a: Footprint | None, b: Footprint | None) -> bool:
        if a is None or b is None:
            return False
        if any(isinstance(r, BlockArgument) and r.owner is not caller.body.block
               for r in (a.root, b.root)):  # fmt: skip
            return False  # a block argument of a nested region: not a buffer the ABI names
        return a.disjoint_from(b, a.root is not b.root and separate_roots(a.root, b.root))

    return {(i, j) for i, j in combinations(buffers, 2) if apart(prints[i], prints[j])}


def mark_arguments(kernel: FuncOp, separate: Sequence[bool]) -> None:
    """Adds `llvm.noalias` to the arguments of `kernel` flagged in `separate`."""
    attrs = (
        list(kernel.arg_attrs.data) if kernel.arg_attrs else [DictionaryAttr({})] * len(kernel.args)
    )
    for index, flag in enumerate(separate):
        if flag:
            attrs[index] = DictionaryAttr({**attrs[index].data, NOALIAS: UnitAttr()})
    kernel.arg_attrs = ArrayAttr(attrs)


def callers_first(functions: Sequence[FuncOp]) -> list[FuncOp]:
    """`functions` ordered so that each comes after every function calling it."""
    names = {f.sym_name.data for f in functions}
    callees = {
        f.sym_name.data: [c.callee.string_value() for c in f.walk()
                          if isinstance(c, CallOp) and c.callee.string_value() in names]
        for f in functions
    }  # fmt: skip
    waiting = {name: 0 for name in names}
    for called in callees.values():
        for name in called:
            waiting[name] += 1
    ready = [f for f in functions if waiting[f.sym_name.data] == 0]
    by_name = {f.sym_name.data: f for f in functions}
    ordered: list[FuncOp] = []
    while ready:
        function = ready.pop()
        ordered.append(function)
        for name in callees[function.sym_name.data]:
            waiting[name] -= 1
            if waiting[name] == 0:
                ready.append(by_name[name])
    return ordered


class MarkNoAliasPass(ModulePass):
    """Marks kernel function arguments that overlap no other argument at any
    call as `llvm.noalias`."""

    name = "loop-mark-noalias"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        functions = [f for f in op.ops if isinstance(f, FuncOp) and not f.is_declaration]
        kernels = {f.sym_name.data: f for f in functions if KERNEL_ATTR in f.attributes}
        apart: dict[str, Pairs] = {}
        for caller in callers_first(functions):  # a kernel's pairs are known before its calls
            roots = abi_roots(caller)
            caller_apart = apart.get(caller.sym_name.data)
            for call in caller.walk():
                if not isinstance(call, CallOp) or call.callee.string_value() not in kernels:
                    continue
                name = call.callee.string_value()
                here = apart_operands(call, caller, roots, caller_apart)
                apart[name] = here if name not in apart else apart[name] & here
        for name, pairs in apart.items():
            kernel = kernels[name]
            buffers = [i for i, arg in enumerate(kernel.args) if isinstance(arg.type, MemRefType)]
            flags = [i in buffers and all((min(i, j), max(i, j)) in pairs for j in buffers if j != i)
                     for i in range(len(kernel.args))]  # fmt: skip
            if any(flags):
                mark_arguments(kernel, flags)


__all__ = ["NOALIAS", "Footprint", "MarkNoAliasPass", "abi_roots", "apart_operands", "footprint"]
