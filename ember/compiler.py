"""`ember.compile`: ONNX model -> native code for this CPU, as one function.

The public API: `compile`, `compile_module`, `CompiledModel`, `Options` and
`CompileReport`. The pipeline itself belongs to the target
(`targets/cpu/pipeline.py`: the pass list, the stages, verification, the
JIT); this module imports the model, checks its inputs and outputs, calls
the target and wraps the function it returns.

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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.dialects.func import FuncOp

from ember.dialects.graph.dims import symbolic_shape
from ember.dialects.graph.symbolic import Dim, Range, symbols_of
from ember.dialects.graph.types import DYNAMIC, UnsupportedTypeError, numpy_dtype
from ember.dialects.loop import ALIGNMENT, aligned_zeros
from ember.errors import CompileError, EmberError, InputDependentError
from ember.frontends.onnx import import_onnx
from ember.frontends.onnx.loader import ModelSource
from ember.frontends.torch import resolve_source
from ember.options import DEFAULT_OPTIONS, OPTIONAL_PASSES, Options, resolve_threads
from ember.passes.graph.optimize import DEFAULT_LAYOUT, OPT_LEVELS
from ember.reference import entry_function
from ember.report import CompileReport, StageListener

if TYPE_CHECKING:
    from ember.versions import VersionedModel

ENTRY_NAME = "ember_main"
TARGETS = ("cpu", "npu")
"""`npu` runs in the simulator (`ember.npu.NpuModel`)."""


class InputError(EmberError):
    """The arrays given to a compiled model do not match its inputs."""


@dataclass(frozen=True)
class TensorSpec:
    name: str
    shape: tuple[int, ...]
    dtype: np.dtype[Any]

    @property
    def dims(self) -> tuple[int, ...]:
        """The shape, as `InputSpec` reads it (a symbolic spec's dims may be
        expressions)."""
        return self.shape

    def describe(self) -> str:
        return f"'{self.name}' {self.dtype}{list(self.shape)}"


def dynamic_shape_error(
    func: FuncOp, name: str, value_type: TensorType, why: str
) -> InputDependentError:
    """The error for an input or output of dynamic shape the pipeline cannot
    compile as it is (`why`), offering the ways to give it sizes."""
    symbols = sorted(symbols_of(symbolic_shape(value_type)))
    pin = (f"pin {', '.join(symbols)} with --dim {symbols[0]}=SIZE on the command line, "
           f"dims={{'{symbols[0]}': (SIZE, SIZE)}} or specialize={{'{symbols[0]}': "
           "[SIZES]} in Python, or give the shape"
           if symbols else "give them")  # fmt: skip
    return InputDependentError(
        f"{func.sym_name.data}: '{name}' has a dynamic shape {value_type}; {why} "
        f"({pin} with --input-shape NAME=DIMS, input_shapes= in Python)"
    )


def _specs(func: FuncOp, names: Sequence[str], types: Sequence[Any]) -> list[TensorSpec]:
    specs = []
    for name, value_type in zip(names, types):
        assert isinstance(value_type, TensorType)
        shape = tuple(value_type.get_shape())
        if DYNAMIC in shape:
            raise dynamic_shape_error(
                func, name, value_type, "the CPU pipeline needs static shapes so far"
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


class InputSpec(Protocol):
    """What the input checks read of an input, a compiled model's
    (`TensorSpec`) or a generic version's (`ember.versions.SymbolicSpec`):
    its name, dims (sizes, or expressions over the symbols), dtype and how
    to show it."""

    @property
    def name(self) -> str: ...

    @property
    def dims(self) -> tuple[Dim, ...]: ...

    @property
    def dtype(self) -> np.dtype[Any]: ...

    def describe(self) -> str: ...


def check_count(specs: Sequence[InputSpec], arrays: Sequence[Any]) -> None:
    """An InputError unless there is one array per input."""
    if len(arrays) != len(specs):
        expected = ", ".join(s.describe() for s in specs)
        raise InputError(f"the model takes {len(specs)} inputs ({expected}), got {len(arrays)}")


def in_order(specs: Sequence[InputSpec], feeds: Mapping[str, Any]) -> list[Any]:
    """Inputs given by name, in the model's order (an InputError for a missing
    or unknown name)."""
    names = [s.name for s in specs]
    missing = [n for n in names if n not in feeds]
    unknown = [n for n in feeds if n not in names]
    if missing or unknown:
        raise InputError(
            f"inputs by name: missing {missing}, unknown {unknown}; the model takes {names}"
        )
    return [feeds[n] for n in names]


def as_array(spec: InputSpec, array: Any) -> np.ndarray:
    """The input as an array (a NumPy scalar is a 0-d array, a CPU
    `torch.Tensor` the array it views), or an InputError."""
    if isinstance(array, np.generic):
        array = np.asarray(array)
    if type(array).__module__ == "torch" and type(array).__name__ == "Tensor":
        array = array.detach().cpu().numpy()
    if not isinstance(array, np.ndarray):
        raise InputError(
            f"input {spec.describe()}: expected a NumPy array, got {type(array).__name__}"
        )
    return array


class Profiled:
    """The kernel profile of a compiled model whose arena holds the counters
    (`compile(..., profile=True)`): needs `report`, `_arena` and `_lock`."""

    report: CompileReport
    _arena: np.ndarray
    _lock: threading.Lock

    def profile(self) -> list[Any]:
        """Per kernel function, slowest first: calls, seconds and static cost
        (`ember.targets.cpu.profile.KernelProfile`) over every call since
        compiling or `reset_profile`; needs `compile(..., profile=True)`."""
        from ember.targets.cpu.profile import read_profile

        offset = self._profile_offset()
        with self._lock:
            return read_profile(self._arena, offset, self.report.kernel_costs)

    def reset_profile(self) -> None:
        """Zeroes the profile's counters."""
        from ember.targets.cpu.profile import counters

        offset = self._profile_offset()
        with self._lock:
            counters(self._arena, offset, len(self.report.kernel_costs))[:] = 0

    def _profile_offset(self) -> int:
        if self.report.profile_offset is None:
            raise EmberError("the model was compiled without a profile (compile with profile=True)")
        return self.report.profile_offset


