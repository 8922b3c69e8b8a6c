"""convert-loop-to-llvm: loop-level functions, JIT-compiled, run on NumPy arrays."""

from __future__ import annotations

import ctypes
import math
import re
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.utils.exceptions import DiagnosticException

from ember.context import make_context
from ember.lowering.loop_to_llvm import ConvertLoopToLLVMPass
from ember.passes.loop.pack_weights import PackWeightsPass, weights_blob
from ember.passes.loop.plan_memory import PlanMemoryPass
from ember.targets.cpu import JitModule, to_llvmlite

N = 16
DTYPES = {
    "f16": np.float16, "f32": np.float32, "f64": np.float64, "i1": np.bool_, "i8": np.int8,
    "i16": np.int16, "i32": np.int32, "i64": np.int64, "index": np.int64,
}  # fmt: skip


# Helpers ---------------------------------------------------------------------


def parse(text: str) -> ModuleOp:
    module = Parser(make_context(), text).parse_module()
    module.verify()
    return module


def lower(text: str) -> ModuleOp:
    module = parse(text)
    ConvertLoopToLLVMPass().apply(make_context(), module)
    module.verify()
    return module


def run(text: str, *arrays: np.ndarray, name: str = "main") -> str:
    """Pack the weights and plan the arena of `text`, lower and JIT it, then
    call `name(arrays..., weights, arena)` in place; returns the LLVM IR."""
    module = parse(text)
    PackWeightsPass().apply(make_context(), module)
    PlanMemoryPass().apply(make_context(), module)
    blob = weights_blob(module)
    arena_bytes = max(
        (op.attributes["loop.arena_bytes"].value.data  # type: ignore[attr-defined]
         for op in module.walk() if "loop.arena_bytes" in op.attributes),
        default=0,
    )  # fmt: skip
    ConvertLoopToLLVMPass().apply(make_context(), module)
    llvm_ir = str(to_llvmlite(module))
    fn = JitModule(llvm_ir).function(name, None, [ctypes.c_void_p] * (len(arrays) + 2))
    arena = np.zeros(max(arena_bytes, 1), np.uint8)
    assert all(a.flags.c_contiguous for a in arrays)
    fn(*(a.ctypes.data for a in arrays), blob.ctypes.data, arena.ctypes.data)
    return llvm_ir


def elementwise(in_types: list[str], out_type: str, body: str) -> str:
    """`out[i] = body(x0[i], x1[i], ...)`; `body` defines `%r` from `%x0`, `%x1`, ..."""
    args = "".join(f"%a{k}: memref<{N}x{t}>, " for k, t in enumerate(in_types))
    loads = "".join(
        f"    %x{k} = memref.load %a{k}[%i] : memref<{N}x{t}>\n" for k, t in enumerate(in_types)
    )
    return (
        f"func.func @main({args}%out: memref<{N}x{out_type}>) {{\n"
        f"  %lo = arith.constant 0 : index\n  %hi = arith.constant {N} : index\n"
        f"  %step = arith.constant 1 : index\n"
        f"  scf.for %i = %lo to %hi step %step {{\n{loads}    {body}\n"
        f"    memref.store %r, %out[%i] : memref<{N}x{out_type}>\n  }}\n  func.return\n}}\n"
    )


def compute(in_types: list[str], out_type: str, body: str, *inputs: np.ndarray) -> np.ndarray:
    arrays = [np.ascontiguousarray(x, DTYPES[t]) for x, t in zip(inputs, in_types)]
    out = np.zeros(N, DTYPES[out_type])
    run(elementwise(in_types, out_type, body), *arrays, out)
    return out


def unsigned(fn):  # type: ignore[no-untyped-def]
    """`fn` on the unsigned reinterpretation of its integer arguments."""

    def on_unsigned(*args: np.ndarray) -> np.ndarray:
        views = [a.view(np.dtype(f"u{a.dtype.itemsize}")) for a in args]
        result = np.asarray(fn(*views))
        return result.view(args[0].dtype) if result.dtype.kind == "u" else result

    return on_unsigned


RNG = np.random.default_rng(7)
F32_A = np.array([1.5, -2.25, 0.5, np.nan, np.inf, -np.inf, 3.0, -7.0, 1e-3, 2.0, 5.0, -0.75,
                  np.nan, 4.0, -1.0, 100.0], np.float32)  # fmt: skip
F32_B = np.array([2.0, 3.5, np.nan, 1.0, 2.0, -3.0, 3.0, 4.0, -8.0, -2.0, np.inf, 0.25,
                  np.nan, -4.0, 6.0, 1e-2], np.float32)  # fmt: skip
I64_A = np.array([7, -7, 7, -7, 0, 1, -1, 2**40 + 3, -(2**40) - 5, 123456789, 2**62, -(2**63),
                  100, -100, 9, 31], np.int64)  # fmt: skip
I64_B = np.array([2, 2, -2, -2, 5, -3, 3, 1000, 999, -77, 3, 7, 10, -10, 9, 4], np.int64)
SHIFTS = np.array([0, 1, 2, 3, 5, 8, 13, 21, 31, 33, 40, 47, 55, 60, 62, 63], np.int64)
BOOL_A = np.array([True, False] * 8)
BOOL_B = np.array([True, True, False, False] * 4)


