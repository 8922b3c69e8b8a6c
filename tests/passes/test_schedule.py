"""Schedules obeyed in generated code: structured ops with hand-written
schedules (tiles that divide their extents and tiles that do not, unrolling
with a remainder, reordered loops and reductions) are bufferized, lowered,
JIT-compiled and run, and compared with NumPy and with the default
schedule's result.

A schedule that keeps each output element's reduction terms in their order
(see passes/loop/generate.py) must give the default's result bit for bit:
the lowering uses no fast-math flags, so LLVM may not reassociate.
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence

import numpy as np
import pytest
from xdsl.dialects import memref
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.passes import ModulePass

from ember.context import make_context
from ember.dialects.loop import KernelOp
from ember.dialects.loop_nests import Loop, is_loop, static_bounds
from ember.dialects.schedule import (
    SCHEDULE,
    STRUCTURED_OPS,
    VECTOR_WIDTH,
    ScheduleAttr,
    ScheduleError,
    set_schedule,
)
from ember.lowering.loop_to_llvm import ConvertLoopToLLVMPass
from ember.lowering.tensor_to_loop import ConvertTensorToLoopPass
from ember.passes.loop.fuse import FuseLoopsPass
from ember.passes.loop.generate import LoopGeneratePass
from ember.passes.loop.outline_kernels import KERNEL_ATTR, OutlineKernelsPass
from ember.passes.loop.pack_weights import PackWeightsPass, weights_blob
from ember.passes.loop.plan_memory import PlanMemoryPass
from ember.targets.cpu import JitModule, to_llvmlite
from ember.targets.cpu.schedule.default_schedule import DefaultSchedulePass

RNG = np.random.default_rng(20)

MATMUL = """
func.func @main(%a: tensor<10x7x{t}>, %b: tensor<7x13x{t}>) -> tensor<10x13x{t}> {{
  %f_value = arith.constant {zero} : {t}
  %f_init = tensor.empty() : tensor<10x13x{t}>
  %f = linalg.fill ins(%f_value : {t}) outs(%f_init : tensor<10x13x{t}>) -> tensor<10x13x{t}>
  %m = linalg.matmul ins(%a, %b : tensor<10x7x{t}>, tensor<7x13x{t}>) outs(%f : tensor<10x13x{t}>) -> tensor<10x13x{t}>
  func.return %m : tensor<10x13x{t}>
}}
"""

# Sum over d1 and d2 of a 5x6x7 tensor: two reduction dims (the generic
# convert-graph-to-tensor makes of a ReduceSum).
SUM = """
func.func @main(%x: tensor<5x6x7xf32>) -> tensor<5xf32> {
  %f_value = arith.constant 0.000000e+00 : f32
  %f_init = tensor.empty() : tensor<5xf32>
  %f = linalg.fill ins(%f_value : f32) outs(%f_init : tensor<5xf32>) -> tensor<5xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0)>], iterator_types = ["parallel", "reduction", "reduction"]} ins(%x : tensor<5x6x7xf32>) outs(%f : tensor<5xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %sum = arith.addf %acc, %v : f32
    linalg.yield %sum : f32
  } -> tensor<5xf32>
  func.return %s : tensor<5xf32>
}
"""

# x * y + b, with b broadcast along d0 and d1.
ELEMENTWISE = """
func.func @main(%x: tensor<5x6x7xf32>, %y: tensor<5x6x7xf32>, %b: tensor<7xf32>) -> tensor<5x6x7xf32> {
  %e = tensor.empty() : tensor<5x6x7xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %y, %b : tensor<5x6x7xf32>, tensor<5x6x7xf32>, tensor<7xf32>) outs(%e : tensor<5x6x7xf32>) {
  ^bb0(%p: f32, %q: f32, %c: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %m, %c : f32
    linalg.yield %s : f32
  } -> tensor<5x6x7xf32>
  func.return %r : tensor<5x6x7xf32>
}
"""

# dims: n, f, oh, ow (parallel), c, kh, kw (reduction)
CONV = """
func.func @main(%x: tensor<1x3x11x11xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x9x9xf32> {
  %f_value = arith.constant 0.000000e+00 : f32
  %f_init = tensor.empty() : tensor<1x4x9x9xf32>
  %f = linalg.fill ins(%f_value : f32) outs(%f_init : tensor<1x4x9x9xf32>) -> tensor<1x4x9x9xf32>
  %c = linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x3x11x11xf32>, tensor<4x3x3x3xf32>) outs(%f : tensor<1x4x9x9xf32>) -> tensor<1x4x9x9xf32>
  func.return %c : tensor<1x4x9x9xf32>
}
"""

# dims: n, c, oh, ow (parallel), kh, kw (reduction); the window tensor
# gives kh and kw their extent (the generic convert-graph-to-tensor makes of
# a MaxPool).
MAX_POOL = """
func.func @main(%x: tensor<1x2x9x9xf32>) -> tensor<1x2x7x7xf32> {
  %f_value = arith.constant 0x7fc00000 : f32
  %f_init = tensor.empty() : tensor<1x2x7x7xf32>
  %f = linalg.fill ins(%f_value : f32) outs(%f_init : tensor<1x2x7x7xf32>) -> tensor<1x2x7x7xf32>
  %window = tensor.empty() : tensor<3x3xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, (d2 + d4), (d3 + d5))>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%x, %window : tensor<1x2x9x9xf32>, tensor<3x3xf32>) outs(%f : tensor<1x2x7x7xf32>) {
  ^bb0(%v: f32, %k: f32, %acc: f32):
    %max = arith.maxnumf %acc, %v : f32
    linalg.yield %max : f32
  } -> tensor<1x2x7x7xf32>
  func.return %p : tensor<1x2x7x7xf32>
}
"""


def parse(text: str) -> ModuleOp:
    module = Parser(make_context(), text).parse_module()
    module.verify()
    return module


def op_named(module: ModuleOp, name: str) -> Operation:
    """The op whose first result is `%name`."""
    (op,) = [o for o in module.walk() if o.results and o.results[0].name_hint == name]
    return op


LOOP_PASSES: tuple[ModulePass, ...] = (
    ConvertTensorToLoopPass(),
    LoopGeneratePass(),
    PackWeightsPass(),
    PlanMemoryPass(),
)
"""From the tensor level to a loop level that convert-loop-to-llvm takes."""


def run(
    text: str,
    inputs: list[np.ndarray],
    outputs: list[np.ndarray],
    passes: Sequence[ModulePass] = LOOP_PASSES,
    **schedules: ScheduleAttr,
) -> ModuleOp:
    """Sets each schedule on the op named by its keyword, compiles `@main`
    through `passes` and the LLVM lowering, and runs it on `inputs`, writing
    `outputs` in place. Returns the module at the loop level."""
    module = parse(text)
    for name, schedule in schedules.items():
        set_schedule(op_named(module, name), schedule)
    context = make_context()
    for compiler_pass in passes:
        compiler_pass.apply(context, module)
    module.verify()
    loop_level = module.clone()
    blob = weights_blob(module)
    (func,) = [op for op in module.walk() if isinstance(op, FuncOp) and op.sym_name.data == "main"]
    arena_bytes = func.attributes["loop.arena_bytes"]
    assert isinstance(arena_bytes, IntegerAttr)
    arena = np.zeros(max(1, arena_bytes.value.data), np.uint8)
    ConvertLoopToLLVMPass().apply(context, module)
    jit = JitModule(str(to_llvmlite(module)))
    arrays = [np.ascontiguousarray(a) for a in [*inputs, *outputs]]
    main = jit.function("main", None, [ctypes.c_void_p] * (len(arrays) + 2))
    main(*(a.ctypes.data for a in arrays), blob.ctypes.data, arena.ctypes.data)
    for given, written in zip(outputs, arrays[len(inputs) :]):
        given[...] = written
    return loop_level


def compute(text: str, inputs: list[np.ndarray], shape: tuple[int, ...], dtype: type, **schedules: ScheduleAttr) -> np.ndarray:  # fmt: skip
    out = np.full(shape, 12345, dtype)  # anything the op must overwrite
    run(text, inputs, [out], **schedules)
    return out


def loops(module: ModuleOp) -> list[Loop]:
    return [op for op in module.walk() if is_loop(op)]  # type: ignore[misc]


def bounds(loop: Loop) -> tuple[int, int, int]:
    """(lower, upper, step) of a generated loop: constants, with static shapes."""
    triple = static_bounds(loop)
    assert triple is not None
    return triple


# Matmul: one reduction dim, so every schedule keeps the terms' order -------------

MATMUL_F32 = MATMUL.format(t="f32", zero="0.000000e+00")
A = RNG.standard_normal((10, 7)).astype(np.float32)
B = RNG.standard_normal((7, 13)).astype(np.float32)
MATMUL_SCHEDULES = {
    "tiles dividing the extents": ScheduleAttr([0, 2, 1], tiles=[5, 0, 7], parallel=[0, 1]),
    "tiles not dividing, reordered": ScheduleAttr([2, 0, 1], tiles=[4, 5, 3], parallel=[0, 1]),
    "k outermost, untiled": ScheduleAttr([2, 1, 0]),
    "unroll 4 over 13 (remainder 1)": ScheduleAttr([0, 2, 1], unroll=4, vector=8),
    "unroll 2 over a peeled tile": ScheduleAttr([0, 2, 1], tiles=[3, 6, 4], unroll=2),
    "unroll over the reduction": ScheduleAttr([0, 1, 2], tiles=[0, 4, 0], unroll=3),
    "tiles of 1 and larger than the extent": ScheduleAttr([1, 2, 0], tiles=[1, 20, 1]),
}


def test_the_default_matmul_matches_numpy() -> None:
    expected = A.astype(np.float64) @ B.astype(np.float64)
    np.testing.assert_allclose(compute(MATMUL_F32, [A, B], (10, 13), np.float32), expected,
                               rtol=1e-5, atol=1e-5)  # fmt: skip


@pytest.mark.parametrize("schedule", MATMUL_SCHEDULES.values(), ids=MATMUL_SCHEDULES.keys())
def test_a_scheduled_matmul_gives_the_default_result_bit_for_bit(schedule: ScheduleAttr) -> None:
    default = compute(MATMUL_F32, [A, B], (10, 13), np.float32)
    scheduled = compute(MATMUL_F32, [A, B], (10, 13), np.float32, m=schedule)
    np.testing.assert_array_equal(scheduled, default)


def test_random_matmul_schedules_give_the_default_result_bit_for_bit() -> None:
    default = compute(MATMUL_F32, [A, B], (10, 13), np.float32)
    rng = np.random.default_rng(3)
    for _ in range(6):
        order = [int(d) for d in rng.permutation(3)]
        tiles = [int(t) for t in rng.integers(0, 9, size=3)]
        schedule = ScheduleAttr(order, tiles=tiles, parallel=[0, 1], unroll=int(rng.integers(1, 5)))
        scheduled = compute(MATMUL_F32, [A, B], (10, 13), np.float32, m=schedule)
        np.testing.assert_array_equal(scheduled, default, err_msg=str(schedule))


def test_an_integer_matmul_with_remainders_is_exact() -> None:
    a = RNG.integers(-50, 50, (10, 7)).astype(np.int32)
    b = RNG.integers(-50, 50, (7, 13)).astype(np.int32)
    schedule = ScheduleAttr([2, 0, 1], tiles=[4, 5, 3], unroll=3)
    out = compute(MATMUL.format(t="i32", zero="0"), [a, b], (10, 13), np.int32, m=schedule)
    np.testing.assert_array_equal(out, a @ b)


def test_the_loop_nest_has_the_scheduled_shape() -> None:
    out = np.zeros((10, 13), np.float32)
    schedule = MATMUL_SCHEDULES["tiles not dividing, reordered"]
    module = run(MATMUL_F32, [A, B], [out], m=schedule)
    steps = sorted({bounds(f) for f in loops(module) if bounds(f)[2] > 1})
    # The tile loops over the full tiles: k by 3 to 6, m by 4 to 8, n by 5 to 10.
    assert steps == [(0, 6, 3), (0, 8, 4), (0, 10, 5)]


def test_the_vector_width_is_recorded_on_every_innermost_loop() -> None:
    out = np.zeros((10, 13), np.float32)
    module = run(MATMUL_F32, [A, B], [out], m=MATMUL_SCHEDULES["unroll 4 over 13 (remainder 1)"])
    marked = [f for f in loops(module) if VECTOR_WIDTH in f.attributes]
    # The main loop (0 to 12 step 4) and its remainder (12 to 13), nothing else.
    assert sorted(bounds(f) for f in marked) == [(0, 12, 4), (12, 13, 1)]
    assert all(not any(is_loop(o) for o in f.body.walk()) for f in marked)


# Reductions ------------------------------------------------------------------

X = RNG.standard_normal((5, 6, 7)).astype(np.float32)


@pytest.mark.parametrize(
    "schedule",
    [
        ScheduleAttr(
            [0, 1, 2], tiles=[2, 4, 0], parallel=[0]
        ),  # only the first reduction dim tiled
        ScheduleAttr(
            [1, 0, 2], tiles=[0, 0, 0], unroll=3
        ),  # a parallel dim moved between: same order
        ScheduleAttr([1, 2, 0], tiles=[0, 5, 0], unroll=4),
    ],
    ids=str,
)
def test_a_reduction_in_its_order_gives_the_default_result(schedule: ScheduleAttr) -> None:
    default = compute(SUM, [X], (5,), np.float32)
    np.testing.assert_array_equal(compute(SUM, [X], (5,), np.float32, s=schedule), default)


@pytest.mark.parametrize(
    "schedule",
    [
        ScheduleAttr([0, 2, 1]),  # the reduction dims swapped
        ScheduleAttr([0, 1, 2], tiles=[0, 0, 3], unroll=2),  # the later reduction dim tiled
        ScheduleAttr([2, 0, 1], tiles=[3, 4, 2], parallel=[0], unroll=3),
    ],
    ids=str,
)
def test_a_reordered_reduction_differs_by_rounding_only(schedule: ScheduleAttr) -> None:
    expected = X.astype(np.float64).sum(axis=(1, 2))
    np.testing.assert_allclose(compute(SUM, [X], (5,), np.float32, s=schedule), expected,
                               rtol=1e-5, atol=1e-5)  # fmt: skip


# Elementwise, convolution, pooling ---------------------------------------------


@pytest.mark.parametrize(
    "schedule",
    [
        ScheduleAttr([0, 1, 2], tiles=[5, 3, 7], parallel=[0, 1, 2]),  # tiles dividing
        ScheduleAttr([2, 0, 1], tiles=[2, 4, 3], parallel=[0, 2], unroll=3, vector=4),
        ScheduleAttr([1, 2, 0], tiles=[4, 0, 0], unroll=2),
        ScheduleAttr([0, 1, 2], tiles=[2, 4, 3], parallel=[0, 1, 2], pack=[2]),  # b broadcast
        ScheduleAttr([2, 0, 1], tiles=[2, 4, 3], unroll=3, vector=4, pack=[0, 1, 2]),
        ScheduleAttr([1, 2, 0], tiles=[4, 0, 5], unroll=2, pack=[2, 0]),
    ],
    ids=str,
)
def test_a_scheduled_elementwise_op_is_exact(schedule: ScheduleAttr) -> None:
    y = RNG.standard_normal((5, 6, 7)).astype(np.float32)
    b = RNG.standard_normal(7).astype(np.float32)
    out = compute(ELEMENTWISE, [X, y, b], (5, 6, 7), np.float32, r=schedule)
    np.testing.assert_array_equal(out, X * y + b)


def test_a_scheduled_convolution_gives_the_default_result() -> None:
    x = RNG.standard_normal((1, 3, 11, 11)).astype(np.float32)
    w = RNG.standard_normal((4, 3, 3, 3)).astype(np.float32)
    default = compute(CONV, [x, w], (1, 4, 9, 9), np.float32)
    # oh and ow tiled by 4 (remainder 1), c (the first reduction dim) by 2
    # (remainder 1), ow innermost and unrolled by 3.
    schedule = ScheduleAttr([0, 1, 2, 4, 5, 6, 3], tiles=[0, 0, 4, 4, 2, 0, 0],
                            parallel=[0, 1, 2, 3], unroll=3)  # fmt: skip
    np.testing.assert_array_equal(compute(CONV, [x, w], (1, 4, 9, 9), np.float32, c=schedule),
                                  default)  # fmt: skip
    windows = np.lib.stride_tricks.sliding_window_view(x[0].astype(np.float64), (3, 3), axis=(1, 2))
    expected = np.einsum("chwij,fcij->fhw", windows, w.astype(np.float64))[None]
    np.testing.assert_allclose(default, expected, rtol=1e-5, atol=1e-5)


def test_a_scheduled_max_pool_is_exact() -> None:
    x = RNG.standard_normal((1, 2, 9, 9)).astype(np.float32)
    schedule = ScheduleAttr([4, 5, 0, 1, 2, 3], tiles=[0, 0, 3, 2, 2, 0], unroll=2)
    out = compute(MAX_POOL, [x], (1, 2, 7, 7), np.float32, p=schedule)
    windows = np.lib.stride_tricks.sliding_window_view(x, (3, 3), axis=(2, 3))
    np.testing.assert_array_equal(out, windows.max(axis=(4, 5)))


# The default and the pass ------------------------------------------------------


@pytest.mark.parametrize("text", [MATMUL_F32, SUM, ELEMENTWISE, CONV, MAX_POOL])
def test_default_schedules_in_the_ir_change_no_generated_loop(text: str) -> None:
    plain, scheduled = parse(text), parse(text)
    DefaultSchedulePass(cpu="generic").apply(make_context(), scheduled)
    structured = [op for op in scheduled.walk() if isinstance(op, STRUCTURED_OPS)]
    assert structured and all(
        isinstance(op.attributes[SCHEDULE], ScheduleAttr) for op in structured
    )
    for module in (plain, scheduled):
        ConvertTensorToLoopPass().apply(make_context(), module)
        LoopGeneratePass().apply(make_context(), module)
    assert str(scheduled) == str(plain)


@pytest.mark.parametrize("text", [MATMUL_F32, SUM, CONV, MAX_POOL])
def test_schedules_survive_bufferization(text: str) -> None:
    module = parse(text)
    DefaultSchedulePass().apply(make_context(), module)
    before = [op.attributes[SCHEDULE] for op in module.walk() if isinstance(op, STRUCTURED_OPS)]
    ConvertTensorToLoopPass().apply(make_context(), module)
    after = [op.attributes[SCHEDULE] for op in module.walk() if isinstance(op, STRUCTURED_OPS)]
    assert after == before


def test_a_schedule_set_on_buffers_is_obeyed() -> None:
    """The two-pass form: bufferize, set the schedule on the op on buffers
    from Python, generate; the loops are the scheduled ones and the result
    is the default's."""
    module = parse(MATMUL_F32)
    ConvertTensorToLoopPass().apply(make_context(), module)
    (matmul,) = [op for op in module.walk() if isinstance(op, STRUCTURED_OPS)]
    set_schedule(matmul, MATMUL_SCHEDULES["tiles not dividing, reordered"])
    LoopGeneratePass().apply(make_context(), module)
    steps = sorted({bounds(f) for f in loops(module) if bounds(f)[2] > 1})
    assert steps == [(0, 6, 3), (0, 8, 4), (0, 10, 5)]