class CheckedCalls:
    """`model(x, y)` and `model.run({"x": x})` for a compiled model whose
    `_execute` takes its inputs checked (count, dtype, shape) and
    contiguous, in the model's order."""

    inputs: list[TensorSpec]

    def __call__(self, *arrays: np.ndarray) -> list[np.ndarray]:
        check_count(self.inputs, arrays)
        return self._execute([self._checked(spec, a) for spec, a in zip(self.inputs, arrays)])

    def run(self, feeds: Mapping[str, np.ndarray]) -> list[np.ndarray]:
        arrays = in_order(self.inputs, feeds)
        return self._execute([self._checked(s, a) for s, a in zip(self.inputs, arrays)])

    @staticmethod
    def _checked(spec: TensorSpec, array: Any) -> np.ndarray:
        array = as_array(spec, array)
        if array.dtype != spec.dtype:
            raise InputError(f"input {spec.describe()}: got dtype {array.dtype}")
        if array.shape != spec.shape:
            raise InputError(f"input {spec.describe()}: got shape {list(array.shape)}")
        return np.ascontiguousarray(array)

    def _execute(self, arrays: list[np.ndarray]) -> list[np.ndarray]:
        raise NotImplementedError


class CompiledModel(CheckedCalls, Profiled):
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
        self._arena = aligned_zeros(max(arena_bytes, ALIGNMENT))
        self._buffers = (ctypes.c_void_p * (len(inputs) + len(outputs)))()
        self._lock = threading.Lock()

    def _execute(self, arrays: list[np.ndarray]) -> list[np.ndarray]:
        results = [np.empty(s.shape, dtype=s.dtype) for s in self.outputs]
        with self._lock:
            self._buffers[:] = [a.ctypes.data for a in (*arrays, *results)]
            self._function(
                ctypes.addressof(self._buffers), self._weights.ctypes.data, self._arena.ctypes.data
            )
        return results


def first_symbolic(func: FuncOp) -> tuple[str, TensorType] | None:
    """The name and type of the entry function's first input (else output)
    with symbolic dims; None where it has none."""
    from ember.reference import input_names, output_names

    names = [*input_names(func), *output_names(func)]
    types = [*func.function_type.inputs.data, *func.function_type.outputs.data]
    for name, value_type in zip(names, types):
        if isinstance(value_type, TensorType) and symbols_of(symbolic_shape(value_type)):
            return name, value_type
    return None


def has_symbols(func: FuncOp) -> bool:
    """Whether the entry function's inputs or outputs have symbolic dims."""
    return first_symbolic(func) is not None


