"""Micro-kernels obeyed in generated code: contractions (matmul, batched
matmul, convolutions in NCHW and NHWC) with a schedule's `micro` field are
bufferized, lowered to vector code, JIT-compiled and run, and compared with
NumPy in float64.

An fma rounds once where a multiply and an add round twice, so results are
not bit-equal to the scalar default's; each is checked against the exact
result within a bound relative to the magnitude of its terms (K terms of
|a| |b| at f32's epsilon), which holds whatever the vector width of the
machine.
"""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import arith, memref, scf, vector

from ember.dialects.schedule import ScheduleAttr
from tests.passes.test_schedule import run

RNG = np.random.default_rng(21)

MATMUL = """
func.func @main(%a: tensor<{m}x{k}x{t}>, %b: tensor<{k}x{n}x{t}>, %c: tensor<{m}x{n}x{t}>) -> tensor<{m}x{n}x{t}> {{
  %r = linalg.matmul ins(%a, %b : tensor<{m}x{k}x{t}>, tensor<{k}x{n}x{t}>) outs(%c : tensor<{m}x{n}x{t}>) -> tensor<{m}x{n}x{t}>
  func.return %r : tensor<{m}x{n}x{t}>
}}
"""

# dims: b, m, n (parallel), k (reduction)
BATCHED = """
func.func @main(%a: tensor<3x9x5xf32>, %b: tensor<3x5x21xf32>, %c: tensor<3x9x21xf32>) -> tensor<3x9x21xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%a, %b : tensor<3x9x5xf32>, tensor<3x5x21xf32>) outs(%c : tensor<3x9x21xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<3x9x21xf32>
  func.return %r : tensor<3x9x21xf32>
}
"""

# NCHW, stride 1: dims n, f, oh, ow (parallel), c, kh, kw (reduction)
CONV_NCHW = """
func.func @main(%x: tensor<1x3x11x21xf32>, %w: tensor<5x3x3x3xf32>, %o: tensor<1x5x9x19xf32>) -> tensor<1x5x9x19xf32> {
  %c = linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x3x11x21xf32>, tensor<5x3x3x3xf32>) outs(%o : tensor<1x5x9x19xf32>) -> tensor<1x5x9x19xf32>
  func.return %c : tensor<1x5x9x19xf32>
}
"""

# NHWC as graph-layout emits it, stride 2 (the input pre-padded): dims n,
# oh, ow, kh, kw, c, f; out[n, oh, ow, f] += x[n, 2oh + kh, 2ow + kw, c] * w[kh, kw, c, f]
CONV_NHWC = """
func.func @main(%x: tensor<1x9x15x3xf32>, %w: tensor<3x3x3x20xf32>, %o: tensor<1x4x7x20xf32>) -> tensor<1x4x7x20xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 * 2 + d3, d2 * 2 + d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d3, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d6)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]} ins(%x, %w : tensor<1x9x15x3xf32>, tensor<3x3x3x20xf32>) outs(%o : tensor<1x4x7x20xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x4x7x20xf32>
  func.return %r : tensor<1x4x7x20xf32>
}
"""


def check(got: np.ndarray, exact: np.ndarray, magnitude: np.ndarray, terms: int) -> None:
    """|got - exact| within a few roundings of each of `terms` products of
    `magnitude` (the sum of |a| |b|), at the precision of `got`."""
    epsilon = np.finfo(got.dtype).eps
    bound = 2 * (terms + 1) * epsilon * magnitude + np.finfo(got.dtype).tiny
    assert np.all(np.abs(got.astype(np.float64) - exact) <= bound)