def test_set_schedule_rejects_a_schedule_that_does_not_fit() -> None:
    module = parse(SUM)
    reduce = op_named(module, "s")
    with pytest.raises(ScheduleError, match=r"linalg.generic %s in @main: schedule order \[1, 0\] "
                       r"has 2 dims, the op iterates over 3"):  # fmt: skip
        set_schedule(reduce, ScheduleAttr([1, 0]))
    with pytest.raises(ScheduleError, match="schedule runs d1 in parallel, but d1 is a reduction"):
        set_schedule(reduce, ScheduleAttr([0, 1, 2], parallel=[0, 1]))
    with pytest.raises(ScheduleError, match="linalg.fill %f in @main: only structured ops"):
        set_schedule(op_named(module, "f"), ScheduleAttr([0]))
    assert SCHEDULE not in reduce.attributes


# A fused kernel --------------------------------------------------------------

# relu(x @ w) as one kernel (what graph-fuse and convert-graph-to-tensor make of MatMul + Relu):
# the matmul scheduled with remainders, the relu by default.
FUSED = """
func.func @main(%x: tensor<10x7xf32>, %w: tensor<7x13xf32>) -> tensor<10x13xf32> {
  %k = loop.kernel "matmul" -> (tensor<10x13xf32>) {
    %f_value = arith.constant 0.000000e+00 : f32
    %f_init = tensor.empty() : tensor<10x13xf32>
    %f = linalg.fill ins(%f_value : f32) outs(%f_init : tensor<10x13xf32>) -> tensor<10x13xf32>
    %m = linalg.matmul ins(%x, %w : tensor<10x7xf32>, tensor<7x13xf32>) outs(%f : tensor<10x13xf32>) -> tensor<10x13xf32>
    %e = tensor.empty() : tensor<10x13xf32>
    %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%m : tensor<10x13xf32>) outs(%e : tensor<10x13xf32>) {
    ^bb0(%p: f32, %o: f32):
      %zero = arith.constant 0.000000e+00 : f32
      %y = arith.maximumf %p, %zero : f32
      linalg.yield %y : f32
    } -> tensor<10x13xf32>
    loop.yield %r : tensor<10x13xf32>
  }
  func.return %k : tensor<10x13xf32>
}
"""


