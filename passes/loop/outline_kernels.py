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

from io import StringIO

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import ModuleOp, SymbolRefAttr, UnitAttr
from xdsl.dialects.func import CallOp, FuncOp, ReturnOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.printer import Printer
from xdsl.rewriter import Rewriter

from ember.dialects.loop import KERNEL_ATTR, KernelOp
from ember.passes.loop.form_kernels import form_kernels


def _captured(kernel: KernelOp) -> dict[SSAValue, list[tuple[Operation, int]]]:
    """Values the kernel uses but does not define, in first-use order, each
    with its uses in the kernel (operation, operand index): rewiring those
    uses alone keeps outlining linear, where a value used by every kernel
    (the model input of a wide graph) has uses all over the function."""
    captured: dict[SSAValue, list[tuple[Operation, int]]] = {}
    for op in kernel.body.walk():
        for index, value in enumerate(op.operands):
            owner = value.owner
            if not kernel.is_ancestor(owner.parent_op() if isinstance(owner, Block) else owner):  # type: ignore[arg-type]
                captured.setdefault(value, []).append((op, index))
    return captured


def _kernel_key(kernel: FuncOp) -> str:
    """The kernel's text without its name: equal keys compute the same thing."""
    stream = StringIO()
    Printer(stream=stream).print_region(kernel.body)
    return f"{kernel.function_type}{stream.getvalue()}"


def outline_function(func: FuncOp, module: ModuleOp, kernels: dict[str, str]) -> None:
    """Outlines `func`'s kernels; `kernels` maps keys to kernel function names."""
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
        # Names would make equal kernels print differently: drop them.
        for op in block.walk():
            for value in [*op.results,
                          *(a for r in op.regions for b in r.blocks for a in b.args)]:  # fmt: skip
                value.name_hint = None
        for arg in block.args:
            arg.name_hint = None
        function = FuncOp(f"{entry}_kernel{len(kernels)}", ([v.type for v in captured], []),
                          Region(block), visibility="private")  # fmt: skip
        function.attributes[KERNEL_ATTR] = UnitAttr()
        key = _kernel_key(function)
        if key not in kernels:
            kernels[key] = function.sym_name.data
            module.body.block.add_op(function)
        Rewriter.replace_op(kernel, CallOp(SymbolRefAttr(kernels[key]), list(captured), []))


class OutlineKernelsPass(ModulePass):
    """Moves each `loop.kernel` (and each loop nest outside one) into its own
    (shared) kernel function."""

    name = "loop-outline-kernels"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kernels: dict[str, str] = {}
        for func in [
            f for f in op.ops if isinstance(f, FuncOp) and KERNEL_ATTR not in f.attributes
        ]:
            if not func.is_declaration:
                outline_function(func, op, kernels)


__all__ = ["KERNEL_ATTR", "OutlineKernelsPass"]
