"""`convert-tensor-to-loop`: bufferization of tensor-level IR into
structured ops on buffers.

The tensor level is upstream `linalg` and `tensor` ops plus
`ember_linalg.gather` and `ember_linalg.scatter`. Every tensor value gets a buffer:

- function arguments become `memref` arguments; each result becomes one more
  `memref` argument (the caller's output buffer) and the function returns
  nothing (destination passing);
- `graph.constant` becomes `loop.weight` (its data goes to the weights blob);
- a value computed here gets a `memref.alloc` — or, when the value is returned
  exactly once, the output argument itself, so results are written in place;
- `tensor.reshape` is a view of its source's buffer (`memref.reinterpret_cast`
  to the new shape, offset 0, row-major strides; its shape operand, an
  `arith.constant`, is not read: the result type says it);
- scalar `arith` ops outside any body (fill values, reshape shapes) are read
  where they are used and leave nothing behind.

The compute stays structured: a `linalg.generic`, `linalg.matmul` or
`linalg.conv_2d_nchw_fchw` becomes the same op on memrefs (destination
passing: no results), with its indexing maps, its body, its `schedule` and
every other attribute. Data movement becomes structured copies on buffers:
`linalg.fill` (a fill, the fills of a pad's border), `linalg.copy` (a copy that keeps
a value from being overwritten, a returned value that lives elsewhere), into
or out of a `memref.subview` for `tensor.pad`, `tensor.extract_slice`,
`tensor.insert_slice` and `tensor.concat`, and `ember_linalg.gather` on
memrefs (`ember_linalg.scatter` updates its result's buffer in place, which
starts as its target's, or a copy of it). No loop is made here: `loop-generate` turns each of these ops into
the loop nest its schedule (or the default) describes.

A concat input that an op, kernel or concat of the function computes
(static shapes) and that nothing else reads but as an input of a
structured op, a pad or a concat is a slab (`_slabs`): its buffer is its
part of the concat's buffer (a `memref.subview`, the concat's buffer made
by the first slab computed), so the producer writes it there and the
concat copies only its other inputs. A concat that is a slab itself makes
a chain (DenseNet's dense blocks), and a buffer holding a slab that is read
elsewhere too is never written in place.

`tensor.empty` and `linalg.fill` are materialised lazily, by the op that
first needs them: an op whose destination (`outs`) has no other use writes
into that buffer in place; otherwise the destination is copied first, so no
value is ever overwritten while something may still read it. An input whose
values the body never reads (a pooling window, which only gives its dims
their extent) still needs a memref of its shape: if it has no buffer yet it
gets an alloc of its own, which `loop-generate` erases with the op.

An `scf.for` on tensors (a recurrent op's loop over time) becomes an
`scf.for` on buffers without iter_args: each carried value gets one buffer
for the whole loop, starting with its init's contents (`_destination`),
which the body reads and which, at the end of each step, gets the yielded
value (copied, unless the body computed it in place, as an
`tensor.insert_slice` into the carried value is). The body's allocs stand
in front of the outermost loop (`loop-plan-memory` places top-level
allocs), a slice at the induction variable is a `memref.subview` at that
value, and a value from outside the loop is never written in place in it
(the next step reads it again).

A `loop.kernel` on tensors becomes a `loop.kernel` on buffers (no results)
holding what its ops bufferize to, its intermediate allocs included. Each
of its results gets its buffer in front of the kernel, as a destination the
kernel writes: the output argument when the result is returned, else the
alloc of the value it yields, moved out (with any view of it).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from xdsl.builder import Builder, InsertPoint
from xdsl.context import Context
from xdsl.dialects import arith, memref, scf, tensor
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    DictionaryAttr,
    FloatAttr,
    FunctionType,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StridedLayoutAttr,
    TensorType,
)
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from ember.dialects import loop
from ember.dialects.ember_linalg import GatherOp, ScatterOp
from ember.dialects.graph import ConstantOp, dense_constant
from ember.dialects.graph.dims import symbolic_shape
from ember.dialects.graph.symbolic import Dim, SymExpr
from ember.dialects.loop_nests import LoopNestBuilder, buffer_size, constant_index
from ember.dialects.quick_ops import quick
from ember.dialects.schedule import (
    STRUCTURED_OPS,
    describe,
    iteration_space,
    schedule_of,
    verify_schedule,
)
from ember.dialects.symbol_sizes import SymbolSizes, symbol_bindings, symbolic_size
from ember.passes.loop.generate import outside_value, scalar_constant

PASS_NAME = "convert-tensor-to-loop"
INDEX = IndexType()


def memref_of(value_type: Attribute) -> MemRefType:
    assert isinstance(value_type, TensorType)
    return MemRefType(value_type.element_type, value_type.get_shape())


@dataclass
class Pending:
    """A `tensor.empty` or `linalg.fill` whose buffer is not chosen yet."""

    value_type: TensorType
    fill: FloatAttr | IntegerAttr | None


@dataclass(frozen=True)
class Slab:
    """Where a concat's input lives in the concat's buffer."""

    concat: tensor.ConcatOp
    offsets: tuple[int, ...]


ON_BUFFERS = (*STRUCTURED_OPS, linalg.FillOp, linalg.CopyOp, GatherOp, ScatterOp)
"""The ops bufferization leaves on buffers (for `loop-generate`)."""


def _with_bodies(block: Block) -> Iterator[Operation]:
    """The ops of `block`, each kernel or `scf.for` followed by the ops of its
    body (and theirs)."""
    for op in block.ops:
        yield op
        if isinstance(op, loop.KernelOp | scf.ForOp):
            yield from _with_bodies(op.body.block)


def _defined_in(value: SSAValue, op: Operation) -> bool:
    owner = value.owner
    block_op = owner.parent_op() if isinstance(owner, Block) else owner
    return block_op is not None and op.is_ancestor(block_op)


def _hoist_buffer(buffer: SSAValue, kernel: loop.KernelOp) -> None:
    """Moves the ops that define `buffer` inside `kernel` (an alloc, maybe
    viewed) in front of it, so that code after the kernel can use it."""
    owner = buffer.owner
    if isinstance(owner, Block) or not kernel.is_ancestor(owner):
        return
    if owner.parent is not kernel.body.block or not isinstance(
        owner, memref.AllocOp | memref.ReinterpretCastOp | memref.SubviewOp | loop.WeightOp
    ):
        raise DiagnosticException(
            f"convert-tensor-to-loop: a result of loop.kernel lives in a buffer made by {owner.name}"
        )
    for operand in owner.operands:
        _hoist_buffer(operand, kernel)
    owner.detach()
    block = kernel.parent_block()
    assert block is not None
    block.insert_op_before(owner, kernel)


def _only_reads(user: Operation, value: SSAValue) -> bool:
    """Whether `user` reads `value` whatever its buffer's layout and never
    writes it: an input of a structured op, a pad's source, a concat's input."""
    if isinstance(user, STRUCTURED_OPS):
        return value in user.inputs and value not in user.outputs  # type: ignore[attr-defined]
    if isinstance(user, tensor.PadOp):
        return value not in (*user.low, *user.high)
    return isinstance(user, tensor.ConcatOp)


def _root(buffer: SSAValue) -> SSAValue:
    """The buffer that `buffer` is a (chain of) `memref.subview` of."""
    while isinstance(buffer.owner, memref.SubviewOp):
        buffer = buffer.owner.source
    return buffer


def _row_major_strides(shape: Sequence[Dim]) -> list[Dim]:
    return [math.prod(shape[i + 1 :]) for i in range(len(shape))]


class FunctionBufferizer:
    """Bufferizes one function (see the module docstring)."""

    def __init__(self, func: FuncOp):
        self.func = func
        self.buffers: dict[SSAValue, SSAValue | Pending] = {}
        self.uses: dict[SSAValue, int] = {}
        self.outputs: dict[SSAValue, SSAValue] = {}
        self.materialised: list[tuple[SSAValue, Pending]] = []
        """Each empty or filled tensor given a buffer, in order (see `_kernel`)."""
        self.steps: dict[SSAValue, SSAValue] = {}
        """The induction variable of each `scf.for` on tensors, its loop's on buffers."""
        self.allocs: LoopNestBuilder | None = None
        """Inside an `scf.for`: where allocs go (in front of the outermost one)."""
        self.users: dict[SSAValue, list[Operation]] = {}
        """The ops that use each value (kernel and loop bodies included)."""
        self.slabs: dict[SSAValue, Slab] = {}
        """Concat inputs computed in their part of the concat's buffer (`_slabs`)."""
        self.concat_buffers: dict[tensor.ConcatOp, SSAValue] = {}
        """The buffer of each concat whose first slab has been made."""
        self.slab_views: dict[SSAValue, Slab] = {}
        """Each view made for a slab, and which."""
        self.shared: set[SSAValue] = set()
        """Buffers holding a slab that something besides its concat reads:
        never written in place."""

    def run(self) -> None:
        old_block = self.func.body.block
        returned = self._returned_values(old_block)
        input_types = [memref_of(a.type) for a in old_block.args]
        output_types = [memref_of(v.type) for v in returned]
        block = Block(arg_types=[*input_types, *output_types])
        for old, new in zip(old_block.args, block.args):
            new.name_hint = old.name_hint
            self.buffers[old] = new
        output_args = block.args[len(input_types) :]
        times_returned = Counter(returned)
        for index, (value, arg) in enumerate(zip(returned, output_args)):
            arg.name_hint = f"out{index}"
            if times_returned[value] == 1 and not isinstance(value.owner, Block):
                self.outputs[value] = arg
        self.nest = LoopNestBuilder(Builder(InsertPoint.at_end(block)))
        self.sizes = SymbolSizes(block, symbol_bindings([a.type for a in old_block.args]),
                                 memref.DimOp, PASS_NAME)  # fmt: skip
        for op in _with_bodies(old_block):
            for operand in op.operands:
                self.uses[operand] = self.uses.get(operand, 0) + 1
                self.users.setdefault(operand, []).append(op)
            if isinstance(op, scf.ForOp):  # read again at every step: never written in place
                for inner in op.body.walk():
                    for operand in inner.operands:
                        if not _defined_in(operand, op):
                            self.uses[operand] = self.uses.get(operand, 0) + 1
        self.slabs = self._slabs(old_block)
        for op in list(old_block.ops):
            if isinstance(op, ReturnOp):
                self._return(op, output_args)
                continue
            self._lower(op)
        self._replace_body(block, len(returned))

    def _slabs(self, block: Block) -> dict[SSAValue, Slab]:
        """The inputs of the function's concats (static shapes) that an op,
        a kernel or a concat of the function computes, each at most once an
        input of the first such concat, and that nothing else reads but as
        an input of a structured op, a pad or another concat (which read
        any buffer, a strided part of one too): each is computed in its part
        of the concat's buffer, and the concat copies only its other inputs.
        A concat that is itself a slab makes a chain: DenseNet's dense block
        concatenates each layer's output with all before it, and the whole
        chain lives in the block's last concat."""
        slabs: dict[SSAValue, Slab] = {}
        for op in block.ops:
            if not isinstance(op, tensor.ConcatOp) or DYNAMIC_INDEX in op.result.type.get_shape():  # type: ignore[attr-defined]
                continue
            dim, offset = op.dim.value.data, 0
            times_joined = Counter(op.inputs)
            for value in op.inputs:
                shape = value.type.get_shape()  # type: ignore[attr-defined]
                owner = value.owner
                if (isinstance(owner, (loop.KernelOp, tensor.ConcatOp, *STRUCTURED_OPS))
                        and owner.parent is block and value not in self.outputs
                        and value not in slabs and times_joined[value] == 1
                        and all(user is op or _only_reads(user, value)
                                for user in self.users.get(value, []))):  # fmt: skip
                    slabs[value] = Slab(op, tuple(offset if d == dim else 0
                                                  for d in range(len(shape))))  # fmt: skip
                offset += shape[dim]
        return slabs

    @staticmethod
    def _returned_values(block: Block) -> list[SSAValue]:
        terminator = block.last_op
        if not isinstance(terminator, ReturnOp):
            raise DiagnosticException(
                "convert-tensor-to-loop: the function must end in func.return"
            )
        return list(terminator.arguments)

    def _replace_body(self, block: Block, result_count: int) -> None:
        func = self.func
        arg_attrs = (
            list(func.arg_attrs.data)
            if func.arg_attrs
            else [DictionaryAttr({})] * (len(block.args) - result_count)
        )
        res_attrs = (
            list(func.res_attrs.data) if func.res_attrs else [DictionaryAttr({})] * result_count
        )
        func.body.detach_block(func.body.blocks[0])
        func.body.add_block(block)
        func.function_type = FunctionType.from_lists([a.type for a in block.args], [])
        func.arg_attrs = ArrayAttr([*arg_attrs, *res_attrs])
        func.res_attrs = None

    # ------------------------------------------------------------ buffers
    def _new_buffer(self, value: SSAValue) -> SSAValue:
        """Where `value` will live: the output argument, or a fresh alloc."""
        if value in self.outputs:
            return self.outputs[value]
        if value in self.slabs:
            return self._slab(value)
        alloc = self._alloc(value.type)
        alloc.name_hint = value.name_hint
        return alloc

    def _slab(self, value: SSAValue) -> SSAValue:
        """The part of its concat's buffer that `value` is computed in (the
        buffer made by the first slab of the concat that needs it)."""
        slab = self.slabs[value]
        target = self.concat_buffers.get(slab.concat)
        if target is None:
            target = self._new_buffer(slab.concat.result)
            self.concat_buffers[slab.concat] = target
        shape = value.type.get_shape()  # type: ignore[attr-defined]
        view = self._subview(target, slab.offsets, shape, [1] * len(shape))
        self.slab_views[view] = slab
        if self.uses.get(value, 0) > 1:  # read after the concat, maybe
            self.shared.add(_root(target))
        return view

    def _alloc(self, value_type: Attribute) -> SSAValue:
        """A `memref.alloc` for a tensor of `value_type`, its symbolic dims
        sized by their values."""
        assert isinstance(value_type, TensorType)
        sizes = self.sizes.sizes(symbolic_shape(value_type))
        nest = self.allocs or self.nest
        buffer_type = memref_of(value_type)
        alloc = quick(lambda: memref.AllocOp(sizes, [], buffer_type), (memref.AllocOp, len(sizes)),
                      memref.AllocOp, sizes, (buffer_type,))  # fmt: skip
        return nest.insert(alloc).results[0]

    def _buffer(self, value: SSAValue) -> SSAValue:
        """The buffer holding `value`, materialising a pending empty/fill."""
        buffer = self.buffers[value]
        if isinstance(buffer, Pending):
            target = self._new_buffer(value)
            if buffer.fill is not None:
                self._fill(target, buffer.fill)
            self.buffers[value] = target
            self.materialised.append((value, buffer))
            return target
        return buffer

    def _fill(self, target: SSAValue, value: FloatAttr | IntegerAttr) -> None:
        """`linalg.fill` of `target` with the scalar `value`."""
        self.nest.insert(linalg.FillOp([self.nest.constant(value)], [target], res=()))

    def _copy(self, source: SSAValue, target: SSAValue) -> None:
        self.nest.insert(linalg.CopyOp([source], [target], res=()))

    def _subview(
        self, buffer: SSAValue, offsets: Sequence[Dim | SSAValue], sizes: Sequence[Dim],
        strides: Sequence[int],
    ) -> SSAValue:  # fmt: skip
        """The part of `buffer` at `offsets` with `sizes` and `strides`, as a
        `memref.subview` (a symbolic offset or size given by its value, an
        offset that is a loop's step by that `index` value), its layout
        composed with `buffer`'s (row-major, or a slab's strided one). A
        stride that a dynamic dim enters is dynamic in the view's layout
        (`?`), and so is an offset along it or one that is not a constant;
        the LLVM lowering computes them at run time."""
        memref_type = buffer.type
        assert isinstance(memref_type, MemRefType)
        shape = memref_type.get_shape()
        whole: Sequence[int | None]
        base: int | None = 0
        if isinstance(memref_type.layout, StridedLayoutAttr):
            whole, base = memref_type.layout.get_strides(), memref_type.layout.get_offset()
        else:
            whole = [None if DYNAMIC_INDEX in shape[i + 1 :] else math.prod(shape[i + 1 :])
                     for i in range(len(shape))]  # fmt: skip
        view_strides = [None if w is None else w * s for w, s in zip(whole, strides)]
        moved = [(o, w) for o, w in zip(offsets, whole) if not isinstance(o, int) or o != 0]
        offset = (None if base is None or any(w is None or not isinstance(o, int) for o, w in moved)
                  else base + sum(int(o) * w for o, w in moved if w is not None))  # fmt: skip
        layout = StridedLayoutAttr(view_strides, offset)
        static = [DYNAMIC_INDEX if isinstance(d, SymExpr) else d for d in sizes]
        static_offsets = [o if isinstance(o, int) else DYNAMIC_INDEX for o in offsets]
        dynamic = [o if isinstance(o, SSAValue) else self.sizes.size(o)
                   for o in offsets if not isinstance(o, int)]  # fmt: skip
        view_type = MemRefType(memref_type.element_type, static, layout)
        size_values = self.sizes.sizes(sizes)
        # The static lists and the operand counts set the op's properties.
        key = (memref.SubviewOp, tuple(static_offsets), tuple(static), tuple(strides),
               len(dynamic), len(size_values))  # fmt: skip
        view = quick(lambda: memref.SubviewOp(buffer, dynamic, size_values, [], static_offsets,
                                              static, strides, view_type),
                     key, memref.SubviewOp, (buffer, *dynamic, *size_values), (view_type,))  # fmt: skip
        return self.nest.insert(view).results[0]

    def _destination(self, init: SSAValue, result: SSAValue) -> SSAValue:
        """A buffer for `result` that starts with `init`'s contents: `init`'s own
        buffer when nothing else uses `init`, else a copy."""
        pending = self.buffers[init]
        if self.uses.get(init, 0) == 1:
            if isinstance(pending, Pending):
                target = self._new_buffer(result)
                if pending.fill is not None:
                    self._fill(target, pending.fill)
                return target
            if (not isinstance(pending.owner, Block) and not self._is_view_or_weight(pending)
                    and pending not in self.shared):  # fmt: skip
                if result in self.outputs:
                    self._copy(pending, self.outputs[result])
                    return self.outputs[result]
                return pending
        target = self._new_buffer(result)
        if isinstance(pending, Pending):
            if pending.fill is not None:
                self._fill(target, pending.fill)
        else:
            self._copy(pending, target)
        return target

    @staticmethod
    def _is_view_or_weight(buffer: SSAValue) -> bool:
        return isinstance(buffer.owner, memref.ReinterpretCastOp | loop.WeightOp)

    # ----------------------------------------------------------------- ops
    def _lower(self, op: Operation) -> None:
        self.nest.location = op.location
        match op:
            case ConstantOp():
                weight = self.nest.insert(
                    loop.WeightOp(dense_constant(op), memref_of(op.results[0].type))
                )
                weight.results[0].name_hint = op.results[0].name_hint
                self.buffers[op.results[0]] = weight.results[0]
            case arith.ConstantOp() | arith.BitcastOp():
                pass  # a fill value or a reshape's shape: read where it is used
            case (tensor.DimOp() | arith.MuliOp() | arith.AddiOp() | arith.FloorDivSIOp()
                  | arith.IndexCastOp()):  # fmt: skip
                pass  # a symbolic size: the types say it (`self.sizes` makes it here)
            case tensor.FromElementsOp():
                self._from_elements(op)
            case tensor.EmptyOp():
                self.buffers[op.tensor] = Pending(op.tensor.type, None)  # type: ignore[arg-type]
            case linalg.FillOp():
                value = scalar_constant(
                    op.inputs[0], "convert-tensor-to-loop: the value of linalg.fill"
                )
                element = op.res[0].type.element_type  # type: ignore[attr-defined]
                if value.type != element:
                    raise DiagnosticException(
                        f"convert-tensor-to-loop: linalg.fill of {value.type} into {element}"
                    )
                self.buffers[op.res[0]] = Pending(op.res[0].type, value)  # type: ignore[arg-type]
            case linalg.GenericOp() | linalg.MatmulOp() | linalg.Conv2DNchwFchwOp():
                self._structured(op)
            case tensor.ReshapeOp():
                self.buffers[op.result] = self._reshape(self._buffer(op.source), op.result.type)
            case tensor.CollapseShapeOp() | tensor.ExpandShapeOp():
                self.buffers[op.result] = self._reshape(self._buffer(op.src), op.result.type)
            case tensor.PadOp():
                self._pad(op)
            case tensor.ExtractSliceOp():
                self._extract_slice(op)
            case tensor.InsertSliceOp():
                self._insert_slice(op)
            case tensor.ConcatOp():
                self._concat(op)
            case GatherOp():
                self._gather(op)
            case ScatterOp():
                self._scatter(op)
            case loop.KernelOp():
                self._kernel(op)
            case scf.ForOp():
                self._for(op)
            case _:
                raise DiagnosticException(f"convert-tensor-to-loop: cannot bufferize '{op.name}'")

    def _kernel(self, op: loop.KernelOp) -> None:
        """A kernel on buffers holding what `op`'s ops bufferize to (see the
        module docstring)."""
        yielded = list(op.terminator.arguments)
        for value, result in zip(yielded, op.outs):
            inside = not isinstance(value.owner, Block) and value.owner.parent is op.body.block
            if inside and result in self.outputs and yielded.count(value) == 1:
                self.outputs[value] = self.outputs[result]
            if inside and result in self.slabs and yielded.count(value) == 1:
                self.slabs[value] = self.slabs[result]
        materialised = len(self.materialised)
        kernel = self.nest.insert(loop.KernelOp(kind=op.kind))
        around, self.nest = (
            self.nest,
            LoopNestBuilder(Builder(InsertPoint.before(kernel.terminator))),
        )
        for inner in op.body.block.ops:
            if inner is not op.terminator:
                self._lower(inner)
        for value, result in zip(yielded, op.outs):
            self.buffers[result] = self._buffer(value)
        self.nest = around
        for value, empty in self.materialised[materialised:]:
            # An empty or filled tensor from before the kernel, materialised in
            # it: a use after the kernel materialises its own.
            buffer = self.buffers[value]
            assert not isinstance(buffer, Pending)
            if not op.is_ancestor(value.owner) and kernel.is_ancestor(buffer.owner):
                self.buffers[value] = empty
        del self.materialised[materialised:]
        for result in op.outs:
            _hoist_buffer(self.buffers[result], kernel)  # type: ignore[arg-type]

    def _for(self, op: scf.ForOp) -> None:
        """An `scf.for` on buffers without iter_args: each carried value lives
        in one buffer for the whole loop (starting with its init's contents),
        which the body reads and, at its end, gets the yielded value (copied
        unless it was computed in place). The body's allocs go in front of
        the outermost loop, so that `loop-plan-memory` places them."""
        carried = [self._destination(init, result) for init, result in zip(op.iter_args, op.res)]
        materialised = len(self.materialised)
        for result, buffer in zip(op.res, carried):
            self.buffers[result] = buffer
        where = "convert-tensor-to-loop: a bound of scf.for"
        bounds = [self.sizes.size(symbolic_size(v, where)) for v in (op.lb, op.ub, op.step)]
        body = Block(arg_types=[INDEX])
        body.add_op(scf.YieldOp())
        on_buffers = self.nest.insert(scf.ForOp(*bounds, [], body))
        old = op.body.block
        self.steps[old.args[0]] = body.args[0]
        body.args[0].name_hint = old.args[0].name_hint
        for arg, buffer in zip(old.args[1:], carried):
            self.buffers[arg] = buffer
        around, allocs = self.nest, self.allocs
        self.allocs = allocs or LoopNestBuilder(Builder(InsertPoint.before(on_buffers)))
        self.nest = LoopNestBuilder(Builder(InsertPoint.before(body.last_op)))  # type: ignore[arg-type]
        yielded = old.last_op
        assert isinstance(yielded, scf.YieldOp)
        for inner in old.ops:
            if inner is not yielded:
                self._lower(inner)
        for value, buffer in zip(yielded.arguments, carried):
            source = self._buffer(value)
            if source is not buffer:
                if source in carried:
                    raise DiagnosticException(
                        "convert-tensor-to-loop: scf.for yields one carried value in "
                        "another's place"
                    )
                self._copy(source, buffer)
        self.nest, self.allocs = around, allocs
        for value, empty in self.materialised[materialised:]:
            if not op.is_ancestor(value.owner):  # type: ignore[arg-type]
                self.buffers[value] = empty  # filled in the body: a use after it fills its own
        del self.materialised[materialised:]

    def _structured(self, op: linalg.GenericOp | linalg.MatmulOp | linalg.Conv2DNchwFchwOp) -> None:
        """The same op on buffers: its inputs' buffers, its results' buffers
        as outputs (starting with the `outs` contents), no results."""
        schedule = schedule_of(op)
        if schedule is not None:  # report a misfit with the tensor-level names
            verify_schedule(schedule, iteration_space(op), describe(op))
        if isinstance(op, linalg.GenericOp):
            outside = outside_value(op)
            if outside is not None:
                name = f"%{outside.name_hint}" if outside.name_hint else "a value"
                raise DiagnosticException(
                    f"convert-tensor-to-loop: the body of a linalg.generic uses {name}, "
                    "defined outside it"
                )
        results = list(op.results)
        destinations = [
            self._destination(init, result) for init, result in zip(op.outputs, results)
        ]
        for result, buffer in zip(results, destinations):
            self.buffers[result] = buffer
        read = [bool(arg.uses) for arg in op.body.block.args]
        inputs = [self._input(value, read[i]) for i, value in enumerate(op.inputs)]
        on_buffers = type(op).create(
            operands=[*inputs, *destinations],
            result_types=[],
            properties=dict(op.properties),
            attributes=dict(op.attributes),
            regions=[op.body.clone()],
        )
        self.nest.insert(on_buffers)

    def _input(self, value: SSAValue, read: bool) -> SSAValue:
        """The buffer an op reads `value` from; for a value it never reads (it
        only gives dims their extent), any memref of its shape, without
        materialising a pending fill."""
        if read or not isinstance(self.buffers[value], Pending):
            return self._buffer(value)
        return self._alloc(value.type)

    def _reshape(self, source: SSAValue, result_type: Attribute) -> SSAValue:
        """`source` (contiguous, offset 0) seen as a tensor of `result_type`: a
        reinterpret cast, its symbolic sizes and strides given by their values."""
        assert isinstance(result_type, TensorType)
        shape = symbolic_shape(result_type)
        strides = _row_major_strides(shape)
        view = memref.ReinterpretCastOp(
            source, [], self.sizes.sizes(shape), self.sizes.sizes(strides), [0],
            [DYNAMIC_INDEX if isinstance(d, SymExpr) else d for d in shape],
            [DYNAMIC_INDEX if isinstance(s, SymExpr) else s for s in strides],
            memref_of(result_type),
        )  # fmt: skip
        return self.nest.insert(view).results[0]

    def _pad(self, op: tensor.PadOp) -> None:
        """The pad value in the border, then the source copied into the
        interior. With static shapes the border is filled slab by slab: along
        each padded dim d, the part before and the part after the source,
        within the source's extent in the dims before d and whole in those
        after (so no element is written twice); else the whole buffer."""
        yielded = op.region.block.last_op
        assert isinstance(yielded, tensor.YieldOp)
        value = scalar_constant(
            yielded.arguments[0], "convert-tensor-to-loop: the value tensor.pad yields"
        )
        target = self._new_buffer(op.result)
        self.buffers[op.result] = target
        shape = symbolic_shape(op.source.type)
        low = op.static_low.get_values()
        rank = len(shape)
        padded = symbolic_shape(op.result.type)
        if all(isinstance(d, int) for d in (*shape, *padded)):
            for d in range(rank):
                for start, end in ((0, low[d]), (low[d] + shape[d], padded[d])):
                    if end > start:  # type: ignore[operator]
                        offsets = [*low[:d], start, *[0] * (rank - d - 1)]
                        sizes = [*shape[:d], end - start, *padded[d + 1 :]]  # type: ignore[operator]
                        self._fill(self._subview(target, offsets, sizes, [1] * rank), value)
        else:
            self._fill(target, value)
        source = self._buffer(op.source)
        self._copy(source, self._subview(target, low, shape, [1] * rank))

    @staticmethod
    def _check_slice(
        op: tensor.ExtractSliceOp | tensor.InsertSliceOp, whole: Sequence[int]
    ) -> None:
        """Static offsets, sizes and strides inside `whole` (upstream's verifier
        does not check it, and generated code must never leave a buffer)."""
        offsets = op.static_offsets.get_values()
        sizes, strides = op.static_sizes.get_values(), op.static_strides.get_values()
        for offset, size, stride, extent in zip(offsets, sizes, strides, whole):
            if DYNAMIC_INDEX in (offset, size) or extent < 0:
                continue  # run-time values: shape inference proved them inside
            if offset < 0 or stride < 1 or (size > 0 and offset + (size - 1) * stride >= extent):
                raise DiagnosticException(
                    f"convert-tensor-to-loop: {op.name} {list(offsets)} {list(sizes)} "
                    f"{list(strides)} leaves {tuple(whole)}"
                )

    def _offsets(self, op: tensor.ExtractSliceOp | tensor.InsertSliceOp) -> list[Dim | SSAValue]:
        """The op's offsets, a dynamic one as its expression over the symbols
        or as the step of the loop around it."""
        dynamic = iter(op.offsets)

        def offset(value: SSAValue) -> Dim | SSAValue:
            if value in self.steps:
                return self.steps[value]
            return symbolic_size(value, f"convert-tensor-to-loop: an offset of {op.name}")

        return [offset(next(dynamic)) if o == DYNAMIC_INDEX else o
                for o in op.static_offsets.get_values()]  # fmt: skip

    def _extract_slice(self, op: tensor.ExtractSliceOp) -> None:
        self._check_slice(op, op.source.type.get_shape())  # type: ignore[attr-defined]
        source = self._buffer(op.source)
        target = self._new_buffer(op.result)
        self.buffers[op.result] = target
        part = self._subview(source, self._offsets(op), symbolic_shape(op.result.type),
                             op.static_strides.get_values())  # fmt: skip
        self._copy(part, target)

    def _insert_slice(self, op: tensor.InsertSliceOp) -> None:
        self._check_slice(op, op.dest.type.get_shape())  # type: ignore[attr-defined]
        target = self._destination(op.dest, op.result)
        self.buffers[op.result] = target
        source = self._buffer(op.source)
        part = self._subview(target, self._offsets(op), symbolic_shape(op.source.type),
                             op.static_strides.get_values())  # fmt: skip
        self._copy(source, part)

    def _concat(self, op: tensor.ConcatOp) -> None:
        """Each input copied into its slab of one buffer along `dim`, but
        those computed there already (`_slabs`)."""
        target = self.concat_buffers.pop(op, None) or self._new_buffer(op.result)
        self.buffers[op.result] = target
        dim, offset = op.dim.value.data, 0
        for value in op.inputs:
            source = self._buffer(value)
            shape = symbolic_shape(value.type)
            offsets: list[Dim] = [offset if d == dim else 0 for d in range(len(shape))]
            slab = self.slab_views.get(source)
            if slab is None or slab.concat is not op or list(slab.offsets) != offsets:
                self._copy(source, self._subview(target, offsets, shape, [1] * len(shape)))
            offset = offset + shape[dim]

    def _gather(self, op: GatherOp) -> None:
        data, indices = self._buffer(op.data), self._buffer(op.indices)
        result = op.destination
        target = self._new_buffer(result)
        self.buffers[result] = target
        self.nest.insert(GatherOp.on_buffers(data, indices, target, op.maps()))

    def _from_elements(self, op: tensor.FromElementsOp) -> None:
        """A buffer of the elements (the symbolic dims of a Shape, used as
        data), each stored where the function starts."""
        target = self._new_buffer(op.result)
        self.buffers[op.result] = target
        for position, element in enumerate(op.elements):
            self.nest.store(self._scalar(element), target, [self.nest.index(position)])

    def _scalar(self, value: SSAValue) -> SSAValue:
        """The loop-level value of a scalar computed outside any body: the
        tensor level's ops again, a `tensor.dim` of a symbolic size the
        function's value of it (`self.sizes`, read once at the top), of
        another size read from the buffer (its size where static)."""
        owner = value.owner
        if isinstance(owner, tensor.DimOp):
            index = constant_index(owner.index)
            assert index is not None, "a tensor.dim of a constant dim"
            dim = symbolic_shape(owner.source.type)[index]  # type: ignore[arg-type]
            if isinstance(dim, SymExpr):
                return self.sizes.size(dim)
            return self.nest.bound(buffer_size(self._buffer(owner.source), index,
                                               self.nest.builder))  # fmt: skip
        if not isinstance(owner, arith.ConstantOp | arith.IndexCastOp | arith.MuliOp
                          | arith.AddiOp | arith.FloorDivSIOp):  # fmt: skip
            raise DiagnosticException(
                f"{PASS_NAME}: tensor.from_elements of a value it cannot compute here "
                f"({getattr(owner, 'name', 'a block argument')})"
            )
        clone = owner.clone(value_mapper={v: self._scalar(v) for v in owner.operands})
        return self.nest.insert(clone).results[0]

    def _scatter(self, op: ScatterOp) -> None:
        """The scatter in place on its result's buffer, which starts with the
        target's contents (`_destination`)."""
        assert op.result is not None
        updates, indices = self._buffer(op.updates), self._buffer(op.indices)
        target = self._destination(op.target, op.result)
        self.buffers[op.result] = target
        self.nest.insert(ScatterOp.build_scatter(updates, indices, target, op.maps(),
                                                 op.combine.clone()))  # fmt: skip

    def _return(self, op: ReturnOp, output_args: Sequence[SSAValue]) -> None:
        for value, out in zip(op.arguments, output_args):
            # A copy into an output buffer is named after what computed the value.
            owner = value.owner
            self.nest.location = owner.location if isinstance(owner, Operation) else op.location
            buffer = self._buffer(value)
            if buffer is not out:
                self._copy(buffer, out)
        self.nest.location = op.location
        self.nest.insert(ReturnOp())


class ConvertTensorToLoopPass(ModulePass):
    """Bufferizes tensor-level functions (`linalg`, `tensor`, `ember_linalg`)
    into structured ops on memrefs (`loop-generate` makes their loops)."""

    name = "convert-tensor-to-loop"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for func in list(op.walk()):
            if isinstance(func, FuncOp) and not func.is_declaration:
                FunctionBufferizer(func).run()


__all__ = ["ON_BUFFERS", "ConvertTensorToLoopPass", "FunctionBufferizer"]