def test_a_scheduled_op_in_a_fused_kernel_runs_through_the_loop_passes() -> None:
    passes = (ConvertTensorToLoopPass(), LoopGeneratePass(), FuseLoopsPass(), PackWeightsPass(),
              PlanMemoryPass(), OutlineKernelsPass())  # fmt: skip
    out, default = np.zeros((10, 13), np.float32), np.zeros((10, 13), np.float32)
    schedule = MATMUL_SCHEDULES["tiles not dividing, reordered"]
    module = run(FUSED, [A, B], [out], passes, m=schedule)
    run(FUSED, [A, B], [default], passes)
    np.testing.assert_array_equal(out, default)
    expected = np.maximum(A.astype(np.float64) @ B.astype(np.float64), 0)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
    # The peeled nests and the relu's stay one kernel (one fusion group).
    kernels = [
        op for op in module.walk() if isinstance(op, FuncOp) and KERNEL_ATTR in op.attributes
    ]
    assert len(kernels) == 1


# Packing ---------------------------------------------------------------------

PACKED_MATMUL_SCHEDULES = {
    "B, tiles dividing": ScheduleAttr([0, 2, 1], tiles=[5, 0, 7], parallel=[0, 1], pack=[1]),
    "B, tiles not dividing, reordered": ScheduleAttr(
        [2, 0, 1], tiles=[4, 5, 3], parallel=[0, 1], pack=[1]
    ),  # fmt: skip
    "A, tiles not dividing, unrolled": ScheduleAttr([0, 2, 1], tiles=[3, 6, 4], unroll=2, pack=[0]),
    "both, k outermost": ScheduleAttr([2, 1, 0], tiles=[4, 0, 3], unroll=3, pack=[1, 0]),
    "both, untiled (plain copies)": ScheduleAttr([0, 2, 1], pack=[0, 1]),
    "both, tiles of 1": ScheduleAttr([1, 2, 0], tiles=[1, 20, 1], pack=[0, 1]),
}


