"""The launch plan: what a host program does to run a model compiled for
the GPU, read off the host function `convert-loop-to-gpu` leaves.

A model's host function takes its inputs, its outputs, the weights blob and
the arena (`memref<Nxi8>`, marked `ember.weights` and `ember.arena`), and
does nothing but launch kernels in order on one stream. Each launch names
its kernel (a PTX `.entry` of that name), its grid and block sizes and its
arguments, each one of the function's: `input:I`, `output:I`, `weights` or
`arena`. The arena is scratch memory the plan's kernels share
(`arena_bytes`), the weights one blob uploaded once (`weights_bytes`, from
`NAME.weights`).

A kernel's parameters are, argument by argument, the buffer's device
pointer, then one int64 per `?` of the buffer's type, its size there
(`convert-gpu-to-nvvm`'s ABI): `buffers` gives each role's dims, and
`dynamic` the positions of its `?`s. For a model with symbolic dims
(`N`, `S`), sizes, grid sizes and the arena's bytes are expressions over
the symbols (`Dim`s: ints or `SymExpr`s), which a host program evaluates
once the inputs' shapes bind the symbols; a static model's are ints.

`LaunchPlan.to_json()` is the `launches` part of `ember compile --target
cuda`'s manifest; the runtime (`runtime.py`) follows the same plan.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from xdsl.dialects import arith, func, gpu, memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, IntegerAttr, MemRefType, ModuleOp, StringAttr
from xdsl.ir import BlockArgument, Operation, SSAValue

from ember.dialects.graph.dims import parse_dim
from ember.dialects.graph.symbolic import Dim, SymExpr
from ember.dialects.loop import ARENA_ARG, WEIGHTS_ARG, byte_size, marked_argument
from ember.dialects.loop_nests import constant_index
from ember.errors import CompileError


@dataclass(frozen=True)
class Launch:
    """One kernel launch: the kernel's name, its grid and block sizes (x, y,
    z) and its arguments (`input:I`, `output:I`, `weights`, `arena`)."""

    kernel: str
    grid: tuple[Dim, Dim, Dim]
    block: tuple[int, int, int]
    arguments: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"kernel": self.kernel, "grid": [_json(g) for g in self.grid],
                "block": list(self.block), "arguments": list(self.arguments)}  # fmt: skip


@dataclass(frozen=True)
class LaunchPlan:
    """The launches of one model, in order, and the buffers they share:
    each role's dims (`buffers`) and the positions of the sizes its kernel
    parameters carry (`dynamic`)."""

    launches: tuple[Launch, ...]
    weights_bytes: int
    arena_bytes: Dim
    buffers: dict[str, tuple[Dim, ...]] = field(default_factory=dict)
    dynamic: dict[str, tuple[int, ...]] = field(default_factory=dict)

    @property
    def symbolic(self) -> bool:
        """Whether any size is an expression over the model's symbols."""
        sizes = [self.arena_bytes, *(g for launch in self.launches for g in launch.grid)]
        return any(isinstance(size, SymExpr) for size in sizes)

    def passed(self, role: str) -> tuple[int, ...]:
        """The axes of `role`'s dims whose sizes its kernel parameters carry,
        each an int64 after the buffer's pointer (none for a static buffer)."""
        return self.dynamic.get(role, ())

    def bind(self, sizes: Mapping[str, int]) -> BoundPlan:
        """The plan's sizes for one binding of its symbols (every symbol its
        sizes mention bound; a static plan needs none)."""
        grids = tuple((evaluated(x, sizes), evaluated(y, sizes), evaluated(z, sizes))
                      for x, y, z in (launch.grid for launch in self.launches))  # fmt: skip
        passed = {role: tuple(evaluated(self.buffers[role][axis], sizes)
                              for axis in self.passed(role))
                  for role in self.buffers}  # fmt: skip
        return BoundPlan(grids, evaluated(self.arena_bytes, sizes), passed)

    def to_json(self) -> dict[str, Any]:
        return {"weights_bytes": self.weights_bytes, "arena_bytes": _json(self.arena_bytes),
                "buffers": {role: {"dims": [_json(d) for d in dims],
                                   "sizes_passed": list(self.dynamic.get(role, ()))}
                            for role, dims in self.buffers.items()},
                "launches": [launch.to_json() for launch in self.launches]}  # fmt: skip


@dataclass(frozen=True)
class BoundPlan:
    """A plan's sizes for one binding of the symbols: each launch's grid,
    the arena's bytes and, per role, the sizes its kernel parameters carry
    (`LaunchPlan.passed`'s axes, in order)."""

    grids: tuple[tuple[int, int, int], ...]
    arena_bytes: int
    passed: dict[str, tuple[int, ...]]


def evaluated(size: Dim, sizes: Mapping[str, int]) -> int:
    """`size` for these sizes of the symbols (an int is itself)."""
    return size.evaluate(sizes) if isinstance(size, SymExpr) else size


def _json(size: Dim) -> int | str:
    return size if isinstance(size, int) else str(size)


def _roles(function: func.FuncOp, inputs: int) -> dict[SSAValue, str]:
    """Each argument of the host function by its role in a launch."""
    weights = marked_argument(function, WEIGHTS_ARG)
    arena = marked_argument(function, ARENA_ARG)
    roles: dict[SSAValue, str] = {}
    buffers = [a for a in function.args if a is not weights and a is not arena]
    for position, argument in enumerate(buffers):
        roles[argument] = (
            f"input:{position}" if position < inputs else f"output:{position - inputs}"
        )
    if weights is not None:
        roles[weights] = "weights"
    if arena is not None:
        roles[arena] = "arena"
    return roles


