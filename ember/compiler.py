"""`ember.compile`: ONNX model -> native code for this CPU, as one function.

The CPU pipeline, each step a registered pass (`ember-opt -p ...` runs the
same ones):

    graph-optimize{level=N}                                 (graph level, -O0/-O1/-O2)
    convert-graph-to-tensor                                 (structured ops)
    convert-tensor-to-loop, [loop-fuse at -O2,] loop-pack-weights,
    loop-plan-memory, loop-outline-kernels
    convert-loop-to-llvm -> llvmlite -> LLVM -O3 for the host CPU

The result is one entry function `void f(void *const buffers[], const void
*weights, void *arena)`, `buffers` holding the inputs' then the outputs'
data pointers (the packed ABI of `convert-loop-to-llvm`: any number of
inputs and outputs), that calls one kernel function per fusion group or loop
nest (identical kernels are shared). The weights blob and the arena are
NumPy buffers owned by the `CompiledModel`; weights never pass through LLVM
IR.
"""

from __future__ import annotations

import ctypes
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import groupby
from typing import Any

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr, TensorType, UnitAttr
from xdsl.dialects.func import FuncOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from ember.dialects.graph.types import DYNAMIC, UnsupportedTypeError, numpy_dtype
from ember.errors import (
    CompileError,
    EmberError,
    InputDependentDiagnostic,
    InputDependentError,
)
from ember.frontends.onnx import import_onnx
from ember.frontends.onnx.loader import ModelSource
from ember.passes.graph.optimize import DEFAULT_LAYOUT
from ember.reference import entry_function

ENTRY_NAME = "ember_main"


class InputError(EmberError):
    """The arrays given to a compiled model do not match its inputs."""


@dataclass(frozen=True)
class TensorSpec:
    name: str
    shape: tuple[int, ...]
    dtype: np.dtype[Any]

    def describe(self) -> str:
        return f"'{self.name}' {self.dtype}{list(self.shape)}"


StageListener = Callable[[str, float | None], None]
"""Told `(stage, None)` when a compile stage starts and `(stage, seconds)`
when it ends (the CLI prints progress with it)."""