@pytest.mark.parametrize(
    "schedule", PACKED_MATMUL_SCHEDULES.values(), ids=PACKED_MATMUL_SCHEDULES.keys()
)
def test_a_packed_matmul_gives_the_default_result_bit_for_bit(schedule: ScheduleAttr) -> None:
    default = compute(MATMUL_F32, [A, B], (10, 13), np.float32)
    packed = compute(MATMUL_F32, [A, B], (10, 13), np.float32, m=schedule)
    np.testing.assert_array_equal(packed, default)


def test_an_integer_matmul_packing_both_operands_is_exact() -> None:
    a = RNG.integers(-50, 50, (10, 7)).astype(np.int32)
    b = RNG.integers(-50, 50, (7, 13)).astype(np.int32)
    schedule = ScheduleAttr([2, 0, 1], tiles=[4, 5, 3], unroll=3, pack=[0, 1])
    out = compute(MATMUL.format(t="i32", zero="0"), [a, b], (10, 13), np.int32, m=schedule)
    np.testing.assert_array_equal(out, a @ b)


def _generated(text: str, **schedules: ScheduleAttr) -> ModuleOp:
    module = parse(text)
    for name, schedule in schedules.items():
        set_schedule(op_named(module, name), schedule)
    for compiler_pass in (ConvertTensorToLoopPass(), LoopGeneratePass()):
        compiler_pass.apply(make_context(), module)
    module.verify()
    return module


