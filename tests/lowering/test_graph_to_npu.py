"""Matrix products lowered to NPU programs (lowering/graph_to_npu/matmul.py),
run in the functional simulator against NumPy and timed by the cycle model."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from ember.dialects.npu.machine import F32, INT8, INT32, NpuParams, NpuProgramError, check_program
from ember.lowering.graph_to_npu.matmul import (
    Matmul,
    MatmulSchedule,
    ProgramBuilder,
    RowMajor,
    check_matmul,
    default_schedule,
    dense,
    emit_products,
)
from ember.lowering.graph_to_npu.scratchpad import Operand, allocate
from ember.targets.npu.simulator.cycles import cycle_model
from ember.targets.npu.simulator.functional import run_program

PARAMS = NpuParams()
ONES = 0  # DRAM: dim float ones at 0, the operands from 1024


class Image:
    """A DRAM image with arrays placed one after the other."""

    def __init__(self) -> None:
        self.dram = np.zeros(1 << 20, np.uint8)
        self.dram[:64] = np.ones(16, np.float32).view(np.uint8)
        self.top = 1024

    def put(self, array: np.ndarray) -> int:
        address = self.top
        data = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
        self.dram[address : address + data.size] = data
        self.top += -(-data.size // 64) * 64 + 64
        return address

    def room(self, shape: tuple[int, ...], dtype: type) -> int:
        return self.put(np.zeros(shape, dtype))

    def get(self, address: int, shape: tuple[int, ...], dtype: type) -> np.ndarray:
        size = int(np.prod(shape)) * np.dtype(dtype).itemsize
        return self.dram[address : address + size].view(dtype).reshape(shape)


def _program(products: list[Matmul], schedules: list[MatmulSchedule] | None = None):
    builder = ProgramBuilder(PARAMS, {F32.code: ONES})
    schedules = schedules or [default_schedule(p, PARAMS) for p in products]
    emit_products(builder, products, schedules)
    return builder.finish()


def _float_product(image: Image, rng: np.random.Generator, m: int, k: int, n: int, bias: bool,
                   relu: bool) -> tuple[Matmul, np.ndarray]:  # fmt: skip
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    row = rng.standard_normal(n).astype(np.float32)
    want = a.astype(np.float64) @ b + (row if bias else 0)
    product = dense("mm", m, k, n, image.put(a), image.put(b), image.room((m, n), np.float32),
                     image.put(row) if bias else None, relu=relu)  # fmt: skip
    return product, np.maximum(want, 0) if relu else want


@pytest.mark.parametrize(("m", "k", "n"), [(1, 1, 1), (16, 16, 16), (37, 50, 29), (8, 200, 70),
                                           (100, 33, 130)])  # fmt: skip
@pytest.mark.parametrize(("bias", "relu"), [(False, False), (True, True), (True, False)])
def test_float_products_match_numpy(m: int, k: int, n: int, bias: bool, relu: bool) -> None:
    """Edge tiles in every dim (m, k, n not multiples of 16), with and
    without a bias row and a ReLU."""
    image = Image()
    product, want = _float_product(image, np.random.default_rng(m * k + n), m, k, n, bias, relu)
    run_program(_program([product]), image.dram)
    got = image.get(product.c.address, (m, n), np.float32)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.sqrt(k))


@pytest.mark.parametrize("schedule", [MatmulSchedule(1, 1, buffers=1, regions=1),
                                      MatmulSchedule(2, 3, buffers=3), MatmulSchedule(5, 2)])  # fmt: skip
def test_every_schedule_computes_the_same(schedule: MatmulSchedule) -> None:
    image = Image()
    product, want = _float_product(image, np.random.default_rng(1), 70, 40, 50, True, True)
    run_program(_program([product], [schedule]), image.dram)
    np.testing.assert_allclose(image.get(product.c.address, (70, 50), np.float32), want, rtol=1e-5,
                               atol=1e-4)  # fmt: skip


def test_int8_products_are_exact() -> None:
    rng = np.random.default_rng(2)
    a = rng.integers(-128, 128, (45, 70), dtype=np.int8)
    b = rng.integers(-128, 128, (70, 38), dtype=np.int8)
    image = Image()
    wide = dense("mm", 45, 70, 38, image.put(a), image.put(b), image.room((45, 38), np.int32),
                  elem=INT8, out=INT32)  # fmt: skip
    narrow = dense("q", 45, 70, 38, wide.a.address, wide.b.address,
                   image.room((45, 38), np.int8), relu=True, elem=INT8, out=INT8, scale=1 / 512,
                   zero_point=3)  # fmt: skip
    run_program(_program([wide, narrow]), image.dram)
    exact = a.astype(np.int64) @ b.astype(np.int64)
    np.testing.assert_array_equal(image.get(wide.c.address, (45, 38), np.int32), exact)
    requantised = np.clip(np.round(np.maximum(exact, 0).astype(np.float32) / 512) + 3, -128, 127)
    np.testing.assert_array_equal(image.get(narrow.c.address, (45, 38), np.int8), requantised)


def test_a_chain_reads_what_the_product_before_it_stored() -> None:
    """Two layers through DRAM: the relay orders the second's loads after the
    first's stores (the program is checked for missing dependencies)."""
    rng = np.random.default_rng(3)
    image = Image()
    first, hidden = _float_product(image, rng, 20, 36, 48, True, True)
    w = rng.standard_normal((48, 24)).astype(np.float32)
    second = dense(
        "mm2", 20, 48, 24, first.c.address, image.put(w), image.room((20, 24), np.float32)
    )
    program = _program([first, second])
    check_program(program, PARAMS)
    run_program(program, image.dram)
    np.testing.assert_allclose(image.get(second.c.address, (20, 24), np.float32), hidden @ w, rtol=1e-4,
                               atol=1e-4)  # fmt: skip


