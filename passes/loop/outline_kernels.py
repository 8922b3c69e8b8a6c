"""`loop-outline-kernels`: each `loop.kernel` becomes a function of its own.

The entry function of a model is a long list of kernels. LLVM's
optimisations grow faster than linearly with function size, so one function
for a whole DenseNet takes minutes to compile. This pass moves the body of
each top-level `loop.kernel` into a private `func.func` whose arguments are
the values the kernel captured from around it (buffers, views, sizes), and
calls it from the entry function in the kernel's place; the
`arith.constant`s it captured (its bounds) are copied into the kernel
function instead. A loop nest outside any kernel first becomes a kernel of
its own (`loop-form-kernels`), so every nest ends up in one kernel function
and `convert-loop-to-llvm` never sees a `loop.kernel`.
Kernels that are the same computation on other buffers (same loops, same
shapes, same body) share one function, so repeated layers are compiled
once. Kernel functions are marked `ember.kernel` (the LLVM lowering keeps
them out of line). Functions with no kernels are left alone.

Source names (`ember.dialects.source_names`) never make kernels differ:
each call keeps its kernel's location, and the function lists the names of
every call site it serves in `ember.source_names` (one list per call, in
the order of the calls), written once the pass has seen them all. A new
function's name ends in its first call site's first name, where that is a
C identifier once sanitised (`main_kernel3_conv1_7x7_s2`), so the symbols
in LLVM IR, perf and gdb say which layer they run.

A view a kernel captured (`memref.subview`, a reshape: the ops of
`loop-fuse`'s `VIEW_OPS` but `memref.view`) is copied in as a constant is,
its source captured instead, so the kernel sees each buffer it touches as
one argument however many views of it it uses (its nests then merge, or
not, as they would in place). A `memref.view` stays outside: it is where
`loop-plan-memory` placed a buffer, and kernels that differ only in that
stay equal. For the same reason a slot (a chain of unit-step subviews
ending anywhere but at its buffer's start) that is the one view of its
buffer the kernel uses is passed as one subview of the buffer with a
run-time offset: the layers of a DenseNet block, each writing its channels
into the block's concatenation at its own offset, then share their
function (DenseNet-121's 207 kernel functions become 152, its object code
689 kB -> 389 kB).

The CPU pipeline runs the pass twice. First on structured ops, before
`loop-generate`: each unfused op becomes a kernel of its own
(`loop-form-kernels`), and equal kernels are found while each is a few
ops, so the loops of a repeated layer are generated, fused and lowered
once, not once per use and then found equal. A kernel's own buffers (its
`memref.alloc`s) stay in its function until `loop-plan-memory` makes them
arguments placed in the caller's arena. A group that allocates a buffer of
a size known only at run time stays in place at this point. Then, after
`loop-plan-memory`, on whatever is left outside a kernel.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from xdsl.context import Context
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    UNKNOWN_LOC,
    ArrayAttr,
    IndexType,
    MemRefType,
    ModuleOp,
    StridedLayoutAttr,
    StringAttr,
    SymbolRefAttr,
    UnitAttr,
)
from xdsl.dialects.func import CallOp, FuncOp, ReturnOp
from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from ember.dialects.loop import KERNEL_ATTR, KernelOp, WeightOp
from ember.dialects.source_names import SOURCE_NAMES_ATTR, source_names
from ember.passes.loop.form_kernels import form_kernels
from ember.passes.loop.fuse import VIEW_OPS, buffer_root

MAX_SYMBOL_SUFFIX = 40
"""The most characters of a source name a kernel function's name ends in."""

COPIED_VIEWS = tuple(view for view in VIEW_OPS if view is not memref.ViewOp)
"""The views a kernel copies in rather than captures (see the module doc)."""


def _captured(kernel: KernelOp) -> dict[SSAValue, list[tuple[Operation, int]]]:
    """Values the kernel uses but does not define, in first-use order, each
    with its uses in the kernel (operation, operand index): rewiring those
    uses alone keeps outlining linear, where a value used by every kernel
    (the model input of a wide graph) has uses all over the function."""
    captured: dict[SSAValue, list[tuple[Operation, int]]] = {}
    # A value the kernel defines dominates its uses, so the walk (in order,
    # an op before its regions) meets its definition first: a set of what
    # was defined so far answers in constant time where asking each operand's
    # owner whether the kernel is its ancestor climbed the whole nest.
    defined: set[SSAValue] = {arg for block in kernel.body.blocks for arg in block.args}
    for op in kernel.body.walk():
        for index, value in enumerate(op.operands):
            if value not in defined:
                captured.setdefault(value, []).append((op, index))
        defined.update(op.results)
        for region in op.regions:
            for block in region.blocks:
                defined.update(block.args)
    return captured


