"""The NPU's cycle model: the timing rules of single instructions, the
matrix unit's peak in steady state, double buffering hiding the loads, and
a tiled matmul against an analytical bound."""

from __future__ import annotations

import pytest

from ember.dialects.npu.machine import NpuParams
from ember.targets.npu.simulator.cycles import ALU_LATENCY, cycle_model
from tests.support.npu_programs import DIM, FINISH, gemm, instruction, load, tiled_matmul

PARAMS = NpuParams()


def test_a_load_takes_its_bytes_at_the_bandwidth_plus_the_latency() -> None:
    report = cycle_model([load(0, 0, 16, 16, 0, 16), FINISH])
    assert report.ends[0] == 256 // PARAMS.dma_bytes_per_cycle + PARAMS.dma_latency
    assert report.bytes_loaded == 256 and report.busy["load"] == 16


def test_back_to_back_loads_stream() -> None:
    report = cycle_model([load(0, 0, 16, 16, 0, 16), load(256, 256, 16, 16, 0, 16), FINISH])
    assert report.ends[1] - report.ends[0] == 16


def test_gemms_in_a_row_reach_the_peak() -> None:
    """Full tiles enter every dim cycles: 64 of them keep the array busy but
    for the first tile's way through it."""
    program = [gemm(0, 256, 0, 16, 16, 16, 0, accumulate=int(i > 0)) for i in range(64)]
    report = cycle_model([*program, FINISH])
    assert report.busy["compute"] == 64 * DIM
    assert report.cycles == 64 * DIM + 2 * DIM - 2 + 1
    assert report.utilization == pytest.approx(64 * DIM / report.cycles)
    assert report.utilization > 0.96


def test_an_alu_waits_for_the_gemms_it_reads() -> None:
    report = cycle_model([gemm(0, 256, 0, 16, 16, 16, 0),
                          instruction("alu", op=5, src=0, src2=0, dst=0, rows=16, cols=16,
                                      use_imm=0, elem=3, imm=0), FINISH])  # fmt: skip
    assert report.ends[1] == report.ends[0] + 16 + ALU_LATENCY


def test_double_buffering_hides_the_loads() -> None:
    single = cycle_model(tiled_matmul(128, 128, 128, 0, 1 << 16, 1 << 17, buffers=1))
    double = cycle_model(tiled_matmul(128, 128, 128, 0, 1 << 16, 1 << 17, buffers=2))
    assert double.macs == single.macs == 128**3
    assert double.cycles < 0.8 * single.cycles


def test_a_tiled_matmul_is_near_its_analytical_bound() -> None:
    """Each output tile's k steps load an A and a B tile (512 bytes: 32 DMA
    cycles) for one 16-cycle gemm, so the load module bounds it once enough
    buffers (4) cover the DMA latency: the model stays within 10% of steps x
    32 cycles (the difference: the pipeline's fill and drain)."""
    m = k = n = 128
    report = cycle_model(tiled_matmul(m, k, n, 0, 1 << 16, 1 << 17, buffers=4))
    steps = (m // DIM) * (n // DIM) * (k // DIM)
    bound = steps * 2 * DIM * DIM // PARAMS.dma_bytes_per_cycle
    assert bound <= report.cycles <= 1.1 * bound
    assert report.utilization == pytest.approx(steps * DIM**3 / (report.cycles * DIM * DIM))