def test_a_chain_without_its_relay_is_rejected() -> None:
    image = Image()
    first, _ = _float_product(image, np.random.default_rng(4), 16, 16, 16, False, False)
    second = dense(
        "mm2", 16, 16, 16, first.c.address, first.b.address, image.room((16, 16), np.float32)
    )
    program = _program([first, second])
    relay = next(i for i, inst in enumerate(program) if inst.mnemonic == "alu")
    with pytest.raises(NpuProgramError, match="waits for a token|missing|left"):
        check_program(program[:relay] + program[relay + 1 :], PARAMS)


def test_double_buffering_overlaps_the_loads() -> None:
    """The same 128^3 int8 product with one SP buffer and with two: the
    second overlaps each step's loads with the gemms of the one before."""
    product = dense("mm", 128, 128, 128, 1024, 1024 + 128 * 128, 1024 + 2 * 128 * 128,
                     elem=INT8, out=INT32)  # fmt: skip
    single = cycle_model(_program([product], [MatmulSchedule(4, 4, buffers=1)]))
    double = cycle_model(_program([product], [MatmulSchedule(4, 4, buffers=2)]))
    assert double.macs == single.macs == 128**3
    assert double.cycles < 0.7 * single.cycles
    assert double.utilization > 0.8


def test_the_default_schedule_fits_the_accumulator_and_reuses_tiles() -> None:
    product = dense("mm", 512, 512, 512, 0, 0, 0, elem=INT8, out=INT32)
    schedule = default_schedule(product, PARAMS)
    rows = schedule.block_m * schedule.block_n * PARAMS.dim * schedule.regions
    assert rows < PARAMS.accumulator_rows
    assert schedule.block_m * schedule.block_n >= 16
    assert default_schedule(dataclasses.replace(product, m=1, n=1), PARAMS) == MatmulSchedule(1, 1)


@pytest.mark.parametrize(("change", "reason"), [
    ({"elem": INT32}, "int32 operands"),
    ({"out": INT8}, "int8 results of f32"),
    ({"k": 20000}, "rows of A of 80000 bytes"),
])  # fmt: skip
def test_what_the_npu_cannot_run_is_named(change: dict, reason: str) -> None:
    sizes = {"m": 4, "k": change.pop("k", 4), "n": 4}
    product = dense("mm", *sizes.values(), 0, 0, 0, change.pop("bias", None))
    product = dataclasses.replace(product, **change)
    assert reason in (check_matmul(product, PARAMS) or "")
    with pytest.raises(NpuProgramError, match=f"mm: the NPU cannot run {reason}"):
        _program([product])


def test_the_scratchpad_allocator_keeps_operands_in_one_bank() -> None:
    lines = PARAMS.bank_lines
    placed = allocate([Operand(f"t{i}", lines // 2 + 1, 4) for i in range(4)]
                      + [Operand("small", 64, 4)], PARAMS)  # fmt: skip
    for name, start in placed.items():
        size = 64 if name == "small" else lines // 2 + 1
        assert start // lines == (start + size - 1) // lines
        assert start % 4 == 0
    assert len({start // lines for name, start in placed.items() if name != "small"}) == 4


def test_the_scratchpad_allocator_names_what_does_not_fit() -> None:
    with pytest.raises(NpuProgramError, match="no bank has 4096 lines left for t4"):
        allocate([Operand(f"t{i}", PARAMS.bank_lines) for i in range(5)], PARAMS)
    with pytest.raises(NpuProgramError, match="more than a bank holds"):
        allocate([Operand("huge", PARAMS.bank_lines + 1)], PARAMS)


@pytest.mark.parametrize("per_row", [False, True])
def test_int8_products_add_an_int32_bias_on_the_vector_unit(per_row: bool) -> None:
    """The bias (one value per column, or per row as a convolution's) loaded
    into accumulator slots and added by `alu`, then requantised."""
    rng = np.random.default_rng(9)
    m, k, n = 37, 50, 45
    a = rng.integers(-128, 128, (m, k), dtype=np.int8)
    b = rng.integers(-128, 128, (k, n), dtype=np.int8)
    bias = rng.integers(-200000, 200000, m if per_row else n).astype(np.int32)
    image = Image()
    if per_row:  # each row's value repeated across a tile's columns
        access = RowMajor(image.put(np.repeat(bias[:, None], 16, axis=1)), 16 * 4, 4)
    else:  # the bias row, read with stride 0 for every row
        access = RowMajor(image.put(bias), 0, 4)
    product = dataclasses.replace(
        dense("mm", m, k, n, image.put(a), image.put(b), image.room((m, n), np.int8), elem=INT8,
              out=INT8, scale=1 / 4096, zero_point=-5, relu=True),
        bias=access, bias_per_row=per_row)  # fmt: skip
    program = _program([product, dataclasses.replace(product, name="again")])
    run_program(program, image.dram)
    exact = a.astype(np.int64) @ b.astype(np.int64) + (bias[:, None] if per_row else bias)
    want = np.clip(np.round(np.maximum(exact, 0).astype(np.float32) / 4096) - 5, -128, 127)
    np.testing.assert_array_equal(image.get(product.c.address, (m, n), np.int8), want)