def _allocated_shapes(module: ModuleOp) -> list[tuple[int, ...]]:
    return [
        tuple(op.memref.type.get_shape()) for op in module.walk() if isinstance(op, memref.AllocOp)
    ]


def test_a_packed_operand_gets_a_buffer_of_whole_tiles() -> None:
    # B is 7x13 (k, n): k in tiles of 3 (3 tiles, the last one padded), n in
    # tiles of 5 (3 tiles); A is 10x7 (m, k): m in tiles of 4, k as B's.
    schedule = ScheduleAttr([2, 0, 1], tiles=[4, 5, 3], parallel=[0, 1], pack=[1, 0])
    shapes = _allocated_shapes(_generated(MATMUL_F32, m=schedule))
    assert (3, 3, 3, 5) in shapes and (3, 3, 4, 3) in shapes
    # An untiled dim stays whole among the inner dims: n untiled, k by 2.
    shapes = _generated(MATMUL_F32, m=ScheduleAttr([0, 2, 1], tiles=[0, 0, 2], pack=[1]))
    assert (4, 2, 13) in _allocated_shapes(shapes)


def test_the_op_reads_only_the_packed_buffer() -> None:
    schedule = ScheduleAttr([2, 0, 1], tiles=[4, 5, 3], parallel=[0, 1], pack=[1])
    module = _generated(MATMUL_F32, m=schedule)
    (func,) = [op for op in module.walk() if isinstance(op, FuncOp)]
    b = func.body.block.args[1]
    # B is read by the packing copy's four peeled nests only (tiles of k and
    # n, each with a remainder), not by the matmul's eight.
    loads_of_b = [use.operation for use in b.uses if isinstance(use.operation, memref.LoadOp)]
    assert len(loads_of_b) == 4
    (alloc,) = [op for op in module.walk() if isinstance(op, memref.AllocOp)
                and op.memref.type.get_shape() == (3, 3, 3, 5)]  # fmt: skip
    kinds = {type(use.operation) for use in alloc.memref.uses}
    assert kinds == {memref.LoadOp, memref.StoreOp}
    assert sum(isinstance(u.operation, memref.LoadOp) for u in alloc.memref.uses) == 8


