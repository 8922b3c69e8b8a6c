"""The NPU's functional simulator against NumPy: int8 matrix products bit for
bit (one tile, and a 64 x 48 x 80 product tiled over the matrix unit with
double-buffered loads), requantised int8 stores, f32 and bf16 products
within rounding, the vector unit's ops; programs with a missing dependency
or a DRAM access outside the image do not run."""

from __future__ import annotations

import numpy as np
import pytest

from ember.dialects.npu.machine import NpuParams, NpuProgramError, f32_bits
from ember.targets.npu.isa import encode_program
from ember.targets.npu.simulator.functional import run_program
from tests.support.npu_programs import FINISH, gemm, load, store, tiled_matmul
from tests.support.npu_programs import instruction as _i


def _dram(*arrays: np.ndarray, size: int = 1 << 16) -> tuple[np.ndarray, list[int]]:
    dram, offsets, at = np.zeros(size, np.uint8), [], 0
    for array in arrays:
        data = np.ascontiguousarray(array).view(np.uint8).ravel()
        dram[at : at + data.size] = data
        offsets.append(at)
        at += (data.size + 63) // 64 * 64
    return dram, offsets


def test_one_int8_tile_requantised() -> None:
    rng = np.random.default_rng(0)
    a = rng.integers(-128, 128, (16, 16), dtype=np.int8)
    b = rng.integers(-128, 128, (16, 12), dtype=np.int8)
    dram, (at_a, at_b) = _dram(a, b)
    out = 8192
    scale = 0.0037
    program = [load(at_a, 0, 16, 16, 0, 16), load(at_b, 1024, 16, 12, 0, 12, flags="push_next"),
               gemm(0, 1024, 0, 16, 16, 12, 0, flags="pop_prev push_next"),
               _i("config_store", scale=f32_bits(scale), zero_point=-5, relu=1),
               store(out, 0, 16, 12, 0, 12, flags="pop_prev"), FINISH]  # fmt: skip
    run_program(encode_program(program), dram)
    exact = a.astype(np.int32) @ b.astype(np.int32)
    want = np.clip(np.rint(np.maximum(exact, 0).astype(np.float32) * np.float32(scale)) - 5,
                   -128, 127).astype(np.int8)  # fmt: skip
    np.testing.assert_array_equal(dram[out : out + 16 * 12].view(np.int8).reshape(16, 12), want)


@pytest.mark.parametrize("buffers", [1, 2])
def test_a_tiled_int8_matmul_is_exact(buffers: int) -> None:
    rng = np.random.default_rng(1)
    m, k, n = 64, 48, 80
    a = rng.integers(-128, 128, (m, k), dtype=np.int8)
    b = rng.integers(-128, 128, (k, n), dtype=np.int8)
    dram, (at_a, at_b) = _dram(a, b)
    out = 16384
    run_program(tiled_matmul(m, k, n, at_a, at_b, out, buffers), dram)
    got = dram[out : out + 4 * m * n].view(np.int32).reshape(m, n)
    np.testing.assert_array_equal(got, a.astype(np.int32) @ b.astype(np.int32))


@pytest.mark.parametrize("elem", [1, 2], ids=["bf16", "f32"])
def test_float_tiles_within_rounding(elem: int) -> None:
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((16, 16), np.float32), rng.standard_normal((16, 16), np.float32)
    if elem == 1:  # bf16: the upper halves
        a16, b16 = (np.ascontiguousarray(x).view(np.uint32) >> 16 for x in (a, b))
        a, b = ((x << 16).view(np.float32) for x in (a16, b16))
        operands = [a16.astype(np.uint16), b16.astype(np.uint16)]
    else:
        operands = [a, b]
    dram, (at_a, at_b) = _dram(*operands)
    size, out = 2 if elem == 1 else 4, 16384
    lines = size  # SP lines per row
    program = [load(at_a, 0, 16, 16, elem, 16 * size),
               load(at_b, 16 * lines, 16, 16, elem, 16 * size, flags="push_next"),
               gemm(0, 16 * lines, 0, 16, 16, 16, elem, flags="pop_prev push_next"),
               store(out, 0, 16, 16, 2, 64, flags="pop_prev"), FINISH]  # fmt: skip
    run_program(program, dram)
    got = dram[out : out + 1024].view(np.float32).reshape(16, 16)
    np.testing.assert_allclose(got, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-5,
                               atol=1e-5)  # fmt: skip