# Whole functions -------------------------------------------------------------


def test_add_weight_and_reshape_copy() -> None:
    text = """
    func.func @main(%a: memref<4x8xf32>, %out: memref<4x8xf32>) {
      %k0 = arith.constant 0 : index
      %k1 = arith.constant 1 : index
      %k4 = arith.constant 4 : index
      %k8 = arith.constant 8 : index
      %k32 = arith.constant 32 : index
      %w = loop.weight dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.5]> : tensor<8xf32> -> memref<8xf32>
      %t = memref.alloc() : memref<4x8xf32>
      "scf.parallel"(%k0, %k4, %k1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
      ^bb0(%i: index):
        scf.for %j = %k0 to %k8 step %k1 {
          %x = memref.load %a[%i, %j] : memref<4x8xf32>
          %y = memref.load %w[%j] : memref<8xf32>
          %s = arith.addf %x, %y : f32
          memref.store %s, %t[%i, %j] : memref<4x8xf32>
        }
        scf.reduce
      }) : (index, index, index) -> ()
      %v = memref.reinterpret_cast %t to offset: [0], sizes: [32], strides: [1] : memref<4x8xf32> to memref<32xf32>
      %o = memref.reinterpret_cast %out to offset: [0], sizes: [32], strides: [1] : memref<4x8xf32> to memref<32xf32>
      scf.for %k = %k0 to %k32 step %k1 {
        %x = memref.load %v[%k] : memref<32xf32>
        memref.store %x, %o[%k] : memref<32xf32>
      }
      func.return
    }
    """
    a = RNG.standard_normal((4, 8)).astype(np.float32)
    out = np.zeros((4, 8), np.float32)
    ir_text = run(text, a, out)
    np.testing.assert_array_equal(out, a + np.array([1, 2, 3, 4, 5, 6, 7, 8.5], np.float32))
    # The weights travel in the blob, never in the code.
    assert "8.5" not in ir_text and "0x4021000000000000" not in ir_text


def test_matmul_with_reduction_through_memory() -> None:
    text = """
    func.func @main(%a: memref<3x5xf32>, %c: memref<3x4xf32>) {
      %k0 = arith.constant 0 : index
      %k1 = arith.constant 1 : index
      %k3 = arith.constant 3 : index
      %k4 = arith.constant 4 : index
      %k5 = arith.constant 5 : index
      %b = loop.weight dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [-1.0, -2.0, -3.0, -4.0],
                              [0.5, 0.25, 0.125, 2.0], [9.0, 0.0, -9.0, 1.0]]> : tensor<5x4xf32> -> memref<5x4xf32>
      %bias = loop.weight dense<[0.5, -0.5, 1.0, 2.0]> : tensor<4xf32> -> memref<4xf32>
      scf.for %i = %k0 to %k3 step %k1 {
        scf.for %j = %k0 to %k4 step %k1 {
          %init = memref.load %bias[%j] : memref<4xf32>
          memref.store %init, %c[%i, %j] : memref<3x4xf32>
          scf.for %k = %k0 to %k5 step %k1 {
            %x = memref.load %a[%i, %k] : memref<3x5xf32>
            %y = memref.load %b[%k, %j] : memref<5x4xf32>
            %acc = memref.load %c[%i, %j] : memref<3x4xf32>
            %p = arith.mulf %x, %y : f32
            %s = arith.addf %acc, %p : f32
            memref.store %s, %c[%i, %j] : memref<3x4xf32>
          }
        }
      }
      func.return
    }
    """
    a = RNG.standard_normal((3, 5)).astype(np.float32)
    b = np.array([[1, 2, 3, 4], [5, 6, 7, 8], [-1, -2, -3, -4], [0.5, 0.25, 0.125, 2], [9, 0, -9, 1]],
                 np.float32)  # fmt: skip
    c = np.zeros((3, 4), np.float32)
    run(text, a, c)
    np.testing.assert_allclose(c, a @ b + np.array([0.5, -0.5, 1, 2], np.float32), rtol=1e-5)


def test_rank0_accumulator_in_arena() -> None:
    text = f"""
    func.func @main(%a: memref<{N}xf64>, %out: memref<1xf64>) {{
      %acc = memref.alloc() : memref<f64>
      %zero = arith.constant 0.0 : f64
      memref.store %zero, %acc[] : memref<f64>
      %lo = arith.constant 0 : index
      %hi = arith.constant {N} : index
      %step = arith.constant 1 : index
      scf.for %i = %lo to %hi step %step {{
        %x = memref.load %a[%i] : memref<{N}xf64>
        %s = memref.load %acc[] : memref<f64>
        %t = arith.addf %s, %x : f64
        memref.store %t, %acc[] : memref<f64>
      }}
      %flat = memref.reinterpret_cast %acc to offset: [0], sizes: [1], strides: [1] : memref<f64> to memref<1xf64>
      %c0 = arith.constant 0 : index
      %v = memref.load %flat[%c0] : memref<1xf64>
      memref.store %v, %out[%c0] : memref<1xf64>
      func.return
    }}
    """
    a = RNG.standard_normal(N)
    out = np.zeros(1)
    run(text, a, out)
    np.testing.assert_allclose(out[0], math.fsum(a), rtol=1e-12)


