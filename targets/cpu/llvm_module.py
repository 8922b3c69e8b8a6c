"""The `llvm`-dialect module as an llvmlite module, with the CPU's linkage.

xDSL's translator (`convert_module`, as `targets/llvm_translation.py` mends
it) gives the IR; this adds what the dialect says but the translator drops,
or cannot say: functions with internal linkage (parallel tasks) stay
internal, kernels (`ember.kernel`) become internal and never inlined, a
packed entry function's buffer array is `noalias` and not captured, as the
ABI of `convert-loop-to-llvm` promises, and a loop whose back edge carries
`loop.vector_width` (a schedule's `vector`) gets `!llvm.loop` metadata
asking the loop vectoriser for that width (`llvm.loop.vectorize.enable`,
`llvm.loop.vectorize.width`), one that carries `loop.no_unroll` (a
micro-kernel's reduction step) `llvm.loop.unroll.disable`.
"""

from __future__ import annotations

from llvmlite import ir as llvmir
from llvmlite.ir.values import MDValue
from xdsl.dialects import llvm
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.ir import Attribute
from xdsl.utils.exceptions import DiagnosticException

from ember.dialects.schedule import NO_UNROLL, VECTOR_WIDTH
from ember.lowering.loop_to_llvm import PACKED_BUFFERS_ATTR, PASS
from ember.lowering.loop_to_llvm.control_flow import LOOP_HINTS
from ember.passes.loop.outline_kernels import KERNEL_ATTR
from ember.targets.llvm_translation import convert_module


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
    hints = {op.sym_name.data: _loop_hints(op) for op in module.ops
             if isinstance(op, llvm.FuncOp)}  # fmt: skip
    llvm_module = convert_module(module, triple=None)
    for name, blocks in hints.items():
        function = llvm_module.get_global(name)
        for index, loop_hints in blocks.items():
            terminator = function.blocks[index].terminator
            terminator.set_metadata("llvm.loop", _loop_id(llvm_module, loop_hints))
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


def _loop_hints(function: llvm.FuncOp) -> dict[int, dict[str, Attribute]]:
    """Block number -> loop hints, for the blocks whose terminator (a loop's
    back edge) carries `loop.vector_width` (above 0) or `loop.no_unroll`.
    The translation makes one llvmlite block per block, in order, so the
    numbers find them again."""
    hints: dict[int, dict[str, Attribute]] = {}
    for index, block in enumerate(function.body.blocks):
        attributes = block.last_op.attributes if block.last_op else {}
        found = {name: attributes[name] for name in LOOP_HINTS if name in attributes}
        width = found.get(VECTOR_WIDTH)
        if isinstance(width, IntegerAttr) and width.value.data <= 0:
            del found[VECTOR_WIDTH]
        if found:
            hints[index] = found
    return hints


def _loop_id(module: llvmir.Module, hints: dict[str, Attribute]) -> MDValue:
    """A loop ID of its own (its first operand is itself, as LLVM's loop
    metadata requires) asking the loop vectoriser for the hinted number of
    lanes, and the unroller to leave the loop alone where it is unrolled
    already."""
    properties = []
    width = hints.get(VECTOR_WIDTH)
    if isinstance(width, IntegerAttr):
        properties += [
            module.add_metadata([llvmir.MetaDataString(module, "llvm.loop.vectorize.enable"),
                                 llvmir.Constant(llvmir.IntType(1), 1)]),
            module.add_metadata([llvmir.MetaDataString(module, "llvm.loop.vectorize.width"),
                                 llvmir.Constant(llvmir.IntType(32), width.value.data)]),
        ]  # fmt: skip
    if NO_UNROLL in hints:
        properties.append(
            module.add_metadata([llvmir.MetaDataString(module, "llvm.loop.unroll.disable")])
        )
    loop_id = MDValue(module, [], name=str(len(module.metadata)))
    loop_id.operands = (loop_id, *properties)
    return loop_id
