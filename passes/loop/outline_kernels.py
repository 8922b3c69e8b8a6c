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
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import ModuleOp, SymbolRefAttr, UnitAttr
from xdsl.dialects.func import CallOp, FuncOp, ReturnOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from ember.dialects.loop import KERNEL_ATTR, KernelOp
from ember.passes.loop.form_kernels import form_kernels


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


class KernelTable:
    """The kernel functions made so far, found again by structure: a new
    kernel that is structurally equivalent to one of them (same ops, types,
    attributes and use-def shape; names do not count) calls that one. A cheap
    signature (type and op names) narrows the comparison to a few candidates;
    comparing structures instead of printed text keeps outlining linear in
    the size of the IR."""

    def __init__(self) -> None:
        self.by_signature: dict[tuple[object, ...], list[FuncOp]] = {}
        self.count = 0

    @staticmethod
    def _signature(kernel: FuncOp) -> tuple[object, ...]:
        return (kernel.function_type, *(op.name for op in kernel.body.walk()))

    def find_or_add(self, kernel: FuncOp, module: ModuleOp) -> str:
        """The name of the kernel function equivalent to `kernel`: an earlier
        one, or `kernel` itself, then added to `module`."""
        candidates = self.by_signature.setdefault(self._signature(kernel), [])
        for candidate in candidates:
            if candidate.body.is_structurally_equivalent(kernel.body):
                return candidate.sym_name.data
        candidates.append(kernel)
        self.count += 1
        module.body.block.add_op(kernel)
        return kernel.sym_name.data


def outline_function(func: FuncOp, module: ModuleOp, kernels: KernelTable) -> None:
    """Outlines `func`'s kernels, sharing the functions of `kernels`."""
    entry = func.sym_name.data
    form_kernels(func)
    for kernel in [op for op in func.body.block.ops if isinstance(op, KernelOp)]:
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
        # Names mean nothing in a kernel shared by several call sites: drop them.
        for op in block.walk():
            for value in [*op.results,
                          *(a for r in op.regions for b in r.blocks for a in b.args)]:  # fmt: skip
                value.name_hint = None
        for arg in block.args:
            arg.name_hint = None
        function = FuncOp(f"{entry}_kernel{kernels.count}", ([v.type for v in captured], []),
                          Region(block), visibility="private")  # fmt: skip
        function.attributes[KERNEL_ATTR] = UnitAttr()
        name = kernels.find_or_add(function, module)
        Rewriter.replace_op(kernel, CallOp(SymbolRefAttr(name), list(captured), []))


class OutlineKernelsPass(ModulePass):
    """Moves each `loop.kernel` (and each loop nest outside one) into its own
    (shared) kernel function."""

    name = "loop-outline-kernels"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kernels = KernelTable()
        for func in [
            f for f in op.ops if isinstance(f, FuncOp) and KERNEL_ATTR not in f.attributes
        ]:
            if not func.is_declaration:
                outline_function(func, op, kernels)


__all__ = ["KERNEL_ATTR", "OutlineKernelsPass"]