def test_nested_loops_with_steps() -> None:
    text = """
    func.func @main(%out: memref<9x11xi64>) {
      %k0 = arith.constant 0 : index
      %k1 = arith.constant 1 : index
      %k3 = arith.constant 3 : index
      %k4 = arith.constant 4 : index
      %k9 = arith.constant 9 : index
      %k11 = arith.constant 11 : index
      scf.for %i = %k1 to %k9 step %k3 {
        scf.for %j = %k0 to %k11 step %k4 {
          %c100 = arith.constant 100 : index
          %hi = arith.muli %i, %c100 : index
          %v = arith.addi %hi, %j : index
          %w = arith.index_cast %v : index to i64
          memref.store %w, %out[%i, %j] : memref<9x11xi64>
        }
      }
      func.return
    }
    """
    out = np.zeros((9, 11), np.int64)
    run(text, out)
    expected = np.zeros((9, 11), np.int64)
    for i in range(1, 9, 3):
        for j in range(0, 11, 4):
            expected[i, j] = 100 * i + j
    np.testing.assert_array_equal(out, expected)


def test_empty_loop_runs_zero_times() -> None:
    text = """
    func.func @main(%out: memref<4xf32>) {
      %k1 = arith.constant 1 : index
      %k2 = arith.constant 2 : index
      scf.for %i = %k2 to %k2 step %k1 {
        %one = arith.constant 1.0 : f32
        memref.store %one, %out[%i] : memref<4xf32>
      }
      func.return
    }
    """
    out = np.zeros(4, np.float32)
    run(text, out)
    assert not out.any()


def test_two_functions_share_libm_declarations() -> None:
    body = """(%a: memref<4xf32>, %out: memref<4xf32>) {
      %k0 = arith.constant 0 : index
      %k1 = arith.constant 1 : index
      %k4 = arith.constant 4 : index
      scf.for %i = %k0 to %k4 step %k1 {
        %x = memref.load %a[%i] : memref<4xf32>
        %e = math.erf %x : f32
        %r = math.erf %e : f32
        memref.store %r, %out[%i] : memref<4xf32>
      }
      func.return
    }"""
    module = lower(f"func.func @f{body}\nfunc.func @g{body}")
    assert str(module).count("llvm.func @erff(f32) -> f32") == 1
    a = np.array([0.1, -0.5, 1.0, 2.0], np.float32)
    jit = JitModule(str(to_llvmlite(module)))
    for name in ("f", "g"):
        out = np.zeros(4, np.float32)
        fn = jit.function(name, None, [ctypes.c_void_p] * 2)
        fn(a.ctypes.data, out.ctypes.data)
        expected = np.array([math.erf(math.erf(float(x))) for x in a], np.float32)
        np.testing.assert_allclose(out, expected, rtol=1e-6)


def test_signature_is_one_pointer_per_static_memref() -> None:
    text = """
    func.func @main(%a: memref<2xf32>, %b: memref<2x2xi1>, %out: memref<2xf32>) {
      func.return
    }
    """
    ir_text = str(to_llvmlite(lower(text)))
    assert 'define void @"main"(ptr %".1", ptr %".2", ptr %".3")' in ir_text


DYNAMIC_KERNEL = Path(__file__).parents[1] / "filecheck/lowering/loop-to-llvm-dynamic.mlir"


@pytest.mark.parametrize("rows, cols", [(3, 5), (7, 1)])
def test_dynamic_dims_kernel_on_two_sizes(rows: int, cols: int) -> None:
    """The lit test's kernel over memref<?x?xf32>, JIT-compiled once and run
    on two shapes: each memref is its pointer and then its sizes."""
    module = lower(DYNAMIC_KERNEL.read_text())
    jit = JitModule(str(to_llvmlite(module)))
    size, pointer = ctypes.c_int64, ctypes.c_void_p
    fn = jit.function(
        "scale_and_sum", None, [pointer, size, size, pointer, size, size, pointer, size]
    )
    a = RNG.standard_normal((rows, cols)).astype(np.float32)
    out = np.full((rows, cols), np.nan, np.float32)
    rowsum = np.full(rows, np.nan, np.float32)
    fn(a.ctypes.data, rows, cols, out.ctypes.data, rows, cols, rowsum.ctypes.data, rows)
    np.testing.assert_array_equal(out, a * 2)
    expected = np.zeros(rows, np.float32)
    for j in range(cols):  # the kernel's order of summation
        expected += a[:, j]
    np.testing.assert_array_equal(rowsum, expected)


VECTOR_KERNEL = Path(__file__).parents[1] / "filecheck/lowering/loop-to-llvm-vector.mlir"


