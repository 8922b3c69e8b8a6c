"""`loop-outline-kernels`: each top-level loop nest becomes its own function.

The entry function of a model is a long list of loop nests. LLVM's
optimisations grow faster than linearly with function size, so one function
for a whole DenseNet takes minutes to compile. This pass moves each
top-level loop (`scf.for`/`scf.parallel`) into a private `func.func` that
takes the buffers (and any other values) the nest uses as arguments, and
calls it from the entry function; the `arith.constant`s it uses (its bounds)
are copied into the kernel instead.
Nests that are the same computation on other buffers (same loops, same
shapes, same body) share one kernel function, so repeated layers are
compiled once. Consecutive nests of one `ember.fusion_group` (what
`loop-fuse` could not merge) become one kernel together. Kernels are marked
`ember.kernel` (the LLVM lowering keeps them out of line). Functions with no
loops are left alone.
"""

from __future__ import annotations

from io import StringIO

from xdsl.context import Context
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import ModuleOp, StringAttr, SymbolRefAttr, UnitAttr
from xdsl.dialects.func import CallOp, FuncOp, ReturnOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.printer import Printer

from ember.dialects.ember_linalg import FUSION_GROUP
from ember.dialects.loop_nests import Loop, is_loop

KERNEL_ATTR = "ember.kernel"


def _captured(nests: list[Loop]) -> dict[SSAValue, list[tuple[Operation, int]]]:
    """Values the nests use but do not define, in first-use order, each with
    its uses in the nests (operation, operand index): rewiring those uses
    alone keeps outlining linear, where a value used by every kernel (the
    model input of a wide graph) has uses all over the function."""
    inside = {id(op) for nest in nests for op in nest.walk()}
    captured: dict[SSAValue, list[tuple[Operation, int]]] = {}
    for op in (op for nest in nests for op in nest.walk()):
        for index, value in enumerate(op.operands):
            owner = value.owner
            defined_inside = (
                id(owner.parent_op()) in inside if isinstance(owner, Block) else id(owner) in inside
            )
            if not defined_inside:
                captured.setdefault(value, []).append((op, index))
    return captured


def _kernel_key(kernel: FuncOp) -> str:
    """The kernel's text without its name: equal keys compute the same thing."""
    stream = StringIO()
    Printer(stream=stream).print_region(kernel.body)
    return f"{kernel.function_type}{stream.getvalue()}"


def kernel_units(func: FuncOp) -> list[list[Loop]]:
    """The top-level nests of `func`, grouped into kernels: consecutive nests of
    one fusion group form one unit, every other nest is a unit of its own. A
    unit moves its nests to its last nest's place, so an op between them that
    touches memory (the store filling a 0-d buffer) ends the unit."""
    units: list[list[Loop]] = []
    previous_group = None
    for op in func.body.block.ops:
        if not is_loop(op):
            if op.regions or isinstance(op, memref.LoadOp | memref.StoreOp | CallOp):
                previous_group = None
            continue
        group = op.attributes.get(FUSION_GROUP)
        if group is not None and group == previous_group:
            units[-1].append(op)  # type: ignore[arg-type]
        else:
            units.append([op])  # type: ignore[list-item]
        previous_group = group
    return units


def outline_function(func: FuncOp, module: ModuleOp, kernels: dict[str, str]) -> None:
    """Outlines `func`'s top-level nests; `kernels` maps keys to kernel names."""
    entry = func.sym_name.data
    for unit in kernel_units(func):
        captured = _captured(unit)
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
            if not value.uses:  # the constant served these nests alone
                value.owner.detach()  # type: ignore[union-attr]
                value.owner.erase()  # type: ignore[union-attr]
        call = CallOp("", list(captured), [])
        # At the last nest: every value the unit uses is defined before it, and
        # what lies between the nests (allocs, views, weights) touches no memory.
        func.body.block.insert_op_before(call, unit[-1])
        for nest in unit:
            nest.detach()
            block.add_op(nest)
        block.add_op(ReturnOp())
        for uses, arg in zip(captured.values(), block.args, strict=True):
            for user, index in uses:
                user.operands[index] = arg
        # Names would make equal kernels print differently: drop them.
        for arg in block.args:
            arg.name_hint = None
        for constant in list(block.ops)[: len(constants)]:
            constant.results[0].name_hint = None
        for nest in unit:
            nest.attributes.pop(FUSION_GROUP, None)
            for op in nest.walk():
                for value in [*op.results,
                              *(a for r in op.regions for b in r.blocks for a in b.args)]:  # fmt: skip
                    value.name_hint = None
        kernel = FuncOp(f"{entry}_kernel{len(kernels)}", ([v.type for v in captured], []),
                        Region(block), visibility="private")  # fmt: skip
        kernel.attributes[KERNEL_ATTR] = UnitAttr()
        key = _kernel_key(kernel)
        if key not in kernels:
            kernels[key] = kernel.sym_name.data
            module.body.block.add_op(kernel)
        call.callee = SymbolRefAttr(kernels[key])


class OutlineKernelsPass(ModulePass):
    """Moves each top-level loop nest into its own (shared) kernel function."""

    name = "loop-outline-kernels"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kernels: dict[str, str] = {}
        for func in [
            f for f in op.ops if isinstance(f, FuncOp) and KERNEL_ATTR not in f.attributes
        ]:
            if not func.is_declaration:
                outline_function(func, op, kernels)


__all__ = ["KERNEL_ATTR", "OutlineKernelsPass", "StringAttr"]
