"""AOT: an object file becomes a `.so` with a C header that C and ctypes can use."""

from __future__ import annotations

import ctypes
import math
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from ember.targets.cpu import (
    CField,
    CodegenError,
    CStruct,
    emit_object,
    host_target_machine,
    link_shared_library,
    parse_ir,
    write_c_header,
)
from ember.targets.cpu.optimize import optimize

pytestmark = pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler")

FLOAT_P = ctypes.POINTER(ctypes.c_float)

# saxpy: y[i] += a * x[i]; erf_all: x[i] = erff(x[i]) (so the .so needs libm).
SOURCE = """
declare float @erff(float)

define void @saxpy(ptr %x, ptr %y, i64 %n, float %a) {
entry:
  %any = icmp sgt i64 %n, 0
  br i1 %any, label %loop, label %exit
loop:
  %i = phi i64 [0, %entry], [%next, %loop]
  %px = getelementptr float, ptr %x, i64 %i
  %py = getelementptr float, ptr %y, i64 %i
  %vx = load float, ptr %px
  %vy = load float, ptr %py
  %ax = fmul float %a, %vx
  %s = fadd float %ax, %vy
  store float %s, ptr %py
  %next = add i64 %i, 1
  %more = icmp slt i64 %next, %n
  br i1 %more, label %loop, label %exit
exit:
  ret void
}

define void @erf_all(ptr %x, i64 %n) {
entry:
  %any = icmp sgt i64 %n, 0
  br i1 %any, label %loop, label %exit
loop:
  %i = phi i64 [0, %entry], [%next, %loop]
  %p = getelementptr float, ptr %x, i64 %i
  %v = load float, ptr %p
  %e = call float @erff(float %v)
  store float %e, ptr %p
  %next = add i64 %i, 1
  %more = icmp slt i64 %next, %n
  br i1 %more, label %loop, label %exit
exit:
  ret void
}
"""

SAXPY_PARAMS = [("const float *", "x"), ("float *", "y"), ("int64_t", "n"), ("float", "a")]