def test_a_reduction_packing_its_input_gives_the_default_result() -> None:
    default = compute(SUM, [X], (5,), np.float32)
    schedule = ScheduleAttr([0, 1, 2], tiles=[2, 4, 0], parallel=[0], unroll=3, pack=[0])
    np.testing.assert_array_equal(compute(SUM, [X], (5,), np.float32, s=schedule), default)


def test_a_convolution_packing_its_filter_gives_the_default_result() -> None:
    x = RNG.standard_normal((1, 3, 11, 11)).astype(np.float32)
    w = RNG.standard_normal((4, 3, 3, 3)).astype(np.float32)
    default = compute(CONV, [x, w], (1, 4, 9, 9), np.float32)
    # f tiled by 3 (remainder 1), c (the first reduction dim) by 2 (remainder
    # 1), oh and ow by 4; the filter (f, c, kh, kw) packed by f and c tiles.
    schedule = ScheduleAttr([0, 1, 2, 4, 5, 6, 3], tiles=[0, 3, 4, 4, 2, 0, 0],
                            parallel=[0, 1, 2, 3], unroll=3, pack=[1])  # fmt: skip
    np.testing.assert_array_equal(compute(CONV, [x, w], (1, 4, 9, 9), np.float32, c=schedule),
                                  default)  # fmt: skip
    assert (2, 2, 3, 2, 3, 3) in _allocated_shapes(_generated(CONV, c=schedule))


