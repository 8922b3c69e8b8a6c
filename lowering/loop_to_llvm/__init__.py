"""`convert-loop-to-llvm`: loop-level functions to xDSL's `llvm` dialect.

ABI of the generated code (the runtime and the C header rely on it)
--------------------------------------------------------------------
Each `func.func @name(%a: memref<...>, ...)` (no results) becomes a function
with the C calling convention and external linkage whose parameters are,
argument by argument: for a memref, a pointer to its data (element 0 of
its layout's base), then one `int64_t` per dynamic part of its type, in
the order offset (if `?`), the `?` sizes, the `?` strides of an explicit
`strided<...>` layout (an identity layout's strides follow from its sizes,
row-major); for an `index` or integer or float scalar, that scalar
(`index` as int64). So `memref<?x?xf32>` is `(float *a, int64_t rows,
int64_t cols)`, and a static memref is one pointer. The weights blob and
the arena are ordinary memref arguments (`memref<Nxi8>`, marked
`ember.weights` and `ember.arena` by `loop-pack-weights` and
`loop-plan-memory`); each buffer in them is a `memref.view` at its byte
offset. Elements are laid out as NumPy lays them out: `i1` as one byte
holding 0 or 1, `index` as int64; every buffer must be aligned to its
element size. Nothing is returned; the function writes its output buffers
and may use the whole arena as scratch.

A function marked `ember.packed_buffers` (a unit attribute; the model's
entry function carries it) takes its inputs and outputs (every memref
argument but the weights and the arena; all static) as one array of
pointers instead, so any number of them fits through every foreign-function
interface (ctypes stops at 1,024 arguments):

    void name(void *const buffers[], const void *weights, void *arena);

where `buffers[i]` is the pointer of input/output argument `i`; `weights`
and `arena` are the two ABI arguments (unused if the function has none).
The function only reads the array, which must not overlap any buffer.
Its output buffers must not overlap one another, its inputs, the weights or
the arena (inputs may share memory with inputs: they are only read), so
`loop-mark-noalias` may tell LLVM that kernel arguments placed apart do
not alias. A memref argument with the `llvm.noalias` argument attribute
gets LLVM's `noalias` on its pointer.
Loop-level code cannot call such a function. Kernels (`ember.kernel`)
keep the unpacked form.

Lowering: `index` is i64; `scf.for` and `scf.parallel` become a CFG (header
block with the induction variable and an `scf.for`'s loop-carried values as
block arguments, `icmp slt`, body, increment, back edge, exit); an
`scf.parallel` left in a function runs serially. A call marked
`ember.parallel_threads` (`loop-parallelize`) of a function marked
`ember.parallel_body` is a launch: the callee's arguments
but its range go into a context of 8-byte slots, and the call becomes
`ember_parallel_for(@callee_task, ctx, end - begin, threads)`, a function
the target provides (`parallel.py` has the contract; the CPU's is a thread
pool); each such callee gets an internal `callee_task(ctx, from, to)`.
One-dimensional `vector` values are LLVM vectors. Scalar ops map
to LLVM instructions, to `llvm.*` intrinsics, or to calls to libm (declared
once per module). A float op's own `fastmath` flags carry over (only the
normalisations' `reassoc` sums and `loop-expand-math`'s `contract`
polynomials have any); all else is exact IEEE. Integer
division never traps (docs/semantics.md): x / 0 and x % 0 are 0, INT_MIN /
-1 is INT_MIN and INT_MIN % -1 is 0, as NumPy computes them.

One module per concern, each a table of handlers for a `FunctionBuilder`
(`builder.py`), so another path to the `llvm` dialect reuses the pieces it
shares: `control_flow` (scf -> CFG), `memory` (views, loads and stores as
pointer arithmetic on strided layouts, static or dynamic), `scalars` (arith
and math), `vectors` (vector loads, stores, broadcasts and fma), `abi` (the
signatures and calls above), `parallel` (launches), `timing` (the cycle
counter that a profile reads). This module checks the
input and wires them.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, llvm
from xdsl.dialects.builtin import ModuleOp, bf16, f32
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from ember.lowering.loop_to_llvm import (
    abi,
    control_flow,
    memory,
    parallel,
    scalars,
    timing,
    vectors,
)
from ember.lowering.loop_to_llvm.abi import EXTERNAL, PACKED_BUFFERS_ATTR
from ember.lowering.loop_to_llvm.builder import HandlerTable, check_supported
from ember.lowering.loop_to_llvm.llvm_types import NARROW_FLOATS, element_of, lowerable
from ember.lowering.loop_to_llvm.vectors import BF16_DOT_FORMS, bf16_dot_form

PASS = "convert-loop-to-llvm"
HANDLERS: HandlerTable = {
    **control_flow.HANDLERS,
    **memory.HANDLERS,
    **scalars.HANDLERS,
    **vectors.HANDLERS,
    **abi.HANDLERS,
    **timing.HANDLERS,
    **parallel.HANDLERS,  # calls: a launch where marked, else abi's plain call
}


def _problem(op: Operation, module: ModuleOp) -> str | None:
    """Why `op` cannot be lowered (its name, or its name and a type), or None."""
    if op is module or isinstance(op, func.FuncOp):
        return None if op.parent_op() in (None, module) else op.name
    if type(op) not in HANDLERS or op.parent_op() is module:
        return op.name
    types = (*(v.type for v in op.operands), *op.result_types)
    bad = [t for t in types if not lowerable(t)]
    if bad:
        return f"{op.name} on {bad[0]}"
    if op.dialect_name() in ("arith", "math") and not _moves_bits(op):
        narrow = [t for t in types if isinstance(element_of(t), NARROW_FLOATS)]
        if narrow:  # stored only: arithmetic goes through f32 (docs/types.md)
            return f"{op.name} on {narrow[0]} (computes only in f32)"
    return None


_MOVES_BITS = (arith.BitcastOp, arith.SelectOp, arith.ConstantOp)
"""The arith ops that may take narrow floats (`llvm_types.NARROW_FLOATS`):
they move (or give) bits without computing on them; so does widening a
bfloat16 to f32 (`_moves_bits`)."""


def _moves_bits(op: Operation) -> bool:
    if isinstance(op, arith.ExtFOp):
        return op.operands[0].type == bf16 and op.results[0].type == f32
    return isinstance(op, _MOVES_BITS)


def _check_supported(module: ModuleOp) -> None:
    """One diagnostic listing every op this pass cannot lower, with counts."""
    check_supported(PASS, (p for op in module.walk() if (p := _problem(op, module)) is not None))


def convert_loop_to_llvm(module: ModuleOp) -> None:
    """Replace every `func.func` of `module` by an `llvm.func` (see the ABI above)."""
    check_lowerable(module)
    lower_functions(module)


def check_lowerable(module: ModuleOp) -> None:
    """One diagnostic for every op of `module` the pass cannot lower, and
    for a call of a packed function."""
    _check_supported(module)
    abi.check_packed_not_called(module, PASS)


def lower_functions(module: ModuleOp) -> None:
    """`convert_loop_to_llvm` without its checks (`check_lowerable`), for
    the functions of a module that a larger one has been checked with."""
    externals: dict[str, llvm.LLVMFunctionType] = {}
    body = module.body.block
    for fn in list(body.ops):
        assert isinstance(fn, func.FuncOp)
        lowered = abi.lower_function(fn, HANDLERS, externals, PASS)
        body.insert_op_before(lowered, fn)
        if parallel.is_parallel_body(fn):
            body.insert_op_before(parallel.task_function(lowered), fn)
        body.erase_op(fn)
    for name, function_type in externals.items():
        body.insert_op_before(llvm.FuncOp(name, function_type, EXTERNAL), body.first_op)  # type: ignore[arg-type]


@dataclass(frozen=True)
class ConvertLoopToLLVMPass(ModulePass):
    """Lower loop-level functions to the `llvm` dialect (ABI in the module docstring)."""

    name = "convert-loop-to-llvm"

    bf16_dot: str = "host"
    """How `loop.bf16_dot` becomes LLVM: `host` (the instruction where the
    host CPU has it, two fmas elsewhere), `instruction` or `expanded`."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.bf16_dot not in BF16_DOT_FORMS:
            raise DiagnosticException(
                f"{self.name}: bf16-dot={self.bf16_dot} is not one of {', '.join(BF16_DOT_FORMS)}"
            )
        token = bf16_dot_form.set(self.bf16_dot)
        try:
            convert_loop_to_llvm(op)
        finally:
            bf16_dot_form.reset(token)


__all__ = [
    "HANDLERS",
    "PACKED_BUFFERS_ATTR",
    "PASS",
    "ConvertLoopToLLVMPass",
    "check_lowerable",
    "convert_loop_to_llvm",
    "lower_functions",
]