def test_vector_kernel_with_loop_carried_values() -> None:
    """The lit test's micro-kernel: vector accumulators carried through the k
    loop (one fma per term), and a scalar sum carried the same way."""
    jit = JitModule(str(to_llvmlite(lower(VECTOR_KERNEL.read_text()))))
    fn = jit.function("row_times_panel", None, [ctypes.c_void_p] * 4)
    a = RNG.standard_normal((2, 5)).astype(np.float32)
    b = RNG.standard_normal((5, 8)).astype(np.float32)
    c = RNG.standard_normal((2, 8)).astype(np.float32)
    total = np.full(1, np.nan, np.float32)
    expected = c.astype(np.float64) + a.astype(np.float64) @ b.astype(np.float64)
    fn(a.ctypes.data, b.ctypes.data, c.ctypes.data, total.ctypes.data)
    # fma rounds once per term: close to the exact sum, not bit-equal to NumPy's.
    np.testing.assert_allclose(c, expected, rtol=1e-5, atol=1e-5 * np.abs(expected).max())
    partial = np.float32(0)
    for x in a[0]:  # the kernel's order of summation
        partial = np.float32(partial + x)
    assert total[0] == partial


SHUFFLE_KERNEL = Path(__file__).parents[1] / "filecheck/lowering/loop-to-llvm-vector-shuffle.mlir"


def test_vector_shuffle_takes_the_even_lanes() -> None:
    """The lit test's stride-2 read: x[0], x[2], ..., x[14] from two
    overlapping vector loads, neither reaching past x[14]."""
    jit = JitModule(str(to_llvmlite(lower(SHUFFLE_KERNEL.read_text()))))
    fn = jit.function("even_lanes", None, [ctypes.c_void_p] * 2)
    x = RNG.standard_normal(15).astype(np.float32)
    y = np.full(8, np.nan, np.float32)
    fn(x.ctypes.data, y.ctypes.data)
    np.testing.assert_array_equal(y, x[::2])


BF16_DOT_KERNEL = Path(__file__).parents[1] / "filecheck/lowering/loop-to-llvm-bf16-dot.mlir"


@pytest.mark.parametrize("form", ["host", "expanded"])
def test_bf16_dot_sums_each_pair_into_its_lane(form: str) -> None:
    """`loop.bf16_dot` on the host's instruction (where it has one) and
    expanded: each f32 lane gains the two products of its bfloat16 pair,
    each exact, the sums rounded as f32 (bfloat16 values of 8 significant
    bits: the products and the pair's sum are exact in f32, so both forms
    give NumPy's f32 result exactly)."""
    module = parse(BF16_DOT_KERNEL.read_text())
    ConvertLoopToLLVMPass(bf16_dot=form).apply(make_context(), module)
    jit = JitModule(str(to_llvmlite(module)))
    b = RNG.integers(-16, 16, 32).astype(ml_dtypes.bfloat16)
    wide_b = b.astype(np.float32)
    for name, size in (("pairs", 32), ("row_pair", 2)):
        fn = jit.function(name, None, [ctypes.c_void_p] * 3)
        acc = RNG.integers(-64, 64, 16).astype(np.float32)
        a = RNG.integers(-16, 16, size).astype(ml_dtypes.bfloat16)
        wide_a = np.resize(a.astype(np.float32), 32)  # the row's pair in every lane
        expected = acc + wide_a[0::2] * wide_b[0::2] + wide_a[1::2] * wide_b[1::2]
        fn(acc.ctypes.data, a.ctypes.data, b.ctypes.data)
        np.testing.assert_array_equal(acc, expected, err_msg=name)


def test_dynamic_dims_reach_the_signature() -> None:
    ir_text = str(to_llvmlite(lower(DYNAMIC_KERNEL.read_text())))
    assert 'define void @"scale_and_sum"(ptr %".1", i64 %".2", i64 %".3", ptr %".4", ' in ir_text


def test_packed_buffers_must_be_row_major() -> None:
    text = (
        "func.func @main(%a: memref<?xf32, strided<[?]>>) attributes {ember.packed_buffers} {\n"
        "  func.return\n}"
    )
    with pytest.raises(DiagnosticException, match="row-major memrefs"):
        lower(text)


def test_packed_dynamic_buffers_take_their_sizes() -> None:
    text = (
        "func.func @main(%a: memref<?x4xf32>, %b: memref<2x?xf32>) "
        "attributes {ember.packed_buffers} {\n  func.return\n}"
    )
    ir_text = str(to_llvmlite(lower(text)))
    # buffers, dims, weights, arena; each dynamic size read from dims in order
    params = re.search(r'define void @"main"\((.*)\)$', ir_text, re.MULTILINE)
    assert params is not None and params.group(1).count("ptr") == 4
    dims = params.group(1).split(", ")[1].split()[-1]
    slots = re.findall(rf"getelementptr inbounds i64, ptr {re.escape(dims)}, i32 (\d+)", ir_text)
    assert slots == ["0", "1"]


# Scalar ops ------------------------------------------------------------------

