"""Vector ops: xDSL's `vector` dialect to LLVM vector instructions.

Loop generation emits one-dimensional vectors (`vector<16xf32>`) for the
register-blocked micro-kernels of contractions (`ember.passes.loop.generate`);
each op here becomes one LLVM instruction or intrinsic on the same vector type:

- `vector.load`/`vector.store`: a load/store of the whole vector at the
  element's address (`memory.element_pointer`), aligned to the element only:
  a row of a buffer starts anywhere, and x86 loads unaligned vectors at full
  speed (`access_handlers` makes them with another alignment: the GPU's
  promise the whole vector's);
- `vector.broadcast` of a scalar: `insertelement` into lane 0 of an undef
  vector, then a `shufflevector` with an all-zero mask (what LLVM itself
  emits for a splat, and what instruction selection turns into one
  `vbroadcastss`);
- `vector.shuffle` of two 1-D vectors: `shufflevector` with the same mask
  (a stride-2 read's even lanes);
- `vector.fma`: the `llvm.fma` intrinsic on the vector, one rounding per lane;
- `loop.bf16_dot`: where the host CPU has AVX512-BF16 (what the JIT and
  the `.so` compile for), its `vdpbf16ps` (`llvm.x86.avx512bf16.dpbf16ps.N`,
  named with the pairs as `i32` lanes, as LLVM's own upgrade of the
  intrinsic accepts); elsewhere each pair's halves widened to f32 by integer
  ops (the even element, the low half, shifted up 16 bits; the odd one
  masked) and two `llvm.fma`s, even then odd.

Elementwise `arith` ops on vectors (a micro-kernel's epilogue: bias add,
Relu) go through `scalars`' tables unchanged; an intrinsic's name then
carries the vector type (`llvm.maximum.v16f32`, `llvm_types.suffix`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from contextvars import ContextVar

import llvmlite.binding as llvm_binding
from xdsl.dialects import llvm, vector
from xdsl.dialects.builtin import DenseArrayBase, VectorType, i32
from xdsl.ir import Operation, SSAValue
from xdsl.utils.exceptions import DiagnosticException

from ember.dialects.loop import Bf16DotOp
from ember.dialects.quick_ops import quick
from ember.lowering.loop_to_llvm.builder import FunctionBuilder, HandlerTable, registrar
from ember.lowering.loop_to_llvm.llvm_types import llvm_vector
from ember.lowering.loop_to_llvm.memory import element_pointer

HANDLERS: HandlerTable = {}
_lowers = registrar(HANDLERS)


def _element_bytes(vector_type: VectorType) -> int:
    return vector_type.element_type.bitwidth // 8  # type: ignore[attr-defined]


def vector_bytes(vector_type: VectorType) -> int:
    """The bytes of a whole vector (its alignment where accesses are aligned to it)."""
    return _element_bytes(vector_type) * vector_type.get_shape()[0]


def access_handlers(alignment: Callable[[VectorType], int]) -> HandlerTable:
    """`vector.load`/`vector.store` as LLVM loads and stores that promise
    `alignment(vector type)` bytes of alignment."""
    table: HandlerTable = {}
    lowers = registrar(table)

    def place(lw: FunctionBuilder, op: vector.LoadOp | vector.StoreOp,
              value: SSAValue) -> tuple[SSAValue, int]:  # fmt: skip
        """The address of `op`'s first element and the alignment of `value`'s type."""
        vector_type = value.type
        assert isinstance(vector_type, VectorType)
        return element_pointer(lw, op.base, op.indices), alignment(vector_type)

    @lowers(vector.LoadOp)
    def _load(lw: FunctionBuilder, op: Operation) -> SSAValue:
        assert isinstance(op, vector.LoadOp)
        pointer, align = place(lw, op, op.result)
        loaded = op.result.type
        assert isinstance(loaded, VectorType)
        loaded = llvm_vector(loaded)
        return lw.emit(quick(lambda: llvm.LoadOp(pointer, loaded, alignment=align),
                             (llvm.LoadOp, align), llvm.LoadOp, (pointer,), (loaded,)))  # fmt: skip

    @lowers(vector.StoreOp)
    def _store(lw: FunctionBuilder, op: Operation) -> None:
        assert isinstance(op, vector.StoreOp)
        pointer, align = place(lw, op, op.vector)
        value = lw.values[op.vector]
        lw.emit(quick(lambda: llvm.StoreOp(value, pointer, alignment=align),
                      (llvm.StoreOp, align), llvm.StoreOp, (value, pointer), ()))  # fmt: skip

    return table


HANDLERS.update(access_handlers(_element_bytes))


@_lowers(vector.BroadcastOp)
def _broadcast(lw: FunctionBuilder, op: Operation) -> SSAValue:
    assert isinstance(op, vector.BroadcastOp)
    vector_type = op.vector.type
    assert isinstance(vector_type, VectorType)
    if isinstance(op.source.type, VectorType):
        raise DiagnosticException(f"{lw.pass_name}: vector.broadcast of a vector is not supported")
    return _splat(lw, lw.values[op.source], llvm_vector(vector_type))


def _splat(lw: FunctionBuilder, scalar: SSAValue, vector_type: VectorType) -> SSAValue:
    undef = lw.emit(llvm.UndefOp(vector_type))
    lane0 = lw.emit(llvm.InsertElementOp(undef, scalar, lw.const(0, i32)))
    mask = DenseArrayBase.from_list(i32, [0] * vector_type.get_shape()[0])
    return lw.emit(llvm.ShuffleVectorOp(lane0, undef, mask, vector_type))


@_lowers(vector.ShuffleOp)
def _shuffle(lw: FunctionBuilder, op: Operation) -> SSAValue:
    assert isinstance(op, vector.ShuffleOp)
    vector_type = op.result.type
    assert isinstance(vector_type, VectorType)
    if vector_type.get_num_dims() != 1 or op.v1.type != op.v2.type:
        raise DiagnosticException(
            f"{lw.pass_name}: vector.shuffle of two 1-D vectors of one type is supported, "
            f"not {op.v1.type}, {op.v2.type} to {vector_type}"
        )
    mask = DenseArrayBase.from_list(i32, list(op.mask.get_values()))
    v1, v2 = lw.args(op)
    return lw.emit(llvm.ShuffleVectorOp(v1, v2, mask, llvm_vector(vector_type)))


@_lowers(vector.BitcastOp)
def _bitcast(lw: FunctionBuilder, op: Operation) -> SSAValue:
    assert isinstance(op, vector.BitcastOp)
    result_type = op.result.type
    assert isinstance(result_type, VectorType)
    return lw.emit(llvm.BitcastOp(lw.values[op.source], llvm_vector(result_type)))


@_lowers(vector.FMAOp)
def _fma(lw: FunctionBuilder, op: Operation) -> SSAValue:
    assert isinstance(op, vector.FMAOp)
    args = lw.args(op)
    return lw.emit(quick(lambda: llvm.FMAOp(*args), llvm.FMAOp, llvm.FMAOp, args, (args[0].type,)))


BF16_DOT_BITS = (128, 256, 512)
"""The accumulator widths `vdpbf16ps` has (512 bits: AVX512-BF16; 128 and
256: with AVX512-VL)."""


BF16_DOT_FORMS = ("host", "instruction", "expanded")
"""How `loop.bf16_dot` is lowered: as the host CPU allows (the default), or
pinned (tests; `instruction` on a CPU without it compiles but cannot run)."""

bf16_dot_form: ContextVar[str] = ContextVar("bf16_dot_form", default="host")
"""The form the lowering running now emits (`ConvertLoopToLLVMPass.bf16_dot`)."""


@functools.cache
def host_has_bf16_dot() -> bool:
    """Whether the host CPU runs `vdpbf16ps` (AVX512-BF16 and AVX512-VL)."""
    features = llvm_binding.get_host_cpu_features()
    return bool(features.get("avx512bf16")) and bool(features.get("avx512vl"))


def _emits_instruction(lanes: int) -> bool:
    form = bf16_dot_form.get()
    if 32 * lanes not in BF16_DOT_BITS or form == "expanded":
        return False
    return form == "instruction" or host_has_bf16_dot()


@_lowers(Bf16DotOp)
def _bf16_dot(lw: FunctionBuilder, op: Operation) -> SSAValue:
    assert isinstance(op, Bf16DotOp)
    acc, lhs, rhs = lw.args(op)
    acc_type = op.acc.type
    assert isinstance(acc_type, VectorType)
    lanes = acc_type.get_shape()[0]
    words = VectorType(i32, [lanes])
    a, b = (lw.emit(llvm.BitcastOp(v, words)) for v in (lhs, rhs))
    if _emits_instruction(lanes):
        return lw.intrinsic(f"x86.avx512bf16.dpbf16ps.{32 * lanes}", [acc, a, b], acc_type)
    return expanded_bf16_dot(lw, acc, a, b, acc_type)


def expanded_bf16_dot(lw: FunctionBuilder, acc: SSAValue, a: SSAValue, b: SSAValue,
                      acc_type: VectorType) -> SSAValue:  # fmt: skip
    """`loop.bf16_dot` without the instruction, on the pairs as i32 lanes `a`
    and `b`: each lane's low half (the even element) shifted up 16 bits and
    its high half (the odd one) masked are the two f32 values; two fmas."""
    words = a.type
    assert isinstance(words, VectorType)
    shift = _splat(lw, lw.const(16, i32), words)
    mask = _splat(lw, lw.const(-65536, i32), words)

    def halves(pairs: SSAValue) -> tuple[SSAValue, SSAValue]:
        even = lw.emit(llvm.ShlOp(pairs, shift))
        odd = lw.emit(llvm.AndOp(pairs, mask))
        return tuple(lw.emit(llvm.BitcastOp(h, acc_type)) for h in (even, odd))  # type: ignore[return-value]

    (a_even, a_odd), (b_even, b_odd) = halves(a), halves(b)
    summed = lw.emit(llvm.FMAOp(a_even, b_even, acc))
    return lw.emit(llvm.FMAOp(a_odd, b_odd, summed))
