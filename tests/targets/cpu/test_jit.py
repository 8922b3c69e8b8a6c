"""JIT: hand-written LLVM IR runs in process and matches NumPy."""

from __future__ import annotations

import ctypes
import gc
import math
import re
import time

import llvmlite.binding as llvm
import numpy as np
import pytest
from llvmlite import ir

from ember.errors import EmberError
from ember.targets.cpu import (
    LLVM_OPT_LEVEL,
    CodegenError,
    JitModule,
    host_cpu_description,
    host_target_machine,
    parse_ir,
)
from ember.targets.cpu.optimize import optimize

F32 = ir.FloatType()
I64 = ir.IntType(64)
PTR = ir.PointerType()
FLOAT_P = ctypes.POINTER(ctypes.c_float)


def saxpy_module() -> ir.Module:
    """`void saxpy(float* x, float* y, i64 n, float a)`: y[i] += a * x[i], as builder IR."""
    module = ir.Module(name="saxpy")
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [PTR, PTR, I64, F32]), "saxpy")
    x, y, n, a = fn.args
    for arg in (x, y):
        arg.add_attribute("noalias")
    entry, loop, done = (fn.append_basic_block(name) for name in ("entry", "loop", "done"))
    b = ir.IRBuilder(entry)
    b.cbranch(b.icmp_signed(">", n, I64(0)), loop, done)
    b.position_at_end(loop)
    i = b.phi(I64, "i")
    px, py = b.gep(x, [i], source_etype=F32), b.gep(y, [i], source_etype=F32)
    total = b.fadd(b.fmul(a, b.load(px, typ=F32)), b.load(py, typ=F32))
    b.store(total, py)
    nxt = b.add(i, I64(1))
    i.add_incoming(I64(0), entry)
    i.add_incoming(nxt, loop)
    b.cbranch(b.icmp_signed("<", nxt, n), loop, done)
    b.position_at_end(done)
    b.ret_void()
    return module


def scalar_ir(name: str, arity: int) -> str:
    """`float call_<name>(float...)` that returns libm's `name` of its arguments."""
    params = ", ".join(f"float %a{k}" for k in range(arity))
    args = ", ".join(f"float %a{k}" for k in range(arity))
    types = ", ".join(["float"] * arity)
    return (
        f"declare float @{name}({types})\n"
        f"define float @call_{name}({params}) {{\n"
        f"  %r = call float @{name}({args})\n"
        "  ret float %r\n}\n"
    )


def test_saxpy_matches_numpy() -> None:
    jit = JitModule(saxpy_module())
    saxpy = jit.function("saxpy", None, [FLOAT_P, FLOAT_P, ctypes.c_int64, ctypes.c_float])
    rng = np.random.default_rng(0)
    n = 1003  # not a multiple of any vector width: the remainder loop runs too
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    expected = np.float32(1.5) * x + y
    saxpy(x.ctypes.data_as(FLOAT_P), y.ctypes.data_as(FLOAT_P), n, 1.5)
    np.testing.assert_allclose(y, expected, rtol=1e-6)


def test_o3_vectorizes_saxpy_for_the_host() -> None:
    tm = host_target_machine()
    module = parse_ir(saxpy_module(), tm)
    assert not re.search(r"<\d+ x float>", str(module))
    optimize(module, tm, level=3)
    widths = {int(w) for w in re.findall(r"<(\d+) x float>", str(module))}
    minimum = 8 if llvm.get_host_cpu_features().get("avx2") else 4
    assert widths and max(widths) >= minimum, widths


@pytest.mark.parametrize(
    ("name", "args", "reference"),
    [
        ("expf", (0.75,), math.exp),
        ("logf", (2.5,), math.log),
        ("tanhf", (-0.6,), math.tanh),
        ("erff", (0.3,), math.erf),
        ("powf", (1.7, 2.3), math.pow),
        ("fmodf", (7.25, 2.0), math.fmod),
    ],
)
def test_libm_functions_resolve(name: str, args: tuple[float, ...], reference) -> None:
    jit = JitModule(scalar_ir(name, len(args)))
    func = jit.function(f"call_{name}", ctypes.c_float, [ctypes.c_float] * len(args))
    assert func(*args) == pytest.approx(reference(*args), rel=1e-6)