MAIN_C = r"""
#include <stdio.h>
#include "saxpy.h"

int main(void) {
    float x[11], y[11];
    for (int i = 0; i < 11; ++i) { x[i] = 0.5f * (float)i - 2.0f; y[i] = 1.0f + (float)i; }
    saxpy(x, y, 11, 3.25f);
    for (int i = 0; i < 11; ++i) printf("%.9g\n", y[i]);
    return 0;
}
"""


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`libkernels.so` and `saxpy.h`, built once for the tests below."""
    out = tmp_path_factory.mktemp("aot")
    tm = host_target_machine()
    module = parse_ir(SOURCE, tm)
    optimize(module, tm)
    obj = emit_object(module, tm)
    so = link_shared_library(obj, out / "libkernels.so")
    write_c_header(out / "saxpy.h", "saxpy", SAXPY_PARAMS, "y[i] += a * x[i] for i < n.")
    return so


def test_object_is_native(library: Path) -> None:
    tm = host_target_machine()
    obj = emit_object(parse_ir(SOURCE, tm), tm)
    assert obj[:4] == b"\x7fELF"
    assert library.exists()


def test_c_program_calls_the_library(library: Path) -> None:
    folder = library.parent
    (folder / "main.c").write_text(MAIN_C)
    exe = folder / "main"
    build = [
        "cc", "-std=c99", "-Wall", "-Werror", "-I", str(folder), "-o", str(exe),
        str(folder / "main.c"), "-L", str(folder), "-lkernels", f"-Wl,-rpath,{folder}",
    ]  # fmt: skip
    subprocess.run(build, check=True, capture_output=True, text=True)
    run = subprocess.run([str(exe)], check=True, capture_output=True, text=True)
    printed = np.array([float(v) for v in run.stdout.split()], dtype=np.float32)
    i = np.arange(11, dtype=np.float32)
    expected = np.float32(3.25) * (np.float32(0.5) * i - np.float32(2)) + (1 + i)
    np.testing.assert_allclose(printed, expected, rtol=1e-6)


def test_ctypes_calls_the_library(library: Path) -> None:
    lib = ctypes.CDLL(str(library))
    lib.saxpy.argtypes = [FLOAT_P, FLOAT_P, ctypes.c_int64, ctypes.c_float]
    lib.saxpy.restype = None
    lib.erf_all.argtypes = [FLOAT_P, ctypes.c_int64]
    lib.erf_all.restype = None
    rng = np.random.default_rng(1)
    x = rng.standard_normal(100).astype(np.float32)
    y = rng.standard_normal(100).astype(np.float32)
    expected = np.float32(-0.75) * x + y
    lib.saxpy(x.ctypes.data_as(FLOAT_P), y.ctypes.data_as(FLOAT_P), x.size, -0.75)
    np.testing.assert_allclose(y, expected, rtol=1e-6)
    erf_expected = [math.erf(v) for v in x.astype(np.float64)]
    lib.erf_all(x.ctypes.data_as(FLOAT_P), x.size)
    np.testing.assert_allclose(x, erf_expected, rtol=1e-6, atol=1e-7)


def test_header_declares_the_function(tmp_path: Path) -> None:
    header = write_c_header(
        tmp_path / "my-model.h", "run_model", SAXPY_PARAMS, "Doc */ line\n\nend"
    )
    text = header.read_text()
    assert "#ifndef EMBER_MY_MODEL_H" in text and "#define EMBER_MY_MODEL_H" in text
    assert 'extern "C" {' in text
    assert "void run_model(const float *x, float *y, int64_t n, float a);" in text
    assert text.count("*/") == 2  # the doc's own "*/" cannot end the comment early
    assert "void none(void);" in write_c_header(tmp_path / "n.h", "none", [], "").read_text()


@pytest.mark.skipif(shutil.which("c++") is None, reason="needs a C++ compiler")
def test_header_compiles_as_cpp(library: Path) -> None:
    source = library.parent / "use.cpp"
    source.write_text('#include "saxpy.h"\nint main() { float v = 1; saxpy(&v, &v, 1, 2.0f); }\n')
    command = ["c++", "-Wall", "-Werror", "-I", str(library.parent), "-o",
               str(library.parent / "use"), str(source), str(library)]  # fmt: skip
    subprocess.run(command, check=True, capture_output=True, text=True)


def test_header_rejects_bad_identifiers(tmp_path: Path) -> None:
    with pytest.raises(CodegenError, match="not a valid C identifier"):
        write_c_header(tmp_path / "bad.h", "my-model", [], "")


def test_link_failure_reports_linker_output(tmp_path: Path) -> None:
    with pytest.raises(CodegenError, match="linking .* failed .*exited with") as info:
        link_shared_library(b"not an object file", tmp_path / "libbad.so")
    assert "libbad.o" in str(info.value)  # the compiler's stderr names the bad input
    assert "\n" not in str(info.value)


def test_missing_compiler_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("CC", raising=False)
    with pytest.raises(CodegenError, match="no C compiler found"):
        link_shared_library(b"", tmp_path / "libx.so")


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ([("const float *", "int")], "'int' is a C or C\\+\\+ keyword or a reserved identifier"),
        ([("float *", "class")], "'class' is a C or C\\+\\+ keyword"),
        ([("float *", "__x")], "'__x' is a C or C\\+\\+ keyword or a reserved identifier"),
        ([("float *", "N")], "would declare N twice"),  # a parameter named like a macro
    ],
)
def test_header_rejects_reserved_and_clashing_names(
    tmp_path: Path, params: list[tuple[str, str]], message: str
) -> None:
    with pytest.raises(CodegenError, match=message):
        write_c_header(tmp_path / "bad.h", "f", params, "", {"N": 1})


def test_header_rejects_a_member_named_like_a_macro(tmp_path: Path) -> None:
    struct = CStruct("f_buffers", [CField("float *", "F_BYTES")])
    with pytest.raises(CodegenError, match="would declare F_BYTES twice"):
        write_c_header(tmp_path / "bad.h", "f", [], "", {"F_BYTES": 4}, [struct])
    twice = CStruct("f_buffers", [CField("float *", "x"), CField("float *", "x")])
    with pytest.raises(CodegenError, match="would declare x twice"):
        write_c_header(tmp_path / "bad.h", "f", [], "", {}, [twice])


def test_header_declares_a_struct_with_commented_members(tmp_path: Path) -> None:
    struct = CStruct("pair", [CField("const float *", "a", 'input "a*/b??/"'),
                              CField("double *", "b")], "Two buffers.")  # fmt: skip
    text = write_c_header(tmp_path / "pair.h", "use_pair", [("const pair *", "p")], "", {},
                          [struct]).read_text()  # fmt: skip
    assert "/*\n * Two buffers.\n */\ntypedef struct pair {\n" in text
    assert '    const float *a;  /* input "a* /b?\\?/" */\n    double *b;\n} pair;' in text
    assert "void use_pair(const pair *p);" in text
    assert text.index("typedef struct pair") < text.index("void use_pair")
    if shutil.which("c++") is not None:  # C++ too: a member may not be named like its class
        (tmp_path / "use.c").write_text('#include "pair.h"\nint main(void) { return 0; }\n')
        for compiler, language in (("cc", "c"), ("c++", "c++")):
            subprocess.run([compiler, "-x", language, "-Wall", "-Wextra", "-pedantic", "-Werror",
                            "-fsyntax-only", "-I", str(tmp_path), str(tmp_path / "use.c")],
                           check=True)  # fmt: skip