def compile_module(
    module: ModuleOp, report: CompileReport | None = None, options: Options = DEFAULT_OPTIONS
) -> CompiledModel:
    """Compiles graph IR (an imported model) for this CPU."""
    # Imported here: `import ember` need not load every lowering and LLVM.
    from ember.targets.cpu.pipeline import jit_entry, lower_to_llvm, make_entry

    report = report or CompileReport()
    func = entry_function(module)
    if has_symbols(func):
        from ember.versions import compile_generic

        return compile_generic(module, report, options)  # type: ignore[return-value]
    inputs, outputs = model_specs(func)
    make_entry(func, ENTRY_NAME)
    weights = lower_to_llvm(module, report, options)
    function = jit_entry(module, ENTRY_NAME, report)
    return CompiledModel(inputs, outputs, function, weights, report.arena_bytes, report)


def compile(  # noqa: A001 - the public name the API promises
    model: ModelSource | Any,
    target: str | Sequence[Any] = "cpu",
    threads: int | None = None,
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    dims: Mapping[str, Range] | None = None,
    specialize: Mapping[str, Sequence[int]] | str | None = None,
    opt_level: int = 2,
    layout: str = DEFAULT_LAYOUT,
    disabled: Sequence[str] = (),
    report: CompileReport | None = None,
    profile: bool = False,
    example_inputs: Sequence[Any] | None = None,
    dynamic_shapes: Mapping[str, Any] | Sequence[Any] | None = None,
) -> CompiledModel | VersionedModel:
    """Compiles an ONNX model (path, bytes or ModelProto) for `target`; or a
    PyTorch one: `ember.compile(module, example_inputs)` (an `nn.Module`,
    with `dynamic_shapes` as `torch.export` takes them), an `ExportedProgram`
    or a `.pt2` path, through `torch.onnx.export(dynamo=True)` (see
    `ember.frontends.torch`; `torch.export.Dim`s become symbols).

    `input_shapes` overrides input shapes and `dims` gives symbolic dims
    their ranges or pins them (`{"N": (8, 8)}`), as `import_onnx` says.
    `specialize` (`{"N": [1, 8]}`) compiles one static version per
    combination of sizes of the model's symbols and returns an
    `ember.versions.VersionedModel`, which runs the one its inputs' sizes
    select (the generic version at other sizes, compiled at the first of
    them); `"auto"` is one version with each symbol at the low end of its
    range.
    `opt_level` (0, 1, 2), `layout` and `disabled` choose the optimisations
    (see `Options`); `report` collects the seconds per stage; `profile`
    times every kernel call (read with `CompiledModel.profile()`). `target`
    `npu` runs the NPU's share of the model in its simulator and the rest
    on this CPU (`ember.npu`). `threads` (default: every core this process may use) is
    how many threads each parallel loop worth it is split among: the calling
    thread and workers of a pool that all compiled models share; 1 compiles
    serial code.
    """
    if not isinstance(target, str):  # ember.compile(module, example_inputs)
        if example_inputs is not None:
            raise EmberError("example_inputs given twice")
        target, example_inputs = "cpu", target
    if target not in TARGETS:
        raise EmberError(f"target '{target}' is not available (available: {', '.join(TARGETS)})")
    threads = resolve_threads(threads)
    if opt_level not in OPT_LEVELS:
        raise EmberError(f"opt_level must be 0, 1 or 2, got {opt_level!r}")
    if isinstance(disabled, str):
        raise EmberError(f"disabled must be a sequence of pass names, got the string {disabled!r}")
    report = report or CompileReport()
    with report.stage("import"):
        model, dims = resolve_source(model, dims, example_inputs, dynamic_shapes)
        module = import_onnx(model, input_shapes, dims)
    if not isinstance(profile, bool):
        raise EmberError(f"profile must be True or False, got {profile!r}")
    options = Options(opt_level, layout, tuple(disabled), profile=profile, threads=threads)
    if target == "npu":
        if specialize and specialize != "none":
            raise EmberError("the NPU target compiles one static version (no specialize)")
        from ember.npu import compile_npu

        return compile_npu(module, report, options)  # type: ignore[return-value]
    if specialize and specialize != "none":
        from ember.versions import compile_versions

        return compile_versions(module, specialize,
                                lambda version: compile_module(version, None, options))  # fmt: skip
    return compile_module(module, report, options)


__all__ = [
    "DEFAULT_OPTIONS",
    "ENTRY_NAME",
    "OPTIONAL_PASSES",
    "CheckedCalls",
    "CompileReport",
    "CompiledModel",
    "InputError",
    "Options",
    "StageListener",
    "TARGETS",
    "TensorSpec",
    "compile",
    "compile_module",
    "model_specs",
]
