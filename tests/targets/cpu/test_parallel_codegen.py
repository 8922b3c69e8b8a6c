"""A lowered model's LLVM module split into parts (module_parts.py), or
lowered part by part (streamed_codegen.py), and the parts compiled on this
thread and the codegen workers (parallel_codegen.py): each kernel is
defined once, next to its parallel tasks; a model compiled in parts runs
exactly as the whole one, in the JIT and as a shared library; a part's
object is the same wherever it was compiled; a worker that dies leaves its
part to this thread."""

from __future__ import annotations

import ctypes
import re
import subprocess
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np
import onnx
import pytest
from llvmlite import ir

import ember
from ember.deploy import compile_to_directory
from ember.dialects.loop import aligned_zeros
from ember.frontends.onnx import import_onnx
from ember.options import DEFAULT_OPTIONS, Options
from ember.reference import entry_function
from ember.report import CompileReport
from ember.targets.cpu import (
    LLVM_OPT_LEVEL,
    CodegenError,
    JitModule,
    host_target_machine,
    module_parts,
    parse_ir,
    pipeline,
    streamed_codegen,
)
from ember.targets.cpu import parallel_codegen as codegen
from ember.targets.cpu.llvm_module import to_llvmlite
from ember.targets.cpu.model import ENTRY_NAME
from ember.targets.cpu.module_parts import part_count, split_module
from ember.targets.cpu.parallel_codegen import WORKERS_ENV, compile_part, compile_parts
from tests.support.models import mlp, random_inputs

_DEFINITION = re.compile(r'^define (hidden )?(internal )?[^@]*@"?([\w.]+)"?\(', re.MULTILINE)
_REFERENCE = re.compile(r'@"?([\w.]+)"?')


@pytest.fixture
def one_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(WORKERS_ENV, "1")


def _model() -> onnx.ModelProto:
    """Three layers of different widths: several kernels, each parallel on two threads."""
    return mlp(batch=8, sizes=(64, 96, 48, 10))


def _lowered(threads: int) -> ir.Module:
    module = import_onnx(_model())
    pipeline.make_entry(entry_function(module), "ember_main")
    pipeline.lower_to_llvm(module, CompileReport(), replace(DEFAULT_OPTIONS, threads=threads))
    return to_llvmlite(module)