@pytest.mark.parametrize(("op", "elem", "fn"), [
    (0, 3, lambda x, y: x + y), (1, 2, lambda x, y: x - y), (2, 2, lambda x, y: x * y),
    (3, 3, np.maximum), (4, 2, np.minimum), (5, 2, lambda x, y: np.maximum(x, 0)),
    (6, 3, lambda x, y: (x.astype(np.int64) + (1 << 2)) >> 3), (7, 3, lambda x, y: x),
])  # fmt: skip
def test_vector_unit(op: int, elem: int, fn: object) -> None:
    rng = np.random.default_rng(op)
    dtype = np.float32 if elem == 2 else np.int32
    x = (rng.standard_normal((4, 16)) * 1000).astype(dtype)
    y = (rng.standard_normal((4, 16)) * 1000).astype(dtype)
    dram, (at_x, at_y) = _dram(x, y)
    out = 8192
    shift = op == 6
    program = [load(at_x, 0, 4, 16, elem, 64, to_acc=1),
               load(at_y, 4, 4, 16, elem, 64, to_acc=1, flags="push_next"),
               _i("alu", "pop_prev push_next", op=op, src=0, src2=4, dst=8, rows=4, cols=16,
                  use_imm=int(shift), elem=elem, imm=3 if shift else 0),
               store(out, 8, 4, 16, elem, 64, flags="pop_prev"), FINISH]  # fmt: skip
    run_program(program, dram)
    got = dram[out : out + 256].view(dtype).reshape(4, 16)
    np.testing.assert_array_equal(got, fn(x, y).astype(dtype))  # type: ignore[operator]


def test_programs_that_cannot_run_do_not() -> None:
    dram = np.zeros(1024, np.uint8)
    racy = [load(0, 0, 16, 16, 0, 16, flags="push_next"), load(256, 256, 16, 16, 0, 16),
            gemm(0, 256, 0, 16, 16, 16, 0, flags="pop_prev"), FINISH]  # fmt: skip
    with pytest.raises(NpuProgramError, match="a dependency is missing"):
        run_program(racy, dram)
    outside = [load(4000, 0, 2, 16, 0, 16), FINISH]
    with pytest.raises(NpuProgramError, match="outside the 1024-byte DRAM image"):
        run_program(outside, dram)
    with pytest.raises(NpuProgramError, match="rows = 16 is not in 1..8"):
        run_program([load(0, 0, 16, 16, 0, 16), FINISH], dram, NpuParams(dim=8))


@pytest.mark.parametrize(("elem", "dtype", "to_acc"), [(0, np.int8, 0), (2, np.float32, 0),
                                                       (2, np.float32, 1)])  # fmt: skip
def test_a_strided_load_takes_every_step_th_element(elem: int, dtype: type, to_acc: int) -> None:
    """Rows 40 bytes apart, every third element: the same as NumPy's
    slicing, into the scratchpad or the accumulator (then stored back)."""
    source = np.arange(600).astype(dtype)
    dram, (at,) = _dram(source)
    size = np.dtype(dtype).itemsize
    rows, cols, step, stride = 5, 7, 3, 40
    out = 8192
    local = 0 if to_acc else 2048
    program = [_i("load_strided", "push_next", dram_addr=at + 2 * size, stride=stride,
                  local=local, rows=rows, cols=cols, to_acc=to_acc, elem=elem, step=step),
               _i("alu", "pop_prev push_next", op=7, src=1000, src2=1000, dst=1000, rows=1,
                  cols=1, use_imm=1, elem=2, imm=0),
               store(out, local, rows, cols, elem, cols * size, from_acc=to_acc,
                     flags="pop_prev"), FINISH]  # fmt: skip
    run_program(encode_program(program), dram)
    flat = source.view(np.uint8)
    want = np.stack([flat[2 * size + r * stride:][:(cols - 1) * step * size + size]
                     .view(dtype)[::step] for r in range(rows)])  # fmt: skip
    got = dram[out : out + rows * cols * size].view(dtype).reshape(rows, cols)
    np.testing.assert_array_equal(got, want)


def test_a_strided_load_past_dram_or_with_step_0_is_rejected() -> None:
    dram = np.zeros(1024, np.uint8)
    program = [_i("load_strided", dram_addr=0, stride=16, local=0, rows=1, cols=16, to_acc=0,
                  elem=0, step=0), FINISH]  # fmt: skip
    with pytest.raises(NpuProgramError, match="step = 0"):
        run_program(program, dram)
    program[0] = _i("load_strided", dram_addr=0, stride=16, local=0, rows=1, cols=16, to_acc=0,
                    elem=0, step=100)  # fmt: skip
    with pytest.raises(NpuProgramError, match="outside the 1024-byte DRAM image"):
        run_program(program, dram)