_ARITH: dict[type[Operation], Any] = {
    arith.AddiOp: operator.add, arith.SubiOp: operator.sub, arith.MuliOp: operator.mul,
    arith.DivUIOp: operator.floordiv, arith.FloorDivSIOp: operator.floordiv,
    arith.DivSIOp: operator.floordiv, arith.RemUIOp: operator.mod, arith.RemSIOp: operator.mod,
}  # fmt: skip
"""The host's index arithmetic, on sizes that may be expressions (sizes are
never negative, so the signed and unsigned divisions agree)."""


class _Sizes:
    """The host function's `index` values as sizes over the model's
    symbols: constants, the dims of its buffer arguments (`memref.dim`) and
    arithmetic on them."""

    def __init__(self, buffers: dict[SSAValue, tuple[Dim, ...]]):
        self.buffers = buffers
        self.values: dict[SSAValue, Dim] = {}

    def __call__(self, value: SSAValue, what: str) -> Dim:
        if value in self.values:
            return self.values[value]
        op = value.owner
        size: Dim | None = None
        if isinstance(op, arith.ConstantOp):
            size = constant_index(value)
        elif isinstance(op, memref.DimOp):
            axis = constant_index(op.index)
            dims = self.buffers.get(op.source)
            size = dims[axis] if dims is not None and axis is not None else None
        elif type(op) in _ARITH:
            size = _ARITH[type(op)](self(op.operands[0], what), self(op.operands[1], what))  # type: ignore[union-attr]
        if size is None:
            raise CompileError(f"the launch plan cannot say the {what}: computed by "
                               f"{getattr(op, 'name', 'an argument')} on the host")  # fmt: skip
        self.values[value] = size
        return size


def launch_plan(module: ModuleOp, entry: str, inputs: int,
                dims: dict[str, tuple[Dim, ...]] | None = None) -> LaunchPlan:  # fmt: skip
    """The plan of the host function `entry` of a module after
    `convert-loop-to-gpu`, whose first `inputs` buffer arguments are inputs
    (a `CompileError` for a host function that does more than launch).
    `dims` gives the inputs' and outputs' dims by role where they are
    symbolic (`input:0` -> (N, 784)); a static buffer's come from its type."""
    [function] = [f for f in module.ops if isinstance(f, func.FuncOp) and f.sym_name.data == entry]
    roles = _roles(function, inputs)
    arena_bytes = _arena_bytes(function)
    buffers: dict[str, tuple[Dim, ...]] = {}
    dynamic: dict[str, tuple[int, ...]] = {}
    for argument, role in roles.items():
        argument_type = argument.type
        assert isinstance(argument_type, MemRefType)
        shape = argument_type.get_shape()
        given = (arena_bytes,) if role == "arena" else (dims or {}).get(role)
        buffers[role] = tuple(given) if given else tuple(shape)
        dynamic[role] = tuple(i for i, d in enumerate(shape) if d == DYNAMIC_INDEX)
    sizes = _Sizes({argument: buffers[role] for argument, role in roles.items()})
    launches = []
    for op in function.body.block.ops:
        if isinstance(op, gpu.LaunchFuncOp):
            grid = tuple(sizes(v, "grid sizes") for v in
                         (op.gridSizeX, op.gridSizeY, op.gridSizeZ))  # fmt: skip
            block = tuple(sizes(v, "block sizes") for v in
                          (op.blockSizeX, op.blockSizeY, op.blockSizeZ))  # fmt: skip
            if not all(isinstance(b, int) for b in block):
                raise CompileError(
                    f"a launch of {op.kernel} has block sizes known only at run time"
                )
            arguments = []
            for operand in op.kernelOperands:
                if not isinstance(operand, BlockArgument) or operand not in roles:
                    raise CompileError(
                        f"a launch of {op.kernel} passes a value computed on the host"
                    )
                arguments.append(roles[operand])
            launches.append(Launch(op.kernel.nested_references.data[-1].data, grid, block,  # type: ignore[arg-type]
                                   tuple(arguments)))  # fmt: skip
        elif not _host_bookkeeping(op):
            raise CompileError(f"the host function does more than launch kernels: {op.name}")
    weights = marked_argument(function, WEIGHTS_ARG)
    return LaunchPlan(tuple(launches), byte_size(weights.type) if weights else 0, arena_bytes,
                      buffers, dynamic)  # fmt: skip


def _arena_bytes(function: func.FuncOp) -> Dim:
    """The arena's size: the function's `loop.arena_bytes` (a formula over
    the symbols for a generic version), else its argument's static size."""
    planned = function.attributes.get("loop.arena_bytes")
    if isinstance(planned, StringAttr):
        return parse_dim(planned.data)
    if isinstance(planned, IntegerAttr):
        return planned.value.data
    arena = marked_argument(function, ARENA_ARG)
    return byte_size(arena.type) if arena is not None else 0


def _host_bookkeeping(op: Operation) -> bool:
    """Ops a host function may keep that do nothing on the device: the
    launches' sizes (constants, the buffers' dims and index arithmetic on
    them) and the return."""
    return isinstance(op, arith.ConstantOp | memref.DimOp | func.ReturnOp) or type(op) in _ARITH


__all__ = ["BoundPlan", "Launch", "LaunchPlan", "evaluated", "launch_plan"]
