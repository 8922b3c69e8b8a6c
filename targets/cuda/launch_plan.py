"""The launch plan: what a host program does to run a model compiled for
the GPU, read off the host function `convert-loop-to-gpu` leaves.

A model's host function takes its inputs, its outputs, the weights blob and
the arena (`memref<Nxi8>`, marked `ember.weights` and `ember.arena`), and
does nothing but launch kernels in order on one stream. Each launch names
its kernel (a PTX `.entry` of that name), its grid and block sizes and its
arguments, each one of the function's: `input:I`, `output:I`, `weights` or
`arena`, passed as device pointers (a static memref is one pointer in the
kernel's parameters, `convert-gpu-to-nvvm`'s ABI). The arena is scratch
memory the plan's kernels share (`arena_bytes`), the weights one blob
uploaded once (`weights_bytes`, from `NAME.weights`).

`LaunchPlan.to_json()` is the `launches` part of `ember compile --target
cuda`'s manifest; the runtime (`runtime.py`) follows the same plan.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from xdsl.dialects import arith, func, gpu
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import BlockArgument, Operation, SSAValue

from ember.dialects.loop import ARENA_ARG, WEIGHTS_ARG, byte_size, marked_argument
from ember.dialects.loop_nests import constant_index
from ember.errors import CompileError


@dataclass(frozen=True)
class Launch:
    """One kernel launch: the kernel's name, its grid and block sizes (x, y,
    z) and its arguments (`input:I`, `output:I`, `weights`, `arena`)."""

    kernel: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    arguments: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"kernel": self.kernel, "grid": list(self.grid), "block": list(self.block),
                "arguments": list(self.arguments)}  # fmt: skip


@dataclass(frozen=True)
class LaunchPlan:
    """The launches of one model, in order, and the buffers they share."""

    launches: tuple[Launch, ...]
    weights_bytes: int
    arena_bytes: int

    def to_json(self) -> dict[str, Any]:
        return {"weights_bytes": self.weights_bytes, "arena_bytes": self.arena_bytes,
                "launches": [launch.to_json() for launch in self.launches]}  # fmt: skip


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


def _size(value: SSAValue, what: str) -> int:
    size = constant_index(value)
    if size is None:
        raise CompileError(f"the launch plan needs static {what}, got one computed at run time")
    return size


def launch_plan(module: ModuleOp, entry: str, inputs: int) -> LaunchPlan:
    """The plan of the host function `entry` of a module after
    `convert-loop-to-gpu`, whose first `inputs` buffer arguments are inputs
    (a `CompileError` for a host function that does more than launch)."""
    [function] = [f for f in module.ops if isinstance(f, func.FuncOp) and f.sym_name.data == entry]
    roles = _roles(function, inputs)
    launches = []
    for op in function.body.block.ops:
        if isinstance(op, gpu.LaunchFuncOp):
            grid = tuple(_size(v, "grid sizes") for v in
                         (op.gridSizeX, op.gridSizeY, op.gridSizeZ))  # fmt: skip
            block = tuple(_size(v, "block sizes") for v in
                          (op.blockSizeX, op.blockSizeY, op.blockSizeZ))  # fmt: skip
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
    arena = marked_argument(function, ARENA_ARG)
    return LaunchPlan(tuple(launches), byte_size(weights.type) if weights else 0,
                      byte_size(arena.type) if arena else 0)  # fmt: skip


def _host_bookkeeping(op: Operation) -> bool:
    """Ops a host function may keep that do nothing on the device: the
    launches' sizes (constants) and the return."""
    return isinstance(op, arith.ConstantOp | func.ReturnOp)


__all__ = ["Launch", "LaunchPlan", "launch_plan"]