@dataclass
class CompileReport:
    """What compiling cost and produced: seconds per stage (`seconds`: import,
    graph, tensor, loop, llvm, llvm-jit), per pass or LLVM phase within them
    (`pass_seconds`, by pass name), CPU seconds per pass (`pass_cpu_seconds`,
    the LLVM phases together as `llvm-jit`: on a busy machine CPU time shows
    how compile time scales better than wall time), memory, code size."""

    seconds: dict[str, float] = field(default_factory=dict)
    pass_seconds: dict[str, float] = field(default_factory=dict)
    pass_cpu_seconds: dict[str, float] = field(default_factory=dict)
    arena_bytes: int = 0
    naive_bytes: int = 0
    weights_bytes: int = 0
    listener: StageListener | None = field(default=None, repr=False, compare=False)

    @property
    def total_seconds(self) -> float:
        return sum(self.seconds.values())

    @contextmanager
    def timed_pass(self, name: str) -> Iterator[None]:
        """Adds the wall and CPU seconds of the `with` block to pass `name`."""
        start, cpu_start = time.perf_counter(), time.process_time()
        yield
        self.pass_seconds[name] = self.pass_seconds.get(name, 0.0) + time.perf_counter() - start
        cpu = time.process_time() - cpu_start
        self.pass_cpu_seconds[name] = self.pass_cpu_seconds.get(name, 0.0) + cpu

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Times the work in the `with` block as (part of) stage `name`."""
        if self.listener is not None:
            self.listener(name, None)
        start = time.perf_counter()
        yield
        elapsed = time.perf_counter() - start
        self.seconds[name] = self.seconds.get(name, 0.0) + elapsed
        if self.listener is not None:
            self.listener(name, elapsed)


@dataclass(frozen=True)
class Options:
    """How to compile: `opt_level` 0, 1 or 2 (see `graph-optimize`), the
    activation `layout` of convolutions at level 2 ("NHWC", "NCHWc", or "none"
    for NCHW), and optimisation
    passes to leave out by name (`disabled`, e.g. ("loop-fuse",))."""

    opt_level: int = 2
    layout: str = DEFAULT_LAYOUT
    disabled: tuple[str, ...] = ()


DEFAULT_OPTIONS = Options()

OPTIONAL_PASSES = ("graph-canonicalize", "graph-fold-batchnorm", "cse", "graph-layout",
                   "graph-fuse", "loop-fuse")  # fmt: skip
"""The passes `Options.disabled` may name (the others are needed to lower)."""


def cpu_passes(options: Options = DEFAULT_OPTIONS) -> list[tuple[str, ModulePass]]:
    """The CPU pipeline as (stage, pass) pairs, in order."""
    from ember.lowering.graph_to_tensor import ConvertGraphToTensorPass
    from ember.lowering.loop_to_llvm import ConvertLoopToLLVMPass
    from ember.lowering.tensor_to_loop import ConvertTensorToLoopPass
    from ember.passes.graph.optimize import graph_passes
    from ember.passes.loop.fuse import FuseLoopsPass
    from ember.passes.loop.outline_kernels import OutlineKernelsPass
    from ember.passes.loop.pack_weights import PackWeightsPass
    from ember.passes.loop.plan_memory import PlanMemoryPass

    unknown = sorted(set(options.disabled) - set(OPTIONAL_PASSES))
    if unknown:
        raise EmberError(
            f"cannot disable {', '.join(unknown)}: optional passes are {', '.join(OPTIONAL_PASSES)}"
        )
    try:
        graph = graph_passes(options.opt_level, options.layout, options.disabled)
    except DiagnosticException as error:
        raise EmberError(str(error)) from None
    loop_fusion = (
        [FuseLoopsPass()] if options.opt_level >= 2 and "loop-fuse" not in options.disabled else []
    )
    return [
        *(("graph", p) for p in graph),
        ("tensor", ConvertGraphToTensorPass()),
        ("loop", ConvertTensorToLoopPass()),
        *(("loop", p) for p in loop_fusion),
        ("loop", PackWeightsPass()),
        ("loop", PlanMemoryPass()),
        ("loop", OutlineKernelsPass()),
        ("llvm", ConvertLoopToLLVMPass()),
    ]


def _specs(func: FuncOp, names: Sequence[str], types: Sequence[Any]) -> list[TensorSpec]:
    specs = []
    for name, value_type in zip(names, types):
        assert isinstance(value_type, TensorType)
        shape = tuple(value_type.get_shape())
        if DYNAMIC in shape:
            raise InputDependentError(
                f"{func.sym_name.data}: '{name}' has a dynamic shape {value_type}; the CPU "
                "pipeline needs static shapes (give them with --input-shape NAME=DIMS on the "
                "command line, input_shapes= in Python)"
            )
        try:
            dtype = numpy_dtype(value_type.element_type)
        except UnsupportedTypeError as error:
            raise CompileError(f"'{name}': {error}") from None
        specs.append(TensorSpec(name, shape, dtype))
    return specs


def model_specs(func: FuncOp) -> tuple[list[TensorSpec], list[TensorSpec]]:
    """The entry function's inputs and outputs (static shapes required)."""
    from ember.reference import input_names, output_names

    inputs = _specs(func, input_names(func), func.function_type.inputs.data)
    outputs = _specs(func, output_names(func), func.function_type.outputs.data)
    return inputs, outputs


def lower_to_llvm(
    module: ModuleOp, report: CompileReport, options: Options = DEFAULT_OPTIONS
) -> np.ndarray:
    """Runs the CPU pipeline on graph IR in place; returns the weights blob."""
    from ember.passes.loop.pack_weights import weights_blob

    blob: np.ndarray | None = None
    context = Context()
    for stage, passes in groupby(cpu_passes(options), key=lambda pair: pair[0]):
        with report.stage(stage):
            if stage == "llvm":
                blob = weights_blob(module)
                _record_memory(module, report)
            for _, compiler_pass in passes:
                with report.timed_pass(compiler_pass.name):
                    try:
                        compiler_pass.apply(context, module)
                    except InputDependentDiagnostic as error:
                        raise InputDependentError(str(error).strip().splitlines()[0]) from error
                    except DiagnosticException as error:
                        raise CompileError(str(error).strip().splitlines()[0]) from error
    assert blob is not None
    return blob


def _record_memory(module: ModuleOp, report: CompileReport) -> None:
    for op in module.walk():
        if isinstance(op, FuncOp):
            for key, attr in (("arena_bytes", "loop.arena_bytes"), ("naive_bytes", "loop.naive_bytes"),
                              ("weights_bytes", "loop.weights_bytes")):  # fmt: skip
                value = op.attributes.get(attr)
                if isinstance(value, IntegerAttr):
                    setattr(report, key, getattr(report, key) + value.value.data)