def _record_parts(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The IR text of every part handed to the codegen workers from now on."""
    submitted: list[str] = []
    submit = codegen.PartCompiler.submit

    def recorded(compiler: codegen.PartCompiler, text: str) -> None:
        submitted.append(text)
        submit(compiler, text)

    monkeypatch.setattr(codegen.PartCompiler, "submit", recorded)
    return submitted


def _definitions(text: str) -> dict[str, tuple[bool, bool]]:
    """Name -> (hidden, internal) for each function `text` defines."""
    return {m.group(3): (bool(m.group(1)), bool(m.group(2))) for m in _DEFINITION.finditer(text)}


def test_each_kernel_is_defined_once_hidden_with_its_tasks_and_the_entry_in_part_0() -> None:
    llvm_module = _lowered(threads=2)
    kernels = {f.name for f in llvm_module.functions if "noinline" in f.attributes}
    tasks = {f.name for f in llvm_module.functions
             if f.blocks and f.linkage == "internal" and f.name not in kernels}  # fmt: skip
    assert len(kernels) >= 3 and tasks, "the model should have kernels with parallel tasks"
    parts = split_module(llvm_module, 3)
    assert len(parts) == 3
    definitions = [_definitions(part) for part in parts]
    assert "ember_main" in definitions[0]
    for kernel in kernels:
        homes = [d[kernel] for d in definitions if kernel in d]
        assert homes == [(True, False)], kernel  # once, hidden, external
    for part, defined in zip(parts, definitions):
        for body in re.split(r"^define ", part, flags=re.MULTILINE)[1:]:
            for name in set(_REFERENCE.findall(body)) & tasks:
                assert name in defined, f"{name} is used in a part that does not define it"
        parse_ir(part)  # each part is a module of its own


def test_one_part_or_no_kernels_leaves_the_module_whole() -> None:
    llvm_module = _lowered(threads=1)
    assert split_module(llvm_module, 1) == [str(llvm_module)]
    module = ir.Module(name="plain")
    function = ir.Function(module, ir.FunctionType(ir.VoidType(), []), "f")
    ir.IRBuilder(function.append_basic_block()).ret_void()
    assert split_module(module, 4) == [str(module)]


def test_the_workers_setting_bounds_the_parts(monkeypatch: pytest.MonkeyPatch) -> None:
    llvm_module = _lowered(threads=1)
    monkeypatch.setattr(module_parts, "MIN_PART_INSTRUCTIONS", 1)
    monkeypatch.setenv(WORKERS_ENV, "0")
    assert part_count(llvm_module) == 1
    monkeypatch.setenv(WORKERS_ENV, "1")
    assert part_count(llvm_module) == module_parts.PARTS_PER_CORE * 2


@pytest.mark.parametrize("threads", [1, 2])
def test_a_model_compiled_in_parts_runs_exactly_as_the_whole_one(
    threads: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = _model()
    inputs = random_inputs(model)
    monkeypatch.setenv(WORKERS_ENV, "0")
    whole = ember.compile(model, threads=threads).run(inputs)
    monkeypatch.setenv(WORKERS_ENV, "1")
    monkeypatch.setattr(streamed_codegen, "PART_OPS", 1)  # a part per kernel
    submitted = _record_parts(monkeypatch)
    split = ember.compile(model, threads=threads).run(inputs)
    assert len(submitted) > 2
    definitions = [_definitions(part) for part in submitted]
    defined = [name for d in definitions[1:] for name in d]
    assert ENTRY_NAME in definitions[0] and len(defined) >= 3
    for name in defined:  # once; a kernel external and hidden, a task internal
        where = [d[name] for d in definitions if name in d]
        assert where == [(False, True) if name.endswith("_task") else (True, False)], name
    for ours, theirs in zip(split, whole):
        np.testing.assert_array_equal(ours, theirs)


@pytest.fixture
def parts(one_worker: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    monkeypatch.setattr(module_parts, "MIN_PART_INSTRUCTIONS", 1)
    yield split_module(_lowered(threads=2), 3)


def test_a_part_compiles_to_the_same_object_on_a_worker_as_here(parts: list[str]) -> None:
    (worker,) = codegen._idle_workers(1)
    try:
        there = worker.compile(parts[1], LLVM_OPT_LEVEL)
    finally:
        worker.busy.release()
    assert there == compile_part(parts[1], LLVM_OPT_LEVEL)


def test_a_worker_that_died_leaves_its_part_to_this_thread(parts: list[str]) -> None:
    codegen.start_workers()
    dead = list(codegen._workers)
    for worker in dead:
        worker.process.kill()
        worker.process.wait()
    objects = compile_parts(parts, LLVM_OPT_LEVEL)
    assert objects == [compile_part(part, LLVM_OPT_LEVEL) for part in parts]
    assert not set(dead) & set(codegen._workers)


def test_an_llvm_error_in_any_part_is_a_codegen_error(parts: list[str]) -> None:
    broken = parts[2].replace("ret void", "ret i64 0", 1)
    with pytest.raises(CodegenError, match="invalid LLVM IR|does not verify"):
        JitModule(parts[0], parts=[parts[1], broken])
    with pytest.raises(CodegenError, match="IR text"):
        JitModule(ir.Module(name="m"), parts=[parts[1]])
    with pytest.raises(CodegenError, match="host CPU"):
        JitModule(parts[0], parts=[parts[1]], target_machine=host_target_machine())


def test_a_library_compiled_in_parts_exports_its_api_alone_and_runs_as_the_jit(
    tmp_path: Path, one_worker: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = _model()
    inputs = random_inputs(model)
    (want,) = ember.compile(model, threads=2).run(inputs)
    monkeypatch.setattr(streamed_codegen, "PART_OPS", 1)
    submitted = _record_parts(monkeypatch)
    deployed = compile_to_directory(model, tmp_path, "mlp", options=Options(threads=2))
    assert len(submitted) > 3  # the entry's, a part per kernel, the thread pool's
    symbols = subprocess.run(["nm", "-D", "--defined-only", str(deployed.library)],
                             capture_output=True, text=True, check=True).stdout  # fmt: skip
    exported = {line.split()[-1] for line in symbols.splitlines() if " T " in line}
    assert exported == {"mlp_run", "mlp_set_threads"}
    library = ctypes.CDLL(str(deployed.library))
    library.mlp_run.argtypes = [ctypes.c_void_p] * 3
    blob = deployed.weights.read_bytes()
    weights = aligned_zeros(len(blob))
    weights[:] = np.frombuffer(blob, dtype=np.uint8)
    arena = aligned_zeros(deployed.arena_bytes)
    got = np.zeros_like(want)
    (x,) = inputs.values()
    buffers = (ctypes.c_void_p * 2)(x.ctypes.data, got.ctypes.data)
    library.mlp_run(ctypes.addressof(buffers), weights.ctypes.data, arena.ctypes.data)
    np.testing.assert_array_equal(got, want)