def _copy_in(kernel: KernelOp, value: SSAValue, uses: list[tuple[Operation, int]]) -> None:
    """Copies the op defining `value` into `kernel`'s region, in front, for
    the kernel's `uses` of it; the original goes where nothing else uses it."""
    original = value.owner
    assert isinstance(original, Operation)
    copy = original.clone()
    kernel.body.block.insert_op_before(copy, kernel.body.block.first_op)  # type: ignore[arg-type]
    for user, index in uses:
        user.operands[index] = copy.results[0]
    if not value.uses:
        original.detach()
        original.erase()


def _copy_views_in(kernel: KernelOp) -> None:
    """Copies the views `kernel` captured into its region, in front, their
    sources (views of views too) captured instead; a view nothing else uses
    goes from outside. A part of a buffer that the kernel reaches through
    no other view of it is passed instead, where it starts anywhere but at
    the buffer's start (`_pass_slot`)."""
    passed = _pass_slots(kernel)
    while views := [(v, uses) for v, uses in _captured(kernel).items()
                    if isinstance(v.owner, COPIED_VIEWS) and v not in passed]:  # fmt: skip
        for value, uses in views:
            _copy_in(kernel, value, uses)


def _pass_slots(kernel: KernelOp) -> set[SSAValue]:
    """Passes `kernel` each slot it captured (`_slot`) as a subview of the
    slot's buffer with a run-time offset, made in front of the kernel;
    returns those subviews. Kernels that differ only in where their
    buffers lie in a larger one (the layers of a DenseNet block, each
    writing its channels into the block's concatenation) then share a
    function, where a static offset would set them apart."""
    captured = _captured(kernel)
    views_of: dict[SSAValue, list[SSAValue]] = {}
    for value in captured:
        if isinstance(value.type, MemRefType):
            views_of.setdefault(buffer_root(value), []).append(value)
    passed: set[SSAValue] = set()
    for (value,) in (values for values in views_of.values() if len(values) == 1):
        slot = _slot(value)
        if slot is None:
            continue
        base, offsets = slot
        constants = [arith.ConstantOp.from_int_and_width(o, IndexType()) for o in offsets]
        result_type = value.type
        assert isinstance(result_type, MemRefType) and isinstance(
            result_type.layout, StridedLayoutAttr
        )
        dynamic = MemRefType(result_type.element_type, result_type.get_shape(),
                             StridedLayoutAttr(result_type.layout.get_strides(), None))  # fmt: skip
        rank = len(offsets)
        subview = memref.SubviewOp(base, [c.result for c in constants], [], [],
                                   [DYNAMIC_INDEX] * rank,
                                   result_type.get_shape(), [1] * rank, dynamic)  # fmt: skip
        Rewriter.insert_op([*constants, subview], InsertPoint.before(kernel))
        for user, index in captured[value]:
            user.operands[index] = subview.result
        _erase_unused_views(value)
        passed.add(subview.result)
    return passed


def _slot(value: SSAValue) -> tuple[SSAValue, list[int]] | None:
    """Where a chain of unit-step, static `memref.subview`s ends in the
    buffer it starts from (a buffer allocated for the model, or one of the
    function's), as that buffer and the offsets in its dims; None for any
    other value, and for a slot at the buffer's start."""
    offsets: list[int] | None = None
    while isinstance(subview := value.owner, memref.SubviewOp):
        steps = subview.static_strides.get_values()
        if subview.offsets or subview.sizes or subview.strides or any(s != 1 for s in steps):
            return None
        here = subview.static_offsets.get_values()
        if len(here) != len(subview.result.type.get_shape()):  # type: ignore[attr-defined]
            return None  # rank-reducing
        offsets = list(here) if offsets is None else [a + b for a, b in zip(offsets, here)]
        value = subview.source
    if offsets is None or not any(offsets):
        return None
    allocated = isinstance(value.owner, memref.AllocOp)
    return (value, offsets) if allocated or isinstance(value, BlockArgument) else None