class CompiledModel:
    """A model compiled to native code: call it with NumPy arrays.

    `model(x, y)` takes inputs in the model's order, `model.run({"x": x})`
    by name; both return the outputs as a list of NumPy arrays in the
    model's output order. Inputs are checked (count, dtype, shape); a
    non-contiguous array is copied to a contiguous one, never read strided.
    Calls are serialised (the arena is shared scratch memory).
    """

    def __init__(self, inputs: list[TensorSpec], outputs: list[TensorSpec], function: Any,
                 weights: np.ndarray, arena_bytes: int, report: CompileReport):  # fmt: skip
        self.inputs = inputs
        self.outputs = outputs
        self.report = report
        self._function = function
        self._weights = weights
        self._arena = np.zeros(max(arena_bytes, 64), dtype=np.uint8)
        self._buffers = (ctypes.c_void_p * (len(inputs) + len(outputs)))()
        self._lock = threading.Lock()

    def __call__(self, *arrays: np.ndarray) -> list[np.ndarray]:
        if len(arrays) != len(self.inputs):
            expected = ", ".join(s.describe() for s in self.inputs)
            raise InputError(
                f"the model takes {len(self.inputs)} inputs ({expected}), got {len(arrays)}"
            )
        return self._execute([self._checked(spec, a) for spec, a in zip(self.inputs, arrays)])

    def run(self, feeds: Mapping[str, np.ndarray]) -> list[np.ndarray]:
        names = [s.name for s in self.inputs]
        missing = [n for n in names if n not in feeds]
        unknown = [n for n in feeds if n not in names]
        if missing or unknown:
            raise InputError(
                f"inputs by name: missing {missing}, unknown {unknown}; the model takes {names}"
            )
        return self._execute([self._checked(s, feeds[s.name]) for s in self.inputs])

    @staticmethod
    def _checked(spec: TensorSpec, array: Any) -> np.ndarray:
        if isinstance(array, np.generic):  # a NumPy scalar is a 0-d array
            array = np.asarray(array)
        if not isinstance(array, np.ndarray):
            raise InputError(
                f"input {spec.describe()}: expected a NumPy array, got {type(array).__name__}"
            )
        if array.dtype != spec.dtype:
            raise InputError(f"input {spec.describe()}: got dtype {array.dtype}")
        if array.shape != spec.shape:
            raise InputError(f"input {spec.describe()}: got shape {list(array.shape)}")
        return np.ascontiguousarray(array)

    def _execute(self, arrays: list[np.ndarray]) -> list[np.ndarray]:
        results = [np.empty(s.shape, dtype=s.dtype) for s in self.outputs]
        with self._lock:
            self._buffers[:] = [a.ctypes.data for a in (*arrays, *results)]
            self._function(
                ctypes.addressof(self._buffers), self._weights.ctypes.data, self._arena.ctypes.data
            )
        return results


def compile_module(
    module: ModuleOp, report: CompileReport | None = None, options: Options = DEFAULT_OPTIONS
) -> CompiledModel:
    """Compiles graph IR (an imported model) for this CPU."""
    from ember.lowering.loop_to_llvm import PACKED_BUFFERS_ATTR
    from ember.targets.cpu import JitModule, to_llvmlite

    report = report or CompileReport()
    func = entry_function(module)
    inputs, outputs = model_specs(func)
    func.sym_name = StringAttr(ENTRY_NAME)
    func.attributes[PACKED_BUFFERS_ATTR] = UnitAttr()  # one argument for all the buffers
    weights = lower_to_llvm(module, report, options)
    with report.stage("llvm-jit"):
        with report.timed_pass("llvm-ir-text"):
            llvm_ir = str(to_llvmlite(module))
        with report.timed_pass("llvm-jit"):
            jit = JitModule(llvm_ir)
    for phase in ("parse", "optimize", "codegen", "link"):
        report.pass_seconds[f"llvm-{phase}"] = getattr(jit.times, f"{phase}_s")
    function = jit.function(ENTRY_NAME, None, [ctypes.c_void_p] * 3)  # buffers, weights, arena
    return CompiledModel(inputs, outputs, function, weights, report.arena_bytes, report)


def compile(  # noqa: A001 - the public name the API promises
    model: ModelSource,
    target: str = "cpu",
    threads: int | None = None,
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    opt_level: int = 2,
    layout: str = DEFAULT_LAYOUT,
    disabled: Sequence[str] = (),
) -> CompiledModel:
    """Compiles an ONNX model (path, bytes or ModelProto) for `target`.

    `opt_level` (0, 1, 2), `layout` and `disabled` choose the optimisations
    (see `Options`). Only `cpu` exists so far. `threads` is accepted for the stable API; the
    generated code runs on the calling thread until parallel loops land.
    """
    if target != "cpu":
        raise EmberError(f"target '{target}' is not available yet (available: cpu)")
    if threads is not None and (not isinstance(threads, int) or threads < 1):
        raise EmberError(f"threads must be a positive integer, got {threads!r}")
    if opt_level not in (0, 1, 2):
        raise EmberError(f"opt_level must be 0, 1 or 2, got {opt_level!r}")
    if isinstance(disabled, str):
        raise EmberError(f"disabled must be a sequence of pass names, got the string {disabled!r}")
    report = CompileReport()
    with report.stage("import"):
        module = import_onnx(model, input_shapes)
    return compile_module(module, report, Options(opt_level, layout, tuple(disabled)))
