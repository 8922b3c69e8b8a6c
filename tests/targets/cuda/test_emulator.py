"""The `gpu` level run on the CPU (`emulate`): kernels compute what they
should, and the bugs a GPU would show (a missing barrier, a wrong thread
index, a race on shared memory, a missing bounds check) show here too.

Why each mutation must change the result: within a phase the emulator runs
threads one after another in order of their linear id, so a thread that
reads a slot a higher-numbered thread writes in the same phase reads the
stale value (from an earlier phase, an earlier block, or uninitialised
memory), where a barrier would have made it wait for the write.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.utils.exceptions import DiagnosticException

from ember.context import make_context
from ember.targets.cuda.emulator import EmulatedProgram, EmulationError, emulate
from ember.targets.registry import target_named

ROOT = Path(__file__).resolve().parents[3]
SHARED_MATMUL = ROOT / "tests/filecheck/dialects/ember_gpu/shared.mlir"
BARRIER = '"gpu.barrier"() : () -> ()'


def parse(text: str) -> ModuleOp:
    module = Parser(make_context(), text).parse_module()
    module.verify()
    return module


def program(text: str) -> EmulatedProgram:
    return emulate(parse(text), target_named("cpu").jit)


def launch(
    kernel: str,
    grid: tuple[int, int, int],
    block: tuple[int, int, int],
    arguments: list[tuple[str, str]],
    module: str = "ember_kernels",
) -> str:
    """`func.func @main(arguments)` launching `@module::@kernel` on `grid` x `block`."""
    params = ", ".join(f"%{name}: {t}" for name, t in arguments)
    sizes = sorted({*grid, *block})
    constants = "".join(f"    %c{s} = arith.constant {s} : index\n" for s in sizes)
    size_values = ", ".join(f"%c{s}" for s in (*grid, *block))
    values = ", ".join(f"%{name}" for name, _ in arguments)
    types = ", ".join(["index"] * 6 + [t for _, t in arguments])
    return (
        f"  func.func @main({params}) {{\n{constants}"
        f'    "gpu.launch_func"({size_values}, {values}) <{{kernel = @{module}::@{kernel}, '
        f"operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, {len(arguments)}, 0>}}>"
        f" : ({types}) -> ()\n    func.return\n  }}\n"
    )  # fmt: skip


def kernel_module(kernel_body: str, name: str, arguments: list[tuple[str, str]], host: str) -> str:
    """A container module with one kernel `name(arguments)` and the host code."""
    types = ", ".join(t for _, t in arguments)
    params = ", ".join(f"%{n}: {t}" for n, t in arguments)
    return (
        'builtin.module attributes {gpu.container_module} {\n'
        '  "gpu.module"() <{sym_name = "ember_kernels"}> ({\n'
        f'    "gpu.func"() <{{function_type = ({types}) -> (), kernel}}> ({{\n'
        f"    ^bb0({params}):\n{kernel_body}"
        '      "gpu.return"() : () -> ()\n'
        f'    }}) {{sym_name = "{name}"}} : () -> ()\n'
        "  }) : () -> ()\n"
        f"{host}}}\n"
    )  # fmt: skip


# The tiled matmul of the ember_gpu dialect's test, launched on 2x2 blocks of 16x16 ----------

MATMUL_ARGS = [("a", "memref<32x32xf32>"), ("b", "memref<32x32xf32>"), ("c", "memref<32x32xf32>")]


def matmul_source(mutate: tuple[str, str] | None = None) -> str:
    """shared.mlir's module with a host function; `mutate` replaces the first
    occurrence of a text in the kernel."""
    kernel = "\n".join(
        line for line in SHARED_MATMUL.read_text().splitlines() if not line.startswith("//")
    )
    if mutate is not None:
        old, new = mutate
        assert old in kernel
        kernel = kernel.replace(old, new, 1)
    host = launch("matmul", (2, 2, 1), (16, 16, 1), MATMUL_ARGS, module="kernels")
    closing = kernel.rstrip().rindex("}")
    return kernel[:closing] + host + "}\n"


def run_matmul(source: str, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((32, 32)).astype(np.float32)
    b = rng.standard_normal((32, 32)).astype(np.float32)
    c = np.full((32, 32), np.nan, np.float32)
    program(source).main(a, b, c)
    return c, a @ b


def test_tiled_matmul_computes_a_times_b() -> None:
    c, expected = run_matmul(matmul_source())
    np.testing.assert_allclose(c, expected, rtol=1e-5, atol=1e-5)


def test_matmul_without_its_first_barrier_is_wrong() -> None:
    # Thread (ty, tx) stores its elements of the tiles, then at once reads
    # its row of the A tile and column of the B tile: the elements of the
    # threads after it are those of the previous k-step (or uninitialised).
    source = matmul_source((BARRIER, ""))
    assert source.count(BARRIER) == 1
    c, expected = run_matmul(source)
    assert not np.allclose(c, expected, rtol=1e-3, atol=1e-3)


def test_matmul_without_its_second_barrier_is_wrong() -> None:
    # The back edge is no meeting point: thread (ty, tx) accumulates from the
    # tiles, then at once stages its elements of the next k-step's tiles, and
    # only then does the next thread accumulate. Thread (ty, tx') with
    # tx' > tx reads A-tile element (ty, tx) (and thread (ty', tx) with
    # ty' > ty reads B-tile element (ty, tx)) after it holds the next step's
    # value: with random A and B the two steps' tiles differ.
    source = matmul_source()
    second = source.rindex(BARRIER)
    source = source[:second] + source[second + len(BARRIER) :]
    assert source.count(BARRIER) == 1
    c, expected = run_matmul(source)
    assert np.isfinite(c).all()
    assert not np.allclose(c, expected, rtol=1e-3, atol=1e-3)


def test_matmul_with_an_off_by_one_thread_index_is_wrong() -> None:
    # The A tile is loaded from column k0 + tx + 1 (row-major 32 wide: the
    # last thread reads the next row's first element, inside the buffer).
    source = matmul_source(("%ak = arith.addi %k0, %tx : index",
                            "%tx1 = arith.addi %tx, %c1a : index\n"
                            "        %ak = arith.addi %k0, %tx1 : index"))  # fmt: skip
    source = source.replace("%c0 = arith.constant 0 : index",
                            "%c0 = arith.constant 0 : index\n      %c1a = arith.constant 1 : index", 1)  # fmt: skip
    c, expected = run_matmul(source)
    assert np.isfinite(c).all()
    assert not np.allclose(c, expected, rtol=1e-3, atol=1e-3)


# Elementwise over a ragged size, with a bounds check ---------------------------------------

ELEMENTWISE_ARGS = [("x", "memref<?xf32>"), ("y", "memref<?xf32>"), ("n", "index")]
ELEMENTWISE = """\
      %tx = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
      %dx = "gpu.block_dim"() <{dimension = #gpu<dim x>}> : () -> index
      %base = arith.muli %bx, %dx : index
      %i = arith.addi %base, %tx : index
      %inside = arith.cmpi ult, %i, %n : index
      scf.if %inside {
        %v = memref.load %x[%i] : memref<?xf32>
        %two = arith.constant 2.0 : f32
        %one = arith.constant 1.0 : f32
        %w = arith.mulf %v, %two : f32
        %r = arith.addf %w, %one : f32
        memref.store %r, %y[%i] : memref<?xf32>
      }
"""
N = 1000
BLOCK = 128
GRID = -(-N // BLOCK)  # 8 blocks, 1024 threads: the last 24 must not write
SENTINEL = -7.0


def run_elementwise(body: str) -> tuple[np.ndarray, np.ndarray]:
    """y = 2x + 1 over N elements; returns (the whole output buffer, the
    expected first N). The kernel sees N elements of a longer buffer."""
    host = launch("affine", (GRID, 1, 1), (BLOCK, 1, 1), ELEMENTWISE_ARGS)
    module = program(kernel_module(body, "affine", ELEMENTWISE_ARGS, host))
    x = np.random.default_rng(1).standard_normal(N).astype(np.float32)
    y = np.full(GRID * BLOCK, SENTINEL, np.float32)
    module.main(x, y[:N], N)
    return y, 2 * x + 1


def test_elementwise_over_a_ragged_size() -> None:
    y, expected = run_elementwise(ELEMENTWISE)
    np.testing.assert_allclose(y[:N], expected, rtol=1e-6)
    assert (y[N:] == SENTINEL).all()  # threads past n did nothing


def test_elementwise_with_an_off_by_one_thread_index_is_wrong() -> None:
    body = ELEMENTWISE.replace("%i = arith.addi %base, %tx : index",
                               "%c1 = arith.constant 1 : index\n"
                               "      %t1 = arith.addi %tx, %c1 : index\n"
                               "      %i = arith.addi %base, %t1 : index")  # fmt: skip
    y, expected = run_elementwise(body)
    assert y[0] == SENTINEL  # no thread has index 0 any more
    assert not np.allclose(y[:N], expected)


def test_elementwise_without_its_bounds_check_writes_past_n() -> None:
    body = ELEMENTWISE.replace("scf.if %inside {", "scf.if %true {").replace(
        "%inside = arith.cmpi ult, %i, %n : index", "%true = arith.constant true"
    )
    y, _ = run_elementwise(body)
    assert (y[N:] != SENTINEL).all()  # every thread of the grid ran


# A block reduction: a tree of barriers over shared memory ----------------------------------

REDUCE_ARGS = [("x", "memref<1024xf32>"), ("sums", "memref<4xf32>")]
REDUCE = """\
      %s = ember_gpu.shared : memref<256xf32, 3 : i64>
      %tx = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c8 = arith.constant 8 : index
      %c128 = arith.constant 128 : index
      %c256 = arith.constant 256 : index
      %base = arith.muli %bx, %c256 : index
      %i = arith.addi %base, %tx : index
      %v = memref.load %x[%i] : memref<1024xf32>
      memref.store %v, %s[%tx] : memref<256xf32, 3 : i64>
      "gpu.barrier"() : () -> ()
      scf.for %level = %c0 to %c8 step %c1 {
        %stride = arith.shrui %c128, %level : index
        %active = arith.cmpi ult, %tx, %stride : index
        scf.if %active {
          %other = arith.addi %tx, %stride : index
          %mine = memref.load %s[%tx] : memref<256xf32, 3 : i64>
          %theirs = memref.load %s[%other] : memref<256xf32, 3 : i64>
          %both = arith.addf %mine, %theirs : f32
          memref.store %both, %s[%tx] : memref<256xf32, 3 : i64>
        }
        "gpu.barrier"() : () -> ()
      }
      %first = arith.cmpi eq, %tx, %c0 : index
      scf.if %first {
        %total = memref.load %s[%c0] : memref<256xf32, 3 : i64>
        memref.store %total, %sums[%bx] : memref<4xf32>
      }
"""


def run_reduction(body: str) -> tuple[np.ndarray, np.ndarray]:
    host = launch("block_sum", (4, 1, 1), (256, 1, 1), REDUCE_ARGS)
    module = program(kernel_module(body, "block_sum", REDUCE_ARGS, host))
    x = np.random.default_rng(2).uniform(0.5, 1.5, 1024).astype(np.float32)
    sums = np.zeros(4, np.float32)
    module.main(x, sums)
    return sums, x.reshape(4, 256).astype(np.float64).sum(axis=1)


def test_block_reduction_sums_each_block() -> None:
    sums, expected = run_reduction(REDUCE)
    np.testing.assert_allclose(sums, expected, rtol=1e-5)


def test_block_reduction_without_the_tree_barrier_is_wrong() -> None:
    # The loop then holds no barrier and each thread runs all its levels at
    # once: thread 0 adds s[64] before thread 64 has added s[128] into it.
    body = REDUCE.replace(f"        {BARRIER}\n", "", 1)
    assert body.count(BARRIER) == 1
    sums, expected = run_reduction(body)
    assert not np.allclose(sums, expected, rtol=1e-3)


# A race on shared memory: a thread reads its neighbour's slot -------------------------------

NEIGHBOUR_ARGS = [("x", "memref<64xf32>"), ("y", "memref<64xf32>")]
NEIGHBOUR = f"""\
      %s = ember_gpu.shared : memref<32xf32, 3 : i64>
      %tx = "gpu.thread_id"() <{{dimension = #gpu<dim x>}}> : () -> index
      %bx = "gpu.block_id"() <{{dimension = #gpu<dim x>}}> : () -> index
      %c1 = arith.constant 1 : index
      %c32 = arith.constant 32 : index
      %base = arith.muli %bx, %c32 : index
      %i = arith.addi %base, %tx : index
      %v = memref.load %x[%i] : memref<64xf32>
      memref.store %v, %s[%tx] : memref<32xf32, 3 : i64>
      {BARRIER}
      %next = arith.addi %tx, %c1 : index
      %j = arith.remui %next, %c32 : index
      %u = memref.load %s[%j] : memref<32xf32, 3 : i64>
      %d = arith.subf %u, %v : f32
      memref.store %d, %y[%i] : memref<64xf32>
"""


def run_neighbour(body: str) -> tuple[np.ndarray, np.ndarray]:
    """y[i] = x[next in block] - x[i] on 2 blocks of 32 threads."""
    host = launch("neighbour", (2, 1, 1), (32, 1, 1), NEIGHBOUR_ARGS)
    module = program(kernel_module(body, "neighbour", NEIGHBOUR_ARGS, host))
    x = np.random.default_rng(3).standard_normal(64).astype(np.float32)
    y = np.zeros(64, np.float32)
    module.main(x, y)
    blocks = x.reshape(2, 32)
    return y, (np.roll(blocks, -1, axis=1) - blocks).reshape(64)


def test_neighbour_exchange_with_a_barrier() -> None:
    y, expected = run_neighbour(NEIGHBOUR)
    np.testing.assert_array_equal(y, expected)


def test_neighbour_exchange_without_the_barrier_races() -> None:
    # Thread t reads slot t + 1 before thread t + 1 has written it: the
    # second block reads the first block's values, which it left behind.
    y, expected = run_neighbour(NEIGHBOUR.replace(BARRIER, ""))
    assert not np.array_equal(y, expected)
    x = np.random.default_rng(3).standard_normal(64).astype(np.float32)
    stale = x[1:32] - x[32:63]  # block 1, threads 0..30: block 0's slots
    np.testing.assert_array_equal(y[32:63], stale)


# A warp sum by shuffles: two warps per block, no shared memory, no barrier ------------------

WARP_ARGS = [("x", "memref<256xf32>"), ("y", "memref<256xf32>")]
WARP_SUM = """\
      %tx = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
      %c64 = arith.constant 64 : index
      %base = arith.muli %bx, %c64 : index
      %i = arith.addi %base, %tx : index
      %v = memref.load %x[%i] : memref<256xf32>
      %s16 = ember_gpu.shuffle_xor %v, 16 : f32
      %a16 = arith.addf %v, %s16 : f32
      %s8 = ember_gpu.shuffle_xor %a16, 8 : f32
      %a8 = arith.addf %a16, %s8 : f32
      %s4 = ember_gpu.shuffle_xor %a8, 4 : f32
      %a4 = arith.addf %a8, %s4 : f32
      %s2 = ember_gpu.shuffle_xor %a4, 2 : f32
      %a2 = arith.addf %a4, %s2 : f32
      %s1 = ember_gpu.shuffle_xor %a2, 1 : f32
      %a1 = arith.addf %a2, %s1 : f32
      memref.store %a1, %y[%i] : memref<256xf32>
"""


def run_warp_sum(body: str) -> tuple[np.ndarray, np.ndarray]:
    """y[i] = the sum of x over i's warp, on 4 blocks of 64 threads (2 warps)."""
    host = launch("warp_sum", (4, 1, 1), (64, 1, 1), WARP_ARGS)
    module = program(kernel_module(body, "warp_sum", WARP_ARGS, host))
    x = np.random.default_rng(5).standard_normal(256).astype(np.float32)
    y = np.zeros(256, np.float32)
    module.main(x, y)
    sums = x.reshape(8, 32).astype(np.float64).sum(axis=1)
    return y, np.repeat(sums, 32)


def test_a_warp_sum_by_shuffles_leaves_each_warps_total_in_every_lane() -> None:
    y, expected = run_warp_sum(WARP_SUM)
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-5)


def test_a_warp_sum_with_a_wrong_mask_is_wrong() -> None:
    # Masks 8, 8, 4, 2, 1: lanes 0-15 never see lanes 16-31, and each lane
    # ends with twice its half's sum.
    body = WARP_SUM.replace("%v, 16 : f32", "%v, 8 : f32", 1)
    y, _ = run_warp_sum(body)
    x = np.random.default_rng(5).standard_normal(256).astype(np.float32)
    halves = 2 * x.reshape(16, 16).astype(np.float64).sum(axis=1)
    np.testing.assert_allclose(y, np.repeat(halves, 16), rtol=1e-5, atol=1e-5)


def test_a_shuffle_in_a_loop_keeps_each_iterations_values_apart() -> None:
    # Each iteration stores its value and reads the partner's in the next
    # phase; the barrier after that read keeps thread t's store for the next
    # iteration (rotated into the same phase) from overwriting a slot that a
    # later thread has yet to read.
    loop = (
        "      %c0 = arith.constant 0 : index\n"
        "      %c1 = arith.constant 1 : index\n"
        "      %c3 = arith.constant 3 : index\n"
        "      %a1 = scf.for %k = %c0 to %c3 step %c1 iter_args(%a = %v) -> (f32) {\n"
        "        %w = arith.addf %a, %a : f32\n"
        "        %s = ember_gpu.shuffle_xor %w, 1 : f32\n"
        "        %n = arith.addf %w, %s : f32\n"
        "        scf.yield %n : f32\n"
        "      }\n"
    )
    start = WARP_SUM.index("      %s16")
    end = WARP_SUM.index("      memref.store")
    y, _ = run_warp_sum(WARP_SUM[:start] + loop + WARP_SUM[end:])
    x = np.random.default_rng(5).standard_normal(256).astype(np.float64)
    pairs = x + x.reshape(128, 2)[:, ::-1].reshape(256)
    np.testing.assert_allclose(y, 2 * 4 * 4 * pairs, rtol=1e-5)


def test_a_shuffle_under_a_thread_dependent_condition_is_a_diagnostic() -> None:
    body = WARP_SUM.replace(
        "      %s16 = ember_gpu.shuffle_xor %v, 16 : f32\n",
        "      %c32 = arith.constant 32 : index\n"
        "      %low = arith.cmpi ult, %tx, %c32 : index\n"
        "      %s16 = scf.if %low -> (f32) {\n"
        "        %r = ember_gpu.shuffle_xor %v, 16 : f32\n"
        "        scf.yield %r : f32\n"
        "      } else {\n"
        "        scf.yield %v : f32\n"
        "      }\n",
    )
    host = launch("warp_sum", (4, 1, 1), (64, 1, 1), WARP_ARGS)
    with pytest.raises(DiagnosticException, match="scf.if holds a ember_gpu.shuffle_xor, so every"):
        program(kernel_module(body, "warp_sum", WARP_ARGS, host))


# The emulator's own checks -----------------------------------------------------------------


def test_arguments_are_checked_against_the_signature() -> None:
    host = launch("neighbour", (2, 1, 1), (32, 1, 1), NEIGHBOUR_ARGS)
    module = program(kernel_module(NEIGHBOUR, "neighbour", NEIGHBOUR_ARGS, host))
    with pytest.raises(EmulationError, match="argument 1: expected a C-contiguous float32"):
        module.main(np.zeros(64, np.float32), np.zeros(63, np.float32))
    with pytest.raises(EmulationError, match="no host function @absent"):
        module.absent()


def test_a_launch_of_more_threads_than_cuda_allows_runs_nothing() -> None:
    host = launch("affine", (1, 1, 1), (1025, 1, 1), ELEMENTWISE_ARGS)
    module = program(kernel_module(ELEMENTWISE, "affine", ELEMENTWISE_ARGS, host))
    y = np.full(N, SENTINEL, np.float32)
    module.main(np.ones(N, np.float32), y, N)
    assert (y == SENTINEL).all()


# Three-dimensional blocks; a barrier in a uniform scf.if with a result and in
# a loop whose carried value is used after its barriers -------------------------------------

SHUFFLE_ARGS = [("x", "memref<96xf32>"), ("y", "memref<96xf32>")]
SHUFFLE = f"""\
      %s = ember_gpu.shared : memref<16xf32, 3 : i64>
      %tx = "gpu.thread_id"() <{{dimension = #gpu<dim x>}}> : () -> index
      %ty = "gpu.thread_id"() <{{dimension = #gpu<dim y>}}> : () -> index
      %tz = "gpu.thread_id"() <{{dimension = #gpu<dim z>}}> : () -> index
      %dx = "gpu.block_dim"() <{{dimension = #gpu<dim x>}}> : () -> index
      %dy = "gpu.block_dim"() <{{dimension = #gpu<dim y>}}> : () -> index
      %bx = "gpu.block_id"() <{{dimension = #gpu<dim x>}}> : () -> index
      %by = "gpu.block_id"() <{{dimension = #gpu<dim y>}}> : () -> index
      %gx = "gpu.grid_dim"() <{{dimension = #gpu<dim x>}}> : () -> index
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c3 = arith.constant 3 : index
      %c15 = arith.constant 15 : index
      %c16 = arith.constant 16 : index
      %plane = arith.muli %dy, %tz : index
      %row = arith.addi %ty, %plane : index
      %rows = arith.muli %dx, %row : index
      %lin = arith.addi %tx, %rows : index
      %blocks = arith.muli %gx, %by : index
      %block = arith.addi %bx, %blocks : index
      %start = arith.muli %block, %c16 : index
      %g = arith.addi %start, %lin : index
      %v = memref.load %x[%g] : memref<96xf32>
      memref.store %v, %s[%lin] : memref<16xf32, 3 : i64>
      {BARRIER}
      %parity = arith.remui %block, %c2 : index
      %odd = arith.cmpi eq, %parity, %c1 : index
      %r = scf.if %odd -> (f32) {{
        %rev = arith.subi %c15, %lin : index
        %u = memref.load %s[%rev] : memref<16xf32, 3 : i64>
        {BARRIER}
        %w = arith.addf %u, %v : f32
        scf.yield %w : f32
      }} else {{
        scf.yield %v : f32
      }}
      %t = scf.for %k = %c0 to %c3 step %c1 iter_args(%a = %r) -> (f32) {{
        {BARRIER}
        memref.store %a, %s[%lin] : memref<16xf32, 3 : i64>
        {BARRIER}
        %next = arith.addi %lin, %c1 : index
        %j = arith.remui %next, %c16 : index
        %n = memref.load %s[%j] : memref<16xf32, 3 : i64>
        {BARRIER}
        %a2 = arith.addf %a, %n : f32
        scf.yield %a2 : f32
      }}
      memref.store %t, %y[%g] : memref<96xf32>
"""


def run_shuffle(body: str) -> tuple[np.ndarray, np.ndarray]:
    """SHUFFLE-like `body` on a 3x2 grid of 4x2x2 blocks: (y, the expected y)."""
    host = launch("shuffle", (3, 2, 1), (4, 2, 2), SHUFFLE_ARGS)
    module = program(kernel_module(body, "shuffle", SHUFFLE_ARGS, host))
    x = np.random.default_rng(4).standard_normal(96).astype(np.float32)
    y = np.zeros(96, np.float32)
    module.main(x, y)
    blocks = x.reshape(6, 16).copy()  # block bx + 3 by, thread tx + 4 (ty + 2 tz)
    blocks[1::2] += blocks[1::2, ::-1]
    for _ in range(3):
        blocks = blocks + np.roll(blocks, -1, axis=1)
    return y, blocks.reshape(96)


def test_three_dimensional_blocks_and_barriers_in_if_and_loop_with_values() -> None:
    y, expected = run_shuffle(SHUFFLE)
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-6)


LOOP_BARRIER = f"        {BARRIER}\n        memref.store %a, %s[%lin]"
LAST_LOOP_BARRIER = f"        {BARRIER}\n        %a2 = arith.addf"


def test_a_loop_rotated_across_its_back_edge_keeps_its_carried_value() -> None:
    # Without its leading barrier the loop's body neither starts nor ends with
    # one: its last phase (the sum into the carried value) and the next
    # iteration's first (storing that value to shared memory) run in one
    # thread loop. The kernel is still correct: the barrier before the sum
    # keeps the next stores away from the reads.
    body = SHUFFLE.replace(LOOP_BARRIER, LOOP_BARRIER.split("\n")[1], 1)
    assert body.count(BARRIER) == SHUFFLE.count(BARRIER) - 1
    y, expected = run_shuffle(body)
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-6)


def test_a_loop_without_the_barrier_before_its_back_edge_races() -> None:
    # With the barrier before the sum gone too, thread 15 of each block reads
    # slot 0 after thread 0 has stored its next iteration's value there (and
    # the wrong sum reaches threads 14 and 13 in the iterations after).
    body = SHUFFLE.replace(LOOP_BARRIER, LOOP_BARRIER.split("\n")[1], 1)
    body = body.replace(LAST_LOOP_BARRIER, LAST_LOOP_BARRIER.split("\n")[1], 1)
    assert body.count(BARRIER) == SHUFFLE.count(BARRIER) - 2
    y, expected = run_shuffle(body)
    assert not np.allclose(y, expected, rtol=1e-3)


# Rotated loops nested: a carried value doubled by an outer loop, then summed
# with its neighbour's by an inner loop, both without a barrier at the ends ---------------

NESTED = f"""\
      %s = ember_gpu.shared : memref<16xf32, 3 : i64>
      %tx = "gpu.thread_id"() <{{dimension = #gpu<dim x>}}> : () -> index
      %bx = "gpu.block_id"() <{{dimension = #gpu<dim x>}}> : () -> index
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c3 = arith.constant 3 : index
      %c16 = arith.constant 16 : index
      %start = arith.muli %bx, %c16 : index
      %g = arith.addi %start, %tx : index
      %v = memref.load %x[%g] : memref<96xf32>
      %t = scf.for %o = %c0 to %c2 step %c1 iter_args(%b = %v) -> (f32) {{
        %twice = arith.addf %b, %b : f32
        %sum = scf.for %k = %c0 to %c3 step %c1 iter_args(%a = %twice) -> (f32) {{
          memref.store %a, %s[%tx] : memref<16xf32, 3 : i64>
          {BARRIER}
          %next = arith.addi %tx, %c1 : index
          %j = arith.remui %next, %c16 : index
          %n = memref.load %s[%j] : memref<16xf32, 3 : i64>
          {BARRIER}
          %a2 = arith.addf %a, %n : f32
          scf.yield %a2 : f32
        }}
        scf.yield %sum : f32
      }}
      memref.store %t, %y[%g] : memref<96xf32>
"""


def run_nested(body: str) -> tuple[np.ndarray, np.ndarray]:
    """`body` on 6 blocks of 16 threads: (y, the expected y)."""
    host = launch("nested", (6, 1, 1), (16, 1, 1), SHUFFLE_ARGS)
    module = program(kernel_module(body, "nested", SHUFFLE_ARGS, host))
    x = np.random.default_rng(5).standard_normal(96).astype(np.float32)
    y = np.zeros(96, np.float32)
    module.main(x, y)
    blocks = x.reshape(6, 16)
    for _ in range(2):
        blocks = 2 * blocks
        for _ in range(3):
            blocks = blocks + np.roll(blocks, -1, axis=1)
    return y, blocks.reshape(96)


def test_nested_rotated_loops_keep_their_carried_values() -> None:
    # Both loops are rotated, the inner one first: the outer body's first
    # phase (doubling, then the inner loop's first store) runs with the
    # outer body's last (storing the inner loop's result) of the iteration
    # before.
    y, expected = run_nested(NESTED)
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-6)


def test_nested_loops_without_the_inner_barrier_before_its_back_edge_race() -> None:
    last = NESTED.rindex(BARRIER)
    y, expected = run_nested(NESTED[:last] + NESTED[last + len(BARRIER) :])
    assert not np.allclose(y, expected, rtol=1e-3)