def test_vectorized_libm_loop_matches_numpy() -> None:
    """`out[i] = erff(x[i]) + tanhf(x[i])`, optimised at O3, on an array."""
    source = """
declare float @erff(float)
declare float @tanhf(float)
define void @erf_plus_tanh(ptr noalias %x, ptr noalias %out, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%next, %loop]
  %px = getelementptr float, ptr %x, i64 %i
  %v = load float, ptr %px
  %e = call float @erff(float %v)
  %t = call float @tanhf(float %v)
  %s = fadd float %e, %t
  %po = getelementptr float, ptr %out, i64 %i
  store float %s, ptr %po
  %next = add i64 %i, 1
  %more = icmp slt i64 %next, %n
  br i1 %more, label %loop, label %exit
exit:
  ret void
}
"""
    jit = JitModule(source)
    func = jit.function("erf_plus_tanh", None, [FLOAT_P, FLOAT_P, ctypes.c_int64])
    x = np.linspace(-3, 3, 37, dtype=np.float32)
    out = np.empty_like(x)
    func(x.ctypes.data_as(FLOAT_P), out.ctypes.data_as(FLOAT_P), x.size)
    expected = [math.erf(v) + math.tanh(v) for v in x.astype(np.float64)]
    np.testing.assert_allclose(out, expected, rtol=1e-6, atol=1e-7)


def test_unresolved_external_names_the_symbol() -> None:
    with pytest.raises(CodegenError, match="ember_no_such_function"):
        JitModule(scalar_ir("ember_no_such_function", 1))


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("define void @f() {\n  ret i32 0\n}\n", "invalid LLVM IR: .*result type"),
        ("this is not IR", "invalid LLVM IR"),
        (
            "define i32 @f() {\nentry:\n  ret i32 %x\nlater:\n  %x = add i32 1, 2\n  ret i32 %x\n}\n",
            "does not verify: Instruction does not dominate",
        ),
    ],
)
def test_invalid_ir_is_a_codegen_error(source: str, message: str) -> None:
    with pytest.raises(CodegenError, match=message) as info:
        JitModule(source)
    assert isinstance(info.value, EmberError)
    assert "\n" not in str(info.value)


def test_exports_external_symbols_only() -> None:
    source = """
@scale = global float 2.5
define internal float @helper(float %x) {
  %r = fmul float %x, 3.0
  ret float %r
}
define float @entry(float %x) {
  %s = load float, ptr @scale
  %h = call float @helper(float %x)
  %r = fadd float %h, %s
  ret float %r
}
"""
    jit = JitModule(source)
    assert sorted(jit.symbols) == ["entry", "scale"]
    assert ctypes.c_float.from_address(jit.address("scale")).value == 2.5
    assert jit.function("entry", ctypes.c_float, [ctypes.c_float])(2.0) == 8.5
    with pytest.raises(CodegenError, match="no exported symbol 'helper'"):
        jit.address("helper")


def test_modules_with_the_same_symbol_coexist() -> None:
    def constant(value: float) -> str:
        return f"define float @value() {{\n  ret float {value}\n}}\n"

    first, second = JitModule(constant(1.0)), JitModule(constant(2.0))
    assert first.function("value", ctypes.c_float, [])() == 1.0
    assert second.function("value", ctypes.c_float, [])() == 2.0


def test_function_keeps_its_code_alive() -> None:
    func = JitModule(scalar_ir("expf", 1)).function("call_expf", ctypes.c_float, [ctypes.c_float])
    gc.collect()
    assert func(0.0) == 1.0


def test_phase_times_are_recorded() -> None:
    """Every phase that runs is timed, once: each took some time, and they
    do not overlap, so together they fit in the time the whole took. A
    prebuilt module skips parsing and optimising, and their times say so."""
    start = time.perf_counter()
    jit = JitModule(saxpy_module())
    whole = time.perf_counter() - start
    times = jit.times
    assert min(times.parse_s, times.optimize_s, times.codegen_s, times.link_s) > 0
    assert times.total_s <= whole
    tm = host_target_machine()
    module = parse_ir(saxpy_module(), tm)
    optimize(module, tm)
    prebuilt = JitModule(module, optimized=True)
    assert prebuilt.times.parse_s == prebuilt.times.optimize_s == 0.0
    assert prebuilt.times.codegen_s > 0 and prebuilt.times.link_s > 0
    assert prebuilt.module is module


def test_host_description_and_cached_target_machine() -> None:
    assert host_cpu_description().startswith(llvm.get_host_cpu_name())
    assert host_target_machine() is host_target_machine(LLVM_OPT_LEVEL)
    assert host_target_machine(3) is not host_target_machine(LLVM_OPT_LEVEL)
    assert host_target_machine().triple == llvm.get_process_triple()
