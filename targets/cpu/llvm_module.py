"""The `llvm`-dialect module as an llvmlite module, with the CPU's linkage.

xDSL's translator (`convert_module`) gives the IR; this adds what the
dialect says but the translator drops, or cannot say: functions with
internal linkage (parallel tasks) stay internal, kernels (`ember.kernel`)
become internal and never inlined, and a packed entry function's buffer
array is `noalias` and not captured, as the ABI of `convert-loop-to-llvm`
promises.
"""

from __future__ import annotations

from llvmlite import ir as llvmir
from xdsl.backend.llvm.convert import convert_module
from xdsl.dialects import llvm
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import DiagnosticException

from ember.lowering.loop_to_llvm import PACKED_BUFFERS_ATTR, PASS
from ember.passes.loop.outline_kernels import KERNEL_ATTR


def to_llvmlite(module: ModuleOp) -> llvmir.Module:
    """The llvmlite module (host triple) of a module that went through `convert-loop-to-llvm`."""
    leftover = {op.name for op in module.ops if not isinstance(op, llvm.FuncOp)}
    if leftover:
        raise DiagnosticException(f"to_llvmlite: run {PASS} first (found {sorted(leftover)})")
    marked = {marker: {op.sym_name.data for op in module.ops
                       if isinstance(op, llvm.FuncOp) and marker in op.attributes}
              for marker in (KERNEL_ATTR, PACKED_BUFFERS_ATTR)}  # fmt: skip
    internal = {op.sym_name.data for op in module.ops
                if isinstance(op, llvm.FuncOp) and op.linkage.linkage.data == "internal"}  # fmt: skip
    llvm_module = convert_module(module, fallback_target_triple=None)
    for function in llvm_module.functions:
        if function.name in internal:
            function.linkage = "internal"
        if function.name in marked[KERNEL_ATTR]:
            # Kept out of line: LLVM optimises each kernel on its own, in linear time.
            function.linkage = "internal"
            function.attributes.add("noinline")
        if function.name in marked[PACKED_BUFFERS_ATTR]:
            # The ABI's promise: the array is only read and overlaps no buffer,
            # so LLVM may keep a pointer loaded from it across stores.
            for attribute in ("noalias", "captures(none)"):
                function.args[0].add_attribute(attribute)
    return llvm_module
