"""The per-kernel profile: counters the instrumented code keeps, read back
with their static cost (loop-instrument-kernels, targets/cpu/profile.py)."""

from __future__ import annotations

import re

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import ember
from ember.errors import EmberError
from ember.options import Options
from ember.reference import entry_function
from ember.report import CompileReport
from ember.targets.cpu.llvm_module import to_llvmlite
from ember.targets.cpu.pipeline import lower_to_llvm, make_entry

M, K, N = 96, 80, 64


def matmul_relu(m: int | str = M, k: int = K, n: int = N) -> onnx.ModelProto:
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["a", "b"], ["c"]), helper.make_node("Relu", ["c"], ["d"])],
        "matmul_relu",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [m, k]),
         helper.make_tensor_value_info("b", TensorProto.FLOAT, [k, n])],
        [helper.make_tensor_value_info("d", TensorProto.FLOAT, [m, n])],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def _inputs(m: int = M, k: int = K, n: int = N) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return rng.standard_normal((m, k), np.float32), rng.standard_normal((k, n), np.float32)


def test_calls_and_matmul_flops_are_exact() -> None:
    # At -O0 nothing fuses: the matmul is a kernel of its own, 2*m*n*k flops.
    compiled = ember.compile(matmul_relu(), opt_level=0, profile=True)
    a, b = _inputs()
    for _ in range(3):
        (out,) = compiled(a, b)
    np.testing.assert_allclose(out, np.maximum(a @ b, 0), rtol=1e-4, atol=1e-4)
    rows = compiled.profile()
    assert {row.calls for row in rows} == {3}
    matmuls = [row for row in rows if row.label.startswith("matmul")]
    assert len(matmuls) == 1
    assert matmuls[0].flops == 2 * M * N * K
    assert matmuls[0].bytes == 4 * (M * K + K * N + M * N)
    relu = [row for row in rows if "maximumf" in row.label]
    assert len(relu) == 1 and relu[0].flops == M * N
    assert [row.seconds for row in rows] == sorted((row.seconds for row in rows), reverse=True)
    compiled.reset_profile()
    assert {row.calls for row in compiled.profile()} == {0}
    compiled(a, b)
    assert {row.calls for row in compiled.profile()} == {1}


def test_the_counters_time_the_kernel_calls_and_nothing_else() -> None:
    """The kernels' times are part of the call's by construction, whatever
    the machine's load: in the entry function every call is a kernel's
    between two cycle-counter readings, each kernel is called so, and no
    kernel reads the counter itself. The matmul's readings then add up."""
    ir = _llvm_ir(matmul_relu(), profile=True)
    functions = {text.split("(", 1)[0].split("@")[1].strip('"'): text.split("\n}", 1)[0]
                 for text in re.split(r"\n(?=define )", ir) if text.startswith("define")}  # fmt: skip
    calls = [re.search(r'call (?:ccc )?\S+ @"([^"]+)"', line).group(1)  # type: ignore[union-attr]
             for line in functions["ember_main"].splitlines() if " call " in f" {line}"]  # fmt: skip
    kernels = sorted(name for name in functions if name.startswith("ember_main_kernel"))
    assert len(kernels) == 2
    assert calls == [part for k in kernels for part in ("llvm.readcyclecounter", k,
                                                        "llvm.readcyclecounter")]  # fmt: skip
    assert not any("readcyclecounter" in functions[k] for k in kernels)
    compiled = ember.compile(matmul_relu(), opt_level=0, profile=True)
    compiled(*_inputs())
    (matmul,) = [row for row in compiled.profile() if row.label.startswith("matmul")]
    assert matmul.calls == 1 and matmul.seconds > 0


def test_the_generic_version_keeps_its_counters_as_its_arena_grows() -> None:
    # A symbolic row count: the arena is a formula, the counters lie at its
    # start, and growing the arena for a larger size carries them along.
    compiled = ember.compile(matmul_relu(m="M"), opt_level=0, profile=True)  # type: ignore[arg-type]
    assert compiled.report.profile_offset == 0
    for rows in (2, 200, 3):
        a, b = _inputs(rows)
        np.testing.assert_allclose(compiled(a, b)[0], np.maximum(a @ b, 0), rtol=1e-4, atol=1e-4)
    assert {row.calls for row in compiled.profile()} == {3}
    compiled.reset_profile()
    compiled(*_inputs(5))
    assert {row.calls for row in compiled.profile()} == {1}


def test_shared_kernels_count_every_call() -> None:
    # Two equal Relu nests on equal shapes share one kernel function: its
    # counters see both calls.
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"]), helper.make_node("Neg", ["y"], ["z"]),
         helper.make_node("Relu", ["z"], ["w"])],
        "relus",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, 16])],
        [helper.make_tensor_value_info("w", TensorProto.FLOAT, [8, 16])],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    compiled = ember.compile(model, opt_level=0, profile=True)
    x = np.linspace(-1, 1, 128, dtype=np.float32).reshape(8, 16)
    np.testing.assert_array_equal(compiled(x)[0], np.maximum(-np.maximum(x, 0), 0))
    calls = sorted(row.calls for row in compiled.profile())
    assert calls == [1, 2]


def _llvm_ir(model: onnx.ModelProto, profile: bool) -> str:
    module = ember.import_onnx(model)
    make_entry(entry_function(module), "ember_main")
    lower_to_llvm(module, CompileReport(), Options(opt_level=0, profile=profile))
    return str(to_llvmlite(module))


def test_without_profile_the_code_has_no_timing() -> None:
    assert "readcyclecounter" not in _llvm_ir(matmul_relu(), profile=False)
    assert "readcyclecounter" in _llvm_ir(matmul_relu(), profile=True)


def test_profile_of_an_unprofiled_model_is_an_error() -> None:
    compiled = ember.compile(matmul_relu(), opt_level=0)
    with pytest.raises(EmberError, match="compiled without a profile"):
        compiled.profile()
    assert compiled.report.profile_offset is None


def test_profile_flag_must_be_a_bool() -> None:
    with pytest.raises(EmberError, match="profile must be True or False"):
        ember.compile(matmul_relu(), profile="yes")  # type: ignore[arg-type]
