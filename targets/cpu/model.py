"""A model compiled for this CPU: the entry function JIT-compiled, called
through ctypes with its weights blob and arena.

The result of the CPU pipeline is one entry function `void f(void *const
buffers[], const void *weights, void *arena)`, `buffers` holding the inputs'
then the outputs' data pointers (the packed ABI of `convert-loop-to-llvm`:
any number of inputs and outputs), that calls one kernel function per
fusion group or loop nest (identical kernels are shared). The weights blob
and the arena are NumPy buffers owned by the `CompiledModel`; weights never
pass through LLVM IR. A model with symbolic dims compiles to the generic
version instead (`generic.py`).
"""

from __future__ import annotations

import ctypes
import threading
from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from ember.dialects.loop import ALIGNMENT, aligned_zeros
from ember.errors import EmberError
from ember.options import DEFAULT_OPTIONS, Options
from ember.passes.graph.unroll_control_flow import (
    remaining_control_flow,
    resolve_static_control_flow,
)
from ember.reference import entry_function
from ember.report import CompileReport
from ember.targets.calls import CheckedCalls, TensorSpec, has_symbols, model_specs

if TYPE_CHECKING:
    from ember.targets.cpu.generic import GenericModel

ENTRY_NAME = "ember_main"
"""The name of a compiled model's entry function."""


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


def compile_module(
    module: ModuleOp, report: CompileReport | None = None, options: Options = DEFAULT_OPTIONS
) -> CompiledModel | GenericModel:
    """Compiles graph IR (an imported model) for this CPU."""
    # Imported here: `import ember` need not load every lowering and LLVM.
    from ember.targets.cpu.pipeline import jit_entry, lower_to_loops, make_entry

    report = report or CompileReport()
    func = entry_function(module)
    if has_symbols(func):
        from ember.targets.cpu.generic import compile_generic

        return compile_generic(module, report, options)
    if remaining_control_flow(func) is not None:
        resolve_static_control_flow(module)  # its results' shapes may depend on it
    inputs, outputs = model_specs(func)
    make_entry(func, ENTRY_NAME)
    weights = lower_to_loops(module, report, options)
    function = jit_entry(module, ENTRY_NAME, report)
    return CompiledModel(inputs, outputs, function, weights, report.arena_bytes, report)


__all__ = ["ENTRY_NAME", "CompiledModel", "Profiled", "compile_module"]