def _erase_unused_views(value: SSAValue) -> None:
    """Erases the view defining `value`, and the views it was made from,
    while nothing uses them."""
    while isinstance(view := value.owner, COPIED_VIEWS) and not value.uses:
        value = view.operands[0]
        view.detach()
        view.erase()


def _copy_bitcast_constants_in(kernel: KernelOp) -> None:
    """Copies into `kernel` the `arith.bitcast`s of constants it captured
    (an unsigned fill value, which `loop-generate` reads as a constant),
    their constants captured instead, and copied in as every constant is."""
    for value, uses in _captured(kernel).items():
        cast = value.owner
        if isinstance(cast, arith.BitcastOp) and isinstance(cast.input.owner, arith.ConstantOp):
            _copy_in(kernel, value, uses)


def _move_weights_out(kernel: KernelOp) -> None:
    """Moves the `loop.weight`s of `kernel`'s region in front of it: weights
    are the model's, placed in its blob by `loop-pack-weights`, and a kernel
    function receives them as arguments."""
    for op in list(kernel.body.block.ops):
        if isinstance(op, WeightOp):
            op.detach()
            Rewriter.insert_op(op, InsertPoint.before(kernel))


def _allocates_at_run_time(kernel: KernelOp) -> bool:
    """Whether `kernel` allocates a buffer whose size is known only at run
    time (which stays in place until `loop-plan-memory` has placed it)."""
    return any(isinstance(op, memref.AllocOp) and op.dynamic_sizes for op in kernel.body.walk())


_NUMBERED = re.compile(r"^(.*?_kernel\d+)")
"""The `{entry}_kernel{N}` part of a kernel function's name."""


def _symbol_suffix(name: str) -> str:
    """`_{name}` as a C identifier's tail (other characters become `_`, at
    most `MAX_SYMBOL_SUFFIX` of them), or '' when nothing of it is left."""
    cleaned = re.sub(r"[^A-Za-z0-9_]+", "_", name).strip("_")[:MAX_SYMBOL_SUFFIX]
    return f"_{cleaned}" if cleaned else ""


class KernelTable:
    """The kernel functions made so far, found again by structure: a new
    kernel that is structurally equivalent to one of them (same ops, types,
    attributes and use-def shape; names do not count) calls that one. A
    signature of all that but the use-def shape narrows the comparison to the
    candidates that are almost surely equal;
    comparing structures instead of printed text keeps outlining linear in
    the size of the IR. New functions are named after their entry and a
    number no function of `module` has yet."""

    def __init__(self, module: ModuleOp) -> None:
        self.by_signature: dict[tuple[object, ...], list[FuncOp]] = {}
        self.functions = {op.sym_name.data: op for op in module.ops if isinstance(op, FuncOp)}
        self.taken = set(self.functions) | {
            numbered.group(1) for name in self.functions if (numbered := _NUMBERED.match(name))
        }
        self.count = 0
        self.numbered: dict[str, str] = {}
        """A name `new_name` gave -> its `{entry}_kernel{N}` part."""
        self.call_sites: dict[str, list[list[str]]] = {}
        """Per kernel function: the source names of each call made this run."""

    def new_name(self, entry: str, names: Sequence[str] = ()) -> str:
        """`{entry}_kernel{N}` for the lowest N from the last one up that is
        free, with `_{first name}` (sanitised) when `names` has one."""
        suffix = _symbol_suffix(names[0]) if names else ""
        while (name := f"{entry}_kernel{self.count}") in self.taken:
            self.count += 1
        self.numbered[name + suffix] = name
        return name + suffix

    def add_call_site(self, function: str, names: list[str]) -> None:
        """Records that a call of `function` runs the model's nodes `names`."""
        self.call_sites.setdefault(function, []).append(names)

    def write_source_names(self) -> None:
        """Lists, on each kernel function called, the source names of its call
        sites (after those an earlier run of the pass listed)."""
        for name, sites in self.call_sites.items():
            function = self.functions[name]
            known = function.attributes.get(SOURCE_NAMES_ATTR)
            earlier = list(known.data) if isinstance(known, ArrayAttr) else []
            if any(sites):
                function.attributes[SOURCE_NAMES_ATTR] = ArrayAttr(
                    [*earlier, *(ArrayAttr([StringAttr(n) for n in site]) for site in sites)]
                )

    @staticmethod
    def _signature(kernel: FuncOp, weights: tuple[bool, ...]) -> tuple[object, ...]:
        """All that structural equivalence compares but the use-def shape:
        each op's name, properties, attributes and result types. Kernels
        that differ only in a constant (a thousand branches scaling by
        their own factor) then never meet, where comparing each with every
        earlier one of the same op names was quadratic."""
        return (kernel.function_type, weights, *(
            (op.name, tuple(sorted(op.properties.items())), tuple(sorted(op.attributes.items())),
             op.result_types)
            for op in kernel.body.walk()))  # fmt: skip

    def find_or_add(self, kernel: FuncOp, module: ModuleOp, weights: tuple[bool, ...] = ()) -> str:
        """The name of the kernel function equivalent to `kernel`: an earlier
        one, or `kernel` itself, then added to `module`. `weights` says which
        arguments the call passes a `loop.weight` (kernels differing in that
        stay apart: `loop-generate` packs a weight argument at compile time
        only where every call passes one)."""
        candidates = self.by_signature.setdefault(self._signature(kernel, weights), [])
        for candidate in candidates:
            if candidate.body.is_structurally_equivalent(kernel.body):
                return candidate.sym_name.data
        candidates.append(kernel)
        self.taken.add(kernel.sym_name.data)
        self.taken.add(self.numbered.get(kernel.sym_name.data, kernel.sym_name.data))
        self.functions[kernel.sym_name.data] = kernel
        module.body.block.add_op(kernel)
        return kernel.sym_name.data