FLOAT_BINARY = [
    ("arith.addf", np.add), ("arith.subf", np.subtract), ("arith.mulf", np.multiply),
    ("arith.divf", np.divide), ("arith.maximumf", np.maximum), ("arith.minimumf", np.minimum),
    ("arith.maxnumf", np.fmax), ("arith.minnumf", np.fmin),
]  # fmt: skip


@pytest.mark.parametrize("op, ref", FLOAT_BINARY, ids=[c[0] for c in FLOAT_BINARY])
def test_float_binary(op: str, ref) -> None:  # type: ignore[no-untyped-def]
    out = compute(["f32", "f32"], "f32", f"%r = {op} %x0, %x1 : f32", F32_A, F32_B)
    with np.errstate(all="ignore"):
        expected = ref(F32_A, F32_B)
    np.testing.assert_array_equal(out, expected)


def test_float_min_max_signed_zeros() -> None:
    # maximumf/minimumf order -0.0 below +0.0 (IEEE 754-2019 maximum/minimum).
    a = np.array([0.0, -0.0] * 8, np.float32)
    b = np.array([-0.0, 0.0] * 8, np.float32)
    hi = compute(["f32", "f32"], "f32", "%r = arith.maximumf %x0, %x1 : f32", a, b)
    lo = compute(["f32", "f32"], "f32", "%r = arith.minimumf %x0, %x1 : f32", a, b)
    assert not np.signbit(hi).any() and np.signbit(lo).all()