def matmul(m: int, k: int, n: int, dtype: type, schedule: ScheduleAttr) -> None:
    t = {np.float32: "f32", np.float64: "f64"}[dtype]
    a = RNG.standard_normal((m, k)).astype(dtype)
    b = RNG.standard_normal((k, n)).astype(dtype)
    c = RNG.standard_normal((m, n)).astype(dtype)
    out = np.full((m, n), np.nan, dtype)
    module = run(MATMUL.format(m=m, k=k, n=n, t=t), [a, b, c], [out], r=schedule)
    exact = c.astype(np.float64) + a.astype(np.float64) @ b.astype(np.float64)
    check(out, exact, np.abs(c) + np.abs(a) @ np.abs(b), k)
    return module


SIZES = [(1, 1, 1), (7, 17, 33), (17, 7, 16), (33, 100, 7), (100, 33, 100), (6, 1, 64)]


@pytest.mark.parametrize("m, k, n", SIZES)
@pytest.mark.parametrize(
    "schedule",
    [
        ScheduleAttr([0, 1, 2], parallel=[0, 1], vector=8, micro=[0, 1, 4, 16]),
        ScheduleAttr([0, 1, 2], parallel=[0], vector=16, micro=[0, 1, 6, 64]),
        ScheduleAttr([0, 1, 2], vector=4, micro=[0, 1, 3, 4]),
    ],
    ids=["4x16 of 8", "6x64 of 16", "3x4 of 4"],
)
def test_a_micro_kernel_matmul_matches_numpy(
    m: int, k: int, n: int, schedule: ScheduleAttr
) -> None:
    matmul(m, k, n, np.float32, schedule)


def test_an_f64_micro_kernel_matmul_matches_numpy() -> None:
    matmul(13, 9, 21, np.float64, ScheduleAttr([0, 1, 2], vector=4, micro=[0, 1, 3, 8]))


@pytest.mark.parametrize(
    "schedule",
    [  # cache blocking: k, m and n tiled (remainders peeled), B packed in KC x NR panels
        ScheduleAttr(
            [2, 0, 1], tiles=[12, 16, 10], parallel=[0, 1], vector=8, pack=[1], micro=[0, 1, 4, 16]
        ),  # fmt: skip
        ScheduleAttr([1, 2, 0], tiles=[0, 32, 7], vector=8, pack=[0, 1], micro=[0, 1, 5, 32]),
    ],
    ids=["tiled, B packed", "tiled, both packed"],
)
def test_a_tiled_and_packed_micro_kernel_matmul_matches_numpy(schedule: ScheduleAttr) -> None:
    matmul(37, 29, 71, np.float32, schedule)


def test_the_micro_kernel_carries_vector_accumulators() -> None:
    module = matmul(8, 5, 32, np.float32, ScheduleAttr([0, 1, 2], vector=8, micro=[0, 1, 4, 16]))
    (loop,) = [op for op in module.walk() if isinstance(op, scf.ForOp) and op.results]
    assert [str(r.type) for r in loop.results] == ["vector<8xf32>"] * 8
    fmas = [op for op in loop.walk() if isinstance(op, vector.FMAOp)]
    loads = [op for op in loop.walk() if isinstance(op, vector.LoadOp)]
    broadcasts = [op for op in loop.walk() if isinstance(op, vector.BroadcastOp)]
    # 4 rows x 2 vectors: B's two vectors are shared by the rows, A's four
    # broadcasts by the vectors.
    assert (len(fmas), len(loads), len(broadcasts)) == (8, 2, 4)


def test_a_batched_micro_kernel_matmul_matches_numpy() -> None:
    a = RNG.standard_normal((3, 9, 5)).astype(np.float32)
    b = RNG.standard_normal((3, 5, 21)).astype(np.float32)
    c = RNG.standard_normal((3, 9, 21)).astype(np.float32)
    out = np.full(c.shape, np.nan, np.float32)
    schedule = ScheduleAttr([0, 1, 2, 3], parallel=[0, 1, 2], vector=8, micro=[1, 2, 4, 16])
    run(BATCHED, [a, b, c], [out], r=schedule)
    exact = c.astype(np.float64) + a.astype(np.float64) @ b.astype(np.float64)
    check(out, exact, np.abs(c) + np.abs(a) @ np.abs(b), 5)