def outline_function(func: FuncOp, module: ModuleOp, kernels: KernelTable) -> None:
    """Outlines `func`'s kernels, sharing the functions of `kernels`."""
    entry = func.sym_name.data
    form_kernels(func)
    for kernel in [op for op in func.body.block.ops if isinstance(op, KernelOp)]:
        if _allocates_at_run_time(kernel):
            continue
        _move_weights_out(kernel)
        _copy_views_in(kernel)
        _copy_bitcast_constants_in(kernel)
        captured = _captured(kernel)
        constants = {
            v: uses for v, uses in captured.items() if isinstance(v.owner, arith.ConstantOp)
        }
        for value in constants:
            del captured[value]
        block = Block(arg_types=[v.type for v in captured])
        for value, uses in constants.items():
            copy = value.owner.clone()  # type: ignore[union-attr]
            block.add_op(copy)
            for user, index in uses:
                user.operands[index] = copy.results[0]
            if not value.uses:  # the constant served this kernel alone
                value.owner.detach()  # type: ignore[union-attr]
                value.owner.erase()  # type: ignore[union-attr]
        body = kernel.body.block
        for op in list(body.ops)[:-1]:  # all but the (empty) loop.yield
            op.detach()
            block.add_op(op)
        block.add_op(ReturnOp())
        for uses, arg in zip(captured.values(), block.args, strict=True):
            for user, index in uses:
                user.operands[index] = arg
        # Names mean nothing in a kernel shared by several call sites: drop
        # them, and the source names (which the function lists per call site).
        for op in block.walk():
            op.location = UNKNOWN_LOC
            for value in [*op.results,
                          *(a for r in op.regions for b in r.blocks for a in b.args)]:  # fmt: skip
                value.name_hint = None
        for arg in block.args:
            arg.name_hint = None
        names = source_names(kernel)
        function = FuncOp(kernels.new_name(entry, names), ([v.type for v in captured], []),
                          Region(block), visibility="private")  # fmt: skip
        function.attributes[KERNEL_ATTR] = UnitAttr()
        weights = tuple(isinstance(v.owner, WeightOp) for v in captured)
        name = kernels.find_or_add(function, module, weights)
        kernels.add_call_site(name, names)
        call = CallOp(SymbolRefAttr(name), list(captured), [])
        call.location = kernel.location
        Rewriter.replace_op(kernel, call)


class OutlineKernelsPass(ModulePass):
    """Moves each `loop.kernel` (and each loop nest outside one) into its own
    (shared) kernel function."""

    name = "loop-outline-kernels"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kernels = KernelTable(op)
        for func in [
            f for f in op.ops if isinstance(f, FuncOp) and KERNEL_ATTR not in f.attributes
        ]:
            if not func.is_declaration:
                outline_function(func, op, kernels)
        kernels.write_source_names()


__all__ = ["KERNEL_ATTR", "OutlineKernelsPass"]
