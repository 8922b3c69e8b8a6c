"""Lowered `gpu` kernels to PTX (`ptx_of`) and through ptxas (`assemble`).

The kernels are the lit fixtures: the 16x16-tiled matmul with two shared
tiles (tests/filecheck/dialects/ember_gpu/shared.mlir) and the dynamic-size
elementwise kernel with math ops and the shared-memory row sums, and the
warp sum by shuffles (the two cases of
tests/filecheck/lowering/gpu-to-nvvm.mlir). Tests that run ptxas skip
where it is not on PATH.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from ember.context import make_context
from ember.lowering.gpu_to_nvvm import convert_gpu_to_nvvm
from ember.targets.cuda import PtxasError, PtxCodegenError, assemble, ptx_of
from ember.targets.cuda.ptx import target_machine
from ember.targets.cuda.ptxas import parse_resources

ROOT = Path(__file__).resolve().parents[3]
MATMUL = ROOT / "tests/filecheck/dialects/ember_gpu/shared.mlir"
KERNELS = ROOT / "tests/filecheck/lowering/gpu-to-nvvm.mlir"
ARCHS = ("sm_80", "sm_90")

needs_ptxas = pytest.mark.skipif(
    shutil.which("ptxas") is None, reason="ptxas (CUDA toolkit) is not on PATH"
)


def lowered(path: Path, case: int = 0) -> ModuleOp:
    """The `case`th split (`// -----`) of the lit file at `path`, lowered."""
    text = path.read_text().split("\n// -----\n")[case]
    module = Parser(make_context(), text, str(path)).parse_module()
    convert_gpu_to_nvvm(module)
    return module


def entries(ptx: str) -> list[str]:
    return re.findall(r"^\.visible \.entry (\w+)\(", ptx, re.MULTILINE)


@pytest.mark.parametrize("arch", ARCHS)
def test_the_matmul_is_an_entry_with_shared_tiles_loads_and_a_barrier(arch: str) -> None:
    ptx = ptx_of(lowered(MATMUL), arch)
    assert f".target {arch}" in ptx
    assert entries(ptx) == ["matmul"]
    assert re.search(r"\.shared \.align 16 \.b8 matmul_shared0\[1024\]", ptx)
    assert "ld.global" in ptx and "st.shared" in ptx and "ld.shared" in ptx
    assert "bar.sync" in ptx


@needs_ptxas
@pytest.mark.parametrize("arch", ARCHS)
def test_ptxas_takes_the_matmul_and_reports_two_kib_of_shared_memory(arch: str) -> None:
    report = assemble(ptx_of(lowered(MATMUL), arch), arch)
    matmul = report.kernels["matmul"]
    assert matmul.shared_bytes == 2 * 16 * 16 * 4
    assert matmul.barriers == 1
    assert matmul.registers > 0
    assert (matmul.spill_stores, matmul.spill_loads) == (0, 0)
    assert report.cubin.startswith(b"\x7fELF")


@pytest.mark.parametrize("arch", ARCHS)
def test_math_becomes_ptx_approximations_and_dynamic_sizes_parameters(arch: str) -> None:
    ptx = ptx_of(lowered(KERNELS), arch)
    assert entries(ptx) == ["elementwise", "row_sums"]
    assert re.search(r"\.func helper\(", ptx)  # a device function, not an entry
    elementwise = ptx[ptx.index(".entry elementwise") : ptx.index(".entry row_sums")]
    for instruction in ("ex2.approx", "lg2.approx", "tanh.approx.f32", "sqrt.rn.f32"):
        assert instruction in elementwise
    # x and y: a pointer and two sizes each; the index scale: 7 parameters.
    assert len(re.findall(r"\.param \.\w+ [^,)]*elementwise_param_\d+", elementwise)) == 7


@needs_ptxas
@pytest.mark.parametrize("arch", ARCHS)
def test_ptxas_takes_the_elementwise_and_shared_row_sum_kernels(arch: str) -> None:
    report = assemble(ptx_of(lowered(KERNELS), arch), arch)
    assert report.kernels["elementwise"].shared_bytes == 0
    assert report.kernels["row_sums"].shared_bytes == 16 * 4
    assert report.kernels["row_sums"].barriers == 1


@pytest.mark.parametrize("arch", ARCHS)
def test_shuffles_are_whole_warp_butterflies_that_ptxas_takes(arch: str) -> None:
    ptx = ptx_of(lowered(KERNELS, case=1), arch)
    assert entries(ptx) == ["warp_sum"]
    masks = re.findall(r"shfl\.sync\.bfly\.b32\s+%r\d+, %r\d+, (\d+), 31, -1;", ptx)
    assert masks == ["16", "8", "4", "2", "1"]
    assert "bar.sync" not in ptx
    if shutil.which("ptxas"):
        kernel = assemble(ptx, arch).kernels["warp_sum"]
        assert (kernel.shared_bytes, kernel.barriers, kernel.spill_stores) == (0, 0, 0)


# The scalar lowerings that need care (saturating conversions, never-trapping
# division, integer intrinsics, NaN-aware max/min, f16 through f32, f64 and
# i1 memory): NVPTX must select every one (LLVM aborts the process where it
# cannot) without calling a function.
SCALARS = """
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "ember_kernels"}> ({
    "gpu.func"() <{function_type = (memref<8xf32>, memref<8xf64>, memref<8xi32>, memref<8xf16>, memref<8xi1>, memref<8xi64>) -> (), kernel}> ({
    ^bb0(%x: memref<8xf32>, %d: memref<8xf64>, %n: memref<8xi32>, %h: memref<8xf16>, %b: memref<8xi1>, %q: memref<8xi64>):
      %tx = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %v = memref.load %x[%tx] : memref<8xf32>
      %w = memref.load %d[%tx] : memref<8xf64>
      %k = memref.load %n[%tx] : memref<8xi32>
      %hh = memref.load %h[%tx] : memref<8xf16>
      %bb = memref.load %b[%tx] : memref<8xi1>
      %l = memref.load %q[%tx] : memref<8xi64>
      %a1 = arith.fptosi %v : f32 to i32
      %a2 = arith.fptoui %w : f64 to i32
      %a3 = arith.uitofp %l : i64 to f32
      %a4 = arith.divsi %k, %a1 : i32
      %a5 = arith.remui %k, %a2 : i32
      %a6 = arith.floordivsi %a4, %a5 : i32
      %a7 = math.ctlz %a6 : i32
      %a8 = math.cttz %a7 : i32
      %a9 = math.ctpop %a8 : i32
      %a10 = math.absi %a9 : i32
      %f1 = arith.maxnumf %v, %a3 : f32
      %f2 = arith.minimumf %w, %w : f64
      %f3 = math.roundeven %f2 : f64
      %f4 = math.rsqrt %f1 : f32
      %f5 = math.sqrt %f3 : f64
      %f6 = math.exp %hh : f16
      %f7 = math.tanh %f6 : f16
      %f8 = arith.mulf %f7, %hh : f16
      %f9 = math.fma %v, %f4, %f1 : f32
      %f10 = math.copysign %f9, %v : f32
      %f11 = math.log10 %f10 : f32
      %f12 = math.log %f11 : f32
      %f13 = math.exp2 %f12 : f32
      %f14 = math.floor %f13 : f32
      %f15 = math.round %f14 : f32
      %f16 = arith.select %bb, %f15, %v : f32
      %f17 = arith.truncf %f5 : f64 to f16
      %f18 = arith.addf %f17, %f8 : f16
      %c = arith.cmpf olt, %f16, %v : f32
      %f19 = arith.sitofp %a10 : i32 to f32
      %f20 = arith.addf %f19, %f16 : f32
      memref.store %f20, %x[%tx] : memref<8xf32>
      memref.store %f18, %h[%tx] : memref<8xf16>
      memref.store %c, %b[%tx] : memref<8xi1>
      memref.store %f5, %d[%tx] : memref<8xf64>
      "gpu.return"() : () -> ()
    }) {sym_name = "ops"} : () -> ()
  }) : () -> ()
}
"""


@pytest.mark.parametrize("arch", ARCHS)
def test_every_kind_of_scalar_lowering_selects_on_nvptx_without_calls(arch: str) -> None:
    module = Parser(make_context(), SCALARS).parse_module()
    convert_gpu_to_nvvm(module)
    ptx = ptx_of(module, arch)
    assert entries(ptx) == ["ops"]
    assert "call" not in ptx
    if shutil.which("ptxas"):
        assert assemble(ptx, arch).kernels["ops"].registers > 0


@needs_ptxas
def test_a_rejected_kernel_is_named_with_ptxas_message() -> None:
    ptx = ptx_of(lowered(MATMUL), "sm_90")
    broken = ptx.replace("bar.sync", "bar.bogus", 1)
    with pytest.raises(
        PtxasError, match=r"ptxas -arch=sm_90 rejected kernel 'matmul': PTX line \d+: .*bogus"
    ):
        assemble(broken, "sm_90")


@needs_ptxas
def test_ptx_for_a_newer_arch_than_asked_is_rejected_in_one_line() -> None:
    with pytest.raises(PtxasError, match=r"^ptxas -arch=sm_80 rejected the PTX: .*SM version"):
        assemble(ptx_of(lowered(MATMUL), "sm_90"), "sm_80")


def test_a_missing_ptxas_is_one_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "")
    with pytest.raises(PtxasError, match=r"^ptxas not found on PATH"):
        assemble(".version 7.8\n", "sm_90")


def test_ptxas_verbose_output_becomes_each_kernels_resources() -> None:
    log = """ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'k' for 'sm_90'
ptxas info    : Function properties for k
    16 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads
ptxas info    : Used 40 registers, used 1 barriers, 2048 bytes smem, 368 bytes cmem[0]
ptxas info    : Compiling entry function 'other' for 'sm_90'
ptxas info    : Function properties for other
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 8 registers
"""
    found = parse_resources(log)
    k = found["k"]
    assert (k.registers, k.shared_bytes, k.stack_bytes, k.spill_stores, k.spill_loads, k.barriers) == (
        40, 2048, 16, 8, 4, 1
    )  # fmt: skip
    assert (found["other"].registers, found["other"].shared_bytes) == (8, 0)


def test_unlowered_kernels_and_unknown_archs_are_refused() -> None:
    module = Parser(make_context(), MATMUL.read_text()).parse_module()
    with pytest.raises(PtxCodegenError, match="run convert-gpu-to-nvvm first .*gpu.func"):
        ptx_of(module)
    with pytest.raises(PtxCodegenError, match="not a compute capability: 'compute_90'"):
        target_machine("compute_90")