def _divsi(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.array([int(x / y) if abs(x) < 2**52 else -(-x // y) if (x < 0) != (y < 0) else x // y
                     for x, y in zip(a.tolist(), b.tolist())], a.dtype)  # fmt: skip


def _ceildiv(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.floor_divide(a, b) + (np.remainder(a, b) != 0)


INT_BINARY = [
    ("arith.addi", np.add), ("arith.subi", np.subtract), ("arith.muli", np.multiply),
    ("arith.divsi", _divsi), ("arith.remsi", np.fmod),
    ("arith.divui", unsigned(np.floor_divide)), ("arith.remui", unsigned(np.remainder)),
    ("arith.floordivsi", np.floor_divide), ("arith.ceildivsi", _ceildiv),
    ("arith.ceildivui", unsigned(lambda a, b: a // b + (a % b != 0))),
    ("arith.andi", np.bitwise_and), ("arith.ori", np.bitwise_or), ("arith.xori", np.bitwise_xor),
    ("arith.maxsi", np.maximum), ("arith.minsi", np.minimum),
    ("arith.maxui", unsigned(np.maximum)), ("arith.minui", unsigned(np.minimum)),
]  # fmt: skip


@pytest.mark.parametrize("t", ["i64", "i32"])
@pytest.mark.parametrize("op, ref", INT_BINARY, ids=[c[0] for c in INT_BINARY])
def test_int_binary(op: str, ref, t: str) -> None:  # type: ignore[no-untyped-def]
    a, b = I64_A.astype(DTYPES[t]), I64_B.astype(DTYPES[t])
    if t == "i32":
        a[11] = -(2**31)  # keep INT_MIN / 7 in range, avoid INT_MIN / -1
    out = compute([t, t], t, f"%r = {op} %x0, %x1 : {t}", a, b)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(out, ref(a, b).astype(DTYPES[t]))


SHIFT_OPS = [
    ("arith.shli", np.left_shift), ("arith.shrsi", np.right_shift),
    ("arith.shrui", unsigned(np.right_shift)),
]  # fmt: skip


@pytest.mark.parametrize("op, ref", SHIFT_OPS, ids=[c[0] for c in SHIFT_OPS])
def test_shifts(op: str, ref) -> None:  # type: ignore[no-untyped-def]
    out = compute(["i64", "i64"], "i64", f"%r = {op} %x0, %x1 : i64", I64_A, SHIFTS)
    np.testing.assert_array_equal(out, ref(I64_A, SHIFTS))


# On i1, true is -1 when signed: maxsi is `and`, minsi is `or`.
BOOL_BINARY = [
    ("arith.andi", np.logical_and), ("arith.ori", np.logical_or), ("arith.xori", np.logical_xor),
    ("arith.addi", np.logical_xor), ("arith.muli", np.logical_and),
    ("arith.maxui", np.logical_or), ("arith.minui", np.logical_and),
    ("arith.maxsi", np.logical_and), ("arith.minsi", np.logical_or),
]  # fmt: skip


@pytest.mark.parametrize("op, ref", BOOL_BINARY, ids=[c[0] for c in BOOL_BINARY])
def test_i1_binary(op: str, ref) -> None:  # type: ignore[no-untyped-def]
    out = compute(["i1", "i1"], "i1", f"%r = {op} %x0, %x1 : i1", BOOL_A, BOOL_B)
    assert out.dtype == np.bool_
    np.testing.assert_array_equal(out, ref(BOOL_A, BOOL_B))
    assert set(out.view(np.uint8).tolist()) <= {0, 1}


CMPF = {
    "false": lambda a, b: np.zeros_like(a, bool), "oeq": np.equal, "ogt": np.greater,
    "oge": np.greater_equal, "olt": np.less, "ole": np.less_equal,
    "one": lambda a, b: (a < b) | (a > b), "ord": lambda a, b: ~np.isnan(a) & ~np.isnan(b),
    "ueq": lambda a, b: ~((a < b) | (a > b)), "ugt": lambda a, b: ~(a <= b),
    "uge": lambda a, b: ~(a < b), "ult": lambda a, b: ~(a >= b), "ule": lambda a, b: ~(a > b),
    "une": np.not_equal, "uno": lambda a, b: np.isnan(a) | np.isnan(b),
    "true": lambda a, b: np.ones_like(a, bool),
}  # fmt: skip


@pytest.mark.parametrize("predicate", list(CMPF))
def test_cmpf_to_i1_buffer(predicate: str) -> None:
    out = compute(
        ["f32", "f32"], "i1", f"%r = arith.cmpf {predicate}, %x0, %x1 : f32", F32_A, F32_B
    )
    assert out.dtype == np.bool_
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(out, CMPF[predicate](F32_A, F32_B))


CMPI = {
    "eq": np.equal, "ne": np.not_equal, "slt": np.less, "sle": np.less_equal,
    "sgt": np.greater, "sge": np.greater_equal, "ult": unsigned(np.less),
    "ule": unsigned(np.less_equal), "ugt": unsigned(np.greater), "uge": unsigned(np.greater_equal),
}  # fmt: skip


@pytest.mark.parametrize("predicate", list(CMPI))
def test_cmpi_to_i1_buffer(predicate: str) -> None:
    b = I64_B.copy()
    b[:4] = I64_A[:4]  # some equal pairs
    out = compute(["i64", "i64"], "i1", f"%r = arith.cmpi {predicate}, %x0, %x1 : i64", I64_A, b)
    np.testing.assert_array_equal(out, np.asarray(CMPI[predicate](I64_A, b)).astype(bool))


def test_select_on_i1_buffer() -> None:
    out = compute(["i1", "f32", "f32"], "f32", "%r = arith.select %x0, %x1, %x2 : f32",
                  BOOL_A, F32_A, F32_B)  # fmt: skip
    np.testing.assert_array_equal(out, np.where(BOOL_A, F32_A, F32_B))


def test_negf_and_constants() -> None:
    body = (
        "%c = arith.constant -2.5 : f32\n    %nz = arith.constant -0.0 : f32\n"
        "    %n = arith.negf %x0 : f32\n    %m = arith.mulf %n, %c : f32\n"
        "    %r = arith.addf %m, %nz : f32"
    )
    out = compute(["f32"], "f32", body, F32_A)
    np.testing.assert_array_equal(out, -F32_A * np.float32(-2.5) + np.float32(-0.0))
    zero = compute(["f32"], "f32", "%r = arith.negf %x0 : f32", np.zeros(N, np.float32))
    assert np.signbit(zero).all()


def test_integer_constants_of_every_width() -> None:
    body = (
        "%t = arith.constant true\n    %b = arith.constant -1 : i8\n"
        "    %w = arith.constant 4294967295 : i32\n    %h = arith.constant -32768 : i16\n"
        "    %bb = arith.extsi %b : i8 to i64\n    %ww = arith.extui %w : i32 to i64\n"
        "    %hh = arith.extsi %h : i16 to i64\n    %tt = arith.extui %t : i1 to i64\n"
        "    %s1 = arith.addi %bb, %ww : i64\n    %s2 = arith.addi %hh, %tt : i64\n"
        "    %s3 = arith.addi %s1, %s2 : i64\n    %r = arith.addi %s3, %x0 : i64"
    )
    out = compute(["i64"], "i64", body, np.arange(N))
    np.testing.assert_array_equal(out, np.arange(N) + (-1 + 4294967295 - 32768 + 1))


# (in type, out type, body, input, reference)
CASTS = [
    ("f32", "f64", "arith.extf %x0 : f32 to f64", F32_A, lambda x: x.astype(np.float64)),
    ("f64", "f32", "arith.truncf %x0 : f64 to f32", RNG.standard_normal(N) * 1e3,
     lambda x: x.astype(np.float32)),
    ("f32", "f16", "arith.truncf %x0 : f32 to f16", F32_A, lambda x: x.astype(np.float16)),
    ("i64", "f32", "arith.sitofp %x0 : i64 to f32", I64_A, lambda x: x.astype(np.float32)),
    ("i32", "f64", "arith.sitofp %x0 : i32 to f64", I64_A.astype(np.int32),
     lambda x: x.astype(np.float64)),
    ("i32", "f32", "arith.uitofp %x0 : i32 to f32", I64_A.astype(np.int32),
     lambda x: x.view(np.uint32).astype(np.float32)),
    ("i64", "f64", "arith.uitofp %x0 : i64 to f64", I64_A,
     lambda x: x.view(np.uint64).astype(np.float64)),
    ("i64", "f32", "arith.uitofp %x0 : i64 to f32",
     np.array([2**64 - 1, 2**63, 2**63 + 2**39 + 1, 2**64 - 2**40 + 1] * 4, np.uint64).view(np.int64),
     lambda x: x.view(np.uint64).astype(np.float32)),
    ("i1", "f32", "arith.uitofp %x0 : i1 to f32", BOOL_A, lambda x: x.astype(np.float32)),
    ("f32", "i32", "arith.fptosi %x0 : f32 to i32", np.linspace(-1e6, 1e6, N, dtype=np.float32),
     lambda x: np.trunc(x).astype(np.int32)),
    ("f64", "i64", "arith.fptoui %x0 : f64 to i64",
     np.array([0.5, 1.9, 2.0**63, 2.0**64 - 2048, 12345.6, 1e18, 3.0, 7.7] * 2),
     lambda x: x.astype(np.uint64).view(np.int64)),
    ("i32", "i64", "arith.extsi %x0 : i32 to i64", I64_A.astype(np.int32),
     lambda x: x.astype(np.int64)),
    ("i32", "i64", "arith.extui %x0 : i32 to i64", I64_A.astype(np.int32),
     lambda x: x.view(np.uint32).astype(np.int64)),
    ("i64", "i16", "arith.trunci %x0 : i64 to i16", I64_A, lambda x: x.astype(np.int16)),
    ("f32", "i32", "arith.bitcast %x0 : f32 to i32", F32_A, lambda x: x.view(np.int32)),
    ("i64", "f64", "arith.bitcast %x0 : i64 to f64", I64_A, lambda x: x.view(np.float64)),
]  # fmt: skip


@pytest.mark.parametrize("case", CASTS, ids=[c[2].split(" ")[0] + f"-{c[0]}-{c[1]}" for c in CASTS])
def test_casts(case) -> None:  # type: ignore[no-untyped-def]
    in_type, out_type, body, x, ref = case
    x = np.asarray(x, DTYPES[in_type])
    out = compute([in_type], out_type, f"%r = {body}", x)
    np.testing.assert_array_equal(out, ref(x))


def test_index_values_and_index_buffers() -> None:
    body = (
        "%c3 = arith.constant 3 : index\n    %c5 = arith.constant 5 : index\n"
        "    %k = arith.index_cast %x0 : i32 to index\n    %m = arith.muli %i, %c3 : index\n"
        "    %d = arith.subi %m, %c5 : index\n    %r = arith.addi %d, %k : index"
    )
    x = np.arange(N, dtype=np.int32) * -1000
    out = compute(["i32"], "index", body, x)
    np.testing.assert_array_equal(out, np.arange(N) * 3 - 5 + x)
    back = compute(["index"], "i8", "%r = arith.index_cast %x0 : index to i8", np.arange(N) * 20)
    np.testing.assert_array_equal(back, (np.arange(N) * 20).astype(np.int8))


# Math ------------------------------------------------------------------------

GENERAL = np.linspace(-3.7, 3.9, N)
POSITIVE = np.linspace(0.01, 9.5, N)
UNIT = np.linspace(-0.97, 0.95, N)
HALVES = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, -3.5, 0.49, -0.51, 1.2, -1.7, 7.5, 0, 4.5,
                   -4.5])  # fmt: skip
_erf = np.vectorize(math.erf)

# (op, operand domains, float64 reference)
MATH = [
    ("exp", [GENERAL], np.exp), ("exp2", [GENERAL], np.exp2), ("log", [POSITIVE], np.log),
    ("log2", [POSITIVE], np.log2), ("log10", [POSITIVE], np.log10),
    ("log1p", [np.linspace(-0.9, 5, N)], np.log1p), ("expm1", [GENERAL], np.expm1),
    ("sqrt", [POSITIVE], np.sqrt), ("rsqrt", [POSITIVE], lambda x: 1 / np.sqrt(x)),
    ("absf", [GENERAL], np.abs), ("floor", [GENERAL], np.floor), ("ceil", [GENERAL], np.ceil),
    ("round", [HALVES], lambda x: np.sign(x) * np.floor(np.abs(x) + 0.5)),
    ("roundeven", [HALVES], np.round), ("trunc", [GENERAL], np.trunc),
    ("sin", [GENERAL], np.sin), ("cos", [GENERAL], np.cos),
    ("tan", [np.linspace(-1.4, 1.3, N)], np.tan), ("asin", [UNIT], np.arcsin),
    ("acos", [UNIT], np.arccos), ("atan", [GENERAL], np.arctan),
    ("atan2", [GENERAL, GENERAL[::-1]], np.arctan2), ("sinh", [GENERAL], np.sinh),
    ("cosh", [GENERAL], np.cosh), ("tanh", [GENERAL], np.tanh), ("asinh", [GENERAL], np.arcsinh),
    ("acosh", [POSITIVE + 1], np.arccosh), ("atanh", [UNIT], np.arctanh),
    ("erf", [GENERAL], _erf), ("powf", [POSITIVE, GENERAL], np.power),
    ("copysign", [GENERAL, GENERAL[::-1]], np.copysign),
    ("fma", [GENERAL, GENERAL[::-1], POSITIVE], lambda a, b, c: a * b + c),
    ("cbrt", [GENERAL], np.cbrt),
]  # fmt: skip


def _math_case(op: str, t: str, domains: list[np.ndarray], ref, rtol: float) -> None:  # type: ignore[no-untyped-def]
    operands = ", ".join(f"%x{k}" for k in range(len(domains)))
    inputs = [d.astype(DTYPES[t]) for d in domains]
    out = compute([t] * len(domains), t, f"%r = math.{op} {operands} : {t}", *inputs)
    expected = ref(*(x.astype(np.float64) for x in inputs)).astype(DTYPES[t])
    np.testing.assert_allclose(out, expected, rtol=rtol, atol=0)


@pytest.mark.parametrize("op, domains, ref", MATH, ids=[c[0] for c in MATH])
def test_math_f32(op: str, domains: list[np.ndarray], ref) -> None:  # type: ignore[no-untyped-def]
    _math_case(op, "f32", domains, ref, rtol=1e-6)


F64_OPS = ("exp", "log", "tanh", "erf", "atan2", "cbrt", "powf", "log1p", "sin", "roundeven")


@pytest.mark.parametrize("op, domains, ref", [c for c in MATH if c[0] in F64_OPS], ids=F64_OPS)
def test_math_f64(op: str, domains: list[np.ndarray], ref) -> None:  # type: ignore[no-untyped-def]
    _math_case(op, "f64", domains, ref, rtol=1e-13)


@pytest.mark.parametrize("op, domains, ref", [c for c in MATH if c[0] in ("exp", "erf", "sqrt")],
                         ids=["exp", "erf", "sqrt"])  # fmt: skip
def test_math_f16(op: str, domains: list[np.ndarray], ref) -> None:  # type: ignore[no-untyped-def]
    _math_case(op, "f16", domains, ref, rtol=1e-3)


def test_fpowi() -> None:
    x = GENERAL.astype(np.float32)
    n = np.array([0, 1, 2, 3, -1, -2, 5, 4] * 2, np.int32)
    out = compute(["f32", "i32"], "f32", "%r = math.fpowi %x0, %x1 : f32, i32", x, n)
    np.testing.assert_allclose(out, np.power(x.astype(np.float64), n).astype(np.float32), rtol=1e-6)


INT_MATH = [
    ("absi", np.abs),
    ("ctlz", lambda x: np.array([32 - int(v).bit_length() for v in x.view(np.uint32)])),
    ("cttz", lambda x: np.array([(int(v) & -int(v)).bit_length() - 1 if v else 32
                                 for v in x.view(np.uint32)])),
    ("ctpop", lambda x: np.array([bin(int(v)).count("1") for v in x.view(np.uint32)])),
]  # fmt: skip


@pytest.mark.parametrize("op, ref", INT_MATH, ids=[c[0] for c in INT_MATH])
def test_integer_math(op: str, ref) -> None:  # type: ignore[no-untyped-def]
    x = I64_A.astype(np.int32)
    x[11] = -(2**31)
    out = compute(["i32"], "i32", f"%r = math.{op} %x0 : i32", x)
    np.testing.assert_array_equal(out, ref(x).astype(np.int32))


# Diagnostics -----------------------------------------------------------------


@pytest.mark.parametrize(
    "line, words",
    [
        ("%t = memref.alloc() : memref<4xf32>", ["memref.alloc", "loop-plan-memory"]),
        ("%t = loop.weight dense<1.0> : tensor<4xf32> -> memref<4xf32>",
         ["loop.weight", "loop-pack-weights"]),
    ],
)  # fmt: skip
def test_missing_offset(line: str, words: list[str]) -> None:
    text = f"func.func @main(%out: memref<4xf32>) {{\n  {line}\n  func.return\n}}"
    with pytest.raises(DiagnosticException) as info:
        lower(text)
    message = str(info.value)
    assert "convert-loop-to-llvm" in message and all(w in message for w in words)


def test_unsupported_ops_listed_with_counts() -> None:
    text = """
    func.func @main(%a: memref<4xi32>) {
      %k0 = arith.constant 0 : index
      %k1 = arith.constant 1 : index
      %k4 = arith.constant 4 : index
      memref.dealloc %a : memref<4xi32>
      memref.dealloc %a : memref<4xi32>
      scf.for %i = %k0 to %k4 step %k1 {
        %x = memref.load %a[%i] : memref<4xi32>
        %y = math.ipowi %x, %x : i32
        memref.store %y, %a[%i] : memref<4xi32>
      }
      func.return
    }
    """
    with pytest.raises(DiagnosticException) as info:
        lower(text)
    message = str(info.value)
    assert "convert-loop-to-llvm" in message
    assert "math.ipowi (1)" in message and "memref.dealloc (2)" in message
    assert "memref.load" not in message


def test_non_memref_signature_is_rejected() -> None:
    with pytest.raises(DiagnosticException, match="memrefs and scalars"):
        lower("func.func @main(%x: tensor<4xf32>) {\n  func.return\n}")


def test_to_llvmlite_needs_the_pass() -> None:
    with pytest.raises(DiagnosticException, match="convert-loop-to-llvm"):
        to_llvmlite(parse("func.func @main() {\n  func.return\n}"))