def _conv_nchw(x: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The exact stride-1 convolution and the sum of |terms|, in float64."""
    f, c, kh, kw = w.shape
    oh, ow = x.shape[2] - kh + 1, x.shape[3] - kw + 1
    exact = np.zeros((x.shape[0], f, oh, ow))
    magnitude = np.zeros_like(exact)
    for i in range(kh):
        for j in range(kw):
            patch = x[:, :, i : i + oh, j : j + ow].astype(np.float64)
            exact += np.einsum("nchw,fc->nfhw", patch, w[:, :, i, j].astype(np.float64))
            magnitude += np.einsum(
                "nchw,fc->nfhw", np.abs(patch), np.abs(w[:, :, i, j]).astype(np.float64)
            )
    return exact, magnitude


def test_an_nchw_micro_kernel_convolution_matches_numpy() -> None:
    """m = the output channel f, n = the output column (stride 1)."""
    x = RNG.standard_normal((1, 3, 11, 21)).astype(np.float32)
    w = RNG.standard_normal((5, 3, 3, 3)).astype(np.float32)
    o = RNG.standard_normal((1, 5, 9, 19)).astype(np.float32)
    out = np.full(o.shape, np.nan, np.float32)
    schedule = ScheduleAttr(
        [0, 1, 2, 3, 4, 5, 6], parallel=[0, 1, 2], vector=8, micro=[1, 3, 2, 16]
    )
    run(CONV_NCHW, [x, w, o], [out], c=schedule)
    exact, magnitude = _conv_nchw(x, w)
    check(out, exact + o, magnitude + np.abs(o), 27)


def test_an_nhwc_micro_kernel_convolution_matches_numpy() -> None:
    """m = the output column ow (stride 2), n = the output channel f."""
    x = RNG.standard_normal((1, 9, 15, 3)).astype(np.float32)
    w = RNG.standard_normal((3, 3, 3, 20)).astype(np.float32)
    o = RNG.standard_normal((1, 4, 7, 20)).astype(np.float32)
    out = np.full(o.shape, np.nan, np.float32)
    schedule = ScheduleAttr([0, 1, 2, 3, 4, 5, 6], parallel=[0, 1, 2, 6], vector=8,
                            micro=[2, 6, 3, 16])  # fmt: skip
    run(CONV_NHWC, [x, w, o], [out], r=schedule)
    nchw_x = x.transpose(0, 3, 1, 2)[:, :, :, :]
    nchw_w = w.transpose(3, 2, 0, 1)
    full, magnitude = _conv_nchw(nchw_x, nchw_w)
    exact = full[:, :, ::2, ::2].transpose(0, 2, 3, 1) + o
    check(out, exact, magnitude[:, :, ::2, ::2].transpose(0, 2, 3, 1) + np.abs(o), 27)


FILLED = """
func.func @main(%a: tensor<10x7xf32>, %b: tensor<7x{n}xf32>) -> tensor<10x{n}xf32> {{
  %zero = arith.constant {init} : f32
  %e = tensor.empty() : tensor<10x{n}xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<10x{n}xf32>) -> tensor<10x{n}xf32>
  %r = linalg.matmul ins(%a, %b : tensor<10x7xf32>, tensor<7x{n}xf32>) outs(%f : tensor<10x{n}xf32>) -> tensor<10x{n}xf32>
  func.return %r : tensor<10x{n}xf32>
}}
"""


@pytest.mark.parametrize(
    "n, schedule, absorbed",
    [
        (32, ScheduleAttr([0, 2, 1], vector=8, micro=[0, 1, 4, 16]), True),
        (24, ScheduleAttr([0, 2, 1], vector=8, micro=[0, 1, 3, 16]), True),  # a block of 1 vector
        (20, ScheduleAttr([0, 2, 1], vector=8, micro=[0, 1, 4, 16]), True),  # overlapping blocks
        (12, ScheduleAttr([0, 2, 1], vector=8, micro=[0, 1, 4, 16]), True),  # vectors at 0, 4
        (
            36,
            ScheduleAttr(
                [0, 2, 1], tiles=[0, 16, 0], parallel=[0, 1], vector=8, micro=[0, 1, 4, 16]
            ),
            False,
        ),  # the last tile of n 4 columns: scalar
        (
            32,
            ScheduleAttr([0, 2, 1], tiles=[0, 0, 4], vector=8, micro=[0, 1, 4, 16]),
            False,
        ),  # k tiled
        (
            88,
            ScheduleAttr(
                [0, 2, 1], tiles=[0, 32, 0], parallel=[0, 1], vector=8, micro=[0, 1, 4, 16]
            ),
            True,
        ),  # n in tiles of 32 columns (cache blocking), the last tile 24
    ],
    ids=[
        "whole vectors",
        "a partial block",
        "overlapping blocks",
        "overlapping vectors",
        "scalar columns",
        "k tiled",
        "n tiled",
    ],
)
def test_the_output_fill_becomes_the_initial_accumulators(
    n: int, schedule: ScheduleAttr, absorbed: bool
) -> None:
    """Where the blocks write every output element, the fill before the op
    starts the accumulators (no fill loop, no accumulator loads), and the
    last blocks of m (10 rows in blocks of 4 or 3) and n overlap the ones
    before them; elsewhere the fill runs and the blocks load what it wrote."""
    a = RNG.standard_normal((10, 7)).astype(np.float32)
    b = RNG.standard_normal((7, n)).astype(np.float32)
    out = np.full((10, n), np.nan, np.float32)
    module = run(FILLED.format(n=n, init="1.500000e+00"), [a, b], [out], r=schedule)
    exact = 1.5 + a.astype(np.float64) @ b.astype(np.float64)
    check(out, exact, 1.5 + np.abs(a) @ np.abs(b), 7)
    output_loads = [op for op in module.walk() if isinstance(op, vector.LoadOp)
                    and "10x" in str(op.base.type)]  # fmt: skip
    stores = [op for op in module.walk() if isinstance(op, memref.StoreOp)]
    assert (not output_loads) == absorbed
    # The fill's loop stores the constant: only when not absorbed (scalar remainders also store).
    fills = [s for s in stores if isinstance(s.value.owner, arith.ConstantOp)]
    assert (not fills) == absorbed


@pytest.mark.parametrize(
    "n, kernels, minima",
    [(28, 1, 2), (20, 2, 1)],
    ids=["one overlapping block", "a narrower last block"],
)
def test_overlapping_blocks(n: int, kernels: int, minima: int) -> None:
    """With the fill absorbed, 10 rows in blocks of 4 run as 3 whole blocks,
    the last starting at 6 (an `arith.minsi`). 28 columns in blocks of 16
    (two vectors of 8) run as 2 whole blocks, the last starting at 12: one copy
    of the kernel. Of 20 columns, the 4 past the first block fit in one
    vector, which runs as a block of its own at column 12 (a second copy,
    computing 4 columns twice instead of 12). Never a partial block of rows,
    never the scalar body."""
    a = RNG.standard_normal((10, 7)).astype(np.float32)
    b = RNG.standard_normal((7, n)).astype(np.float32)
    out = np.full((10, n), np.nan, np.float32)
    schedule = ScheduleAttr([0, 2, 1], vector=8, micro=[0, 1, 4, 16])
    module = run(FILLED.format(n=n, init="0.000000e+00"), [a, b], [out], r=schedule)
    check(out, a.astype(np.float64) @ b.astype(np.float64), np.abs(a) @ np.abs(b), 7)
    carrying = [op for op in module.walk() if isinstance(op, scf.ForOp) and op.results]
    assert len(carrying) == kernels
    assert not [op for op in module.walk() if isinstance(op, arith.MulfOp)]
    assert len([op for op in module.walk() if isinstance(op, arith.MinSIOp)]) == minima