def test_a_pooling_window_the_body_never_reads_is_not_packed() -> None:
    x = RNG.standard_normal((1, 2, 9, 9)).astype(np.float32)
    schedule = ScheduleAttr([0, 1, 2, 3, 4, 5], tiles=[0, 0, 3, 2, 2, 0], pack=[0, 1])
    with pytest.raises(ScheduleError, match=r"packs operand 0, whose indexing map .* is not a "
                       r"projected permutation"):  # fmt: skip
        set_schedule(op_named(parse(MAX_POOL), "p"), schedule)
    windowed = ScheduleAttr([0, 1, 2, 3, 4, 5], tiles=[0, 0, 3, 2, 2, 0], pack=[1])
    assert _allocated_shapes(_generated(MAX_POOL, p=windowed)) == []
    out = compute(MAX_POOL, [x], (1, 2, 7, 7), np.float32, p=windowed)
    windows = np.lib.stride_tricks.sliding_window_view(x, (3, 3), axis=(2, 3))
    np.testing.assert_array_equal(out, windows.max(axis=(4, 5)))


def test_a_packed_op_in_a_fused_kernel_packs_inside_the_kernel() -> None:
    passes = (ConvertTensorToLoopPass(), LoopGeneratePass(), FuseLoopsPass(), PackWeightsPass(),
              PlanMemoryPass(), OutlineKernelsPass())  # fmt: skip
    out, default = np.zeros((10, 13), np.float32), np.zeros((10, 13), np.float32)
    schedule = ScheduleAttr([2, 0, 1], tiles=[4, 5, 3], parallel=[0, 1], pack=[0, 1])
    generated = _generated(FUSED, m=schedule)
    packed = [op for op in generated.walk() if isinstance(op, memref.AllocOp)
              and op.memref.type.get_shape() in ((3, 3, 3, 5), (3, 3, 4, 3))]  # fmt: skip
    assert len(packed) == 2 and all(isinstance(op.parent_op(), KernelOp) for op in packed)
    module = run(FUSED, [A, B], [out], passes, m=schedule)
    run(FUSED, [A, B], [default], passes)
    np.testing.assert_array_equal(out, default)
    kernels = [
        op for op in module.walk() if isinstance(op, FuncOp) and KERNEL_ATTR in op.attributes
    ]
    assert len(kernels) == 1
