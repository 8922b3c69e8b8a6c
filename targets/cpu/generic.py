"""The generic version of a model with symbolic dims on this CPU: compiled
once for every size of its symbols, the shapes read at each call."""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from ember.dialects.graph.dims import parse_dim
from ember.dialects.graph.symbolic import SIZE_LIMIT, Dim, SymExpr
from ember.dialects.loop import ALIGNMENT, aligned_zeros
from ember.errors import CompileError
from ember.options import Options
from ember.report import CompileReport
from ember.targets.calls import (
    InputError,
    as_array,
    check_count,
    dynamic_shape_error,
    first_symbolic,
    in_order,
)
from ember.targets.cpu.model import ENTRY_NAME, Profiled
from ember.targets.versions import (
    EntryCheck,
    SymbolicSpec,
    model_ranges,
    sizes_text,
    symbolic_specs,
)


class GenericModel(Profiled):
    """A model compiled once for every size of its symbols: its entry takes
    the buffers' run-time sizes (`dims`: each input's, then each output's
    symbolic dims, in order) and an arena of the size its formula gives
    (`report.arena_formula`).

    The bookkeeping of a call is generated into the JIT module with the
    kernel (`targets/cpu/jit_entry_check.py`, the C library's entry check
    as LLVM IR): at the first call with these input shapes, `ember_prepare`
    binds the symbols, checks the shapes and ranges and gives the outputs'
    shapes and the arena's bytes, kept per input shapes (the last
    `PLANS_KEPT`); every call then checks the dtypes, allocates the outputs,
    grows the arena if these sizes need more and calls `ember_run`, which
    repeats the checks natively, builds `dims` and runs the kernel. A failed
    check returns only a code, so Python then runs `EntryCheck.bind` to
    raise the `InputError` naming the input, the axis and the symbol, before
    anything runs. Calls are serialised (the arena is shared scratch
    memory)."""

    def __init__(self, check: EntryCheck, outputs: list[SymbolicSpec], jit: Any,
                 weights: np.ndarray, arena: Dim, report: CompileReport):  # fmt: skip
        from ember.targets.cpu.jit_entry_check import PREPARE, RUN

        self.inputs = check.inputs
        self.outputs = outputs
        self.report = report
        self._check = check
        self._jit = jit  # keeps the code alive
        self._prepare = jit.function(PREPARE, ctypes.c_int, [ctypes.c_void_p] * 2)
        self._run = jit.function(RUN, ctypes.c_int, [ctypes.c_void_p] * 4 + [ctypes.c_int64])
        self._weights = weights
        self._weights_address = weights.ctypes.data
        self._arena_formula = arena
        self._arena = aligned_zeros(ALIGNMENT)
        self._arena_address = self._arena.ctypes.data
        self._buffers = (ctypes.c_void_p * (len(check.inputs) + len(outputs)))()
        self._buffers_address = ctypes.addressof(self._buffers)
        self._lock = threading.Lock()
        self._plans: dict[tuple[tuple[int, ...], ...], _Plan] = {}

    def arena_bytes(self, sizes: Mapping[str, int]) -> int:
        """The arena these sizes of the symbols need."""
        formula = self._arena_formula
        return formula.evaluate(sizes) if isinstance(formula, SymExpr) else formula

    def __call__(self, *arrays: np.ndarray) -> list[np.ndarray]:
        check_count(self.inputs, arrays)
        arrays = tuple(a if type(a) is np.ndarray else as_array(s, a)
                       for s, a in zip(self.inputs, arrays))  # fmt: skip
        for spec, array in zip(self.inputs, arrays):
            if array.dtype != spec.dtype:
                self._check.check_types(arrays)
        key = tuple(a.shape for a in arrays)
        plan = self._plans.get(key) or self._plan(arrays, key)
        results = [np.empty(shape, dtype=spec.dtype)
                   for spec, shape in zip(self.outputs, plan.outputs)]  # fmt: skip
        contiguous = [np.ascontiguousarray(a) for a in arrays]
        with self._lock:
            if plan.arena > self._arena.size:  # what it held (a profile's counters) moves along
                grown = aligned_zeros(plan.arena)
                grown[: self._arena.size] = self._arena
                self._arena, self._arena_address = grown, grown.ctypes.data
            self._buffers[:] = [_address(a) for a in (*contiguous, *results)]
            code = self._run(self._buffers_address, plan.shapes_address, self._weights_address,
                             self._arena_address, self._arena.size)  # fmt: skip
        if code:
            raise InputError(f"the generic version's entry check failed (code {code}) for "
                             f"input shapes {[list(shape) for shape in key]}")  # fmt: skip
        return results

    def run(self, feeds: Mapping[str, np.ndarray]) -> list[np.ndarray]:
        return self(*in_order(self.inputs, feeds))

    def _plan(self, arrays: Sequence[np.ndarray], key: tuple[tuple[int, ...], ...]) -> _Plan:
        """For these input shapes (`key`): `ember_prepare`'s output shapes and
        arena, or the InputError of the Python entry check where it fails."""
        self._check.check_types(arrays)  # the ranks, so that the shapes fit the layout
        ranks = [len(spec.dims) for spec in self.outputs]
        shapes = np.array([*(d for shape in key for d in shape), *[0] * sum(ranks), 0],
                          dtype=np.int64)  # fmt: skip
        arena = ctypes.c_int64()
        if self._prepare(shapes.ctypes.data, ctypes.addressof(arena)):
            self._raise_entry_error(arrays)
        at, outputs = sum(len(shape) for shape in key), []
        for rank in ranks:
            outputs.append(tuple(int(d) for d in shapes[at : at + rank]))
            at += rank
        plan = _Plan(shapes, shapes.ctypes.data, outputs, arena.value)
        if len(self._plans) >= PLANS_KEPT:
            self._plans.pop(next(iter(self._plans)))
        self._plans[key] = plan
        return plan

    def _raise_entry_error(self, arrays: Sequence[np.ndarray]) -> None:
        """The InputError for inputs the generated check refused: the Python
        entry check's, which names the input, the axis and the symbol."""
        sizes = self._check.bind(arrays)
        for spec in self.outputs:
            _shape_at(spec, sizes)
        raise InputError(
            f"{sizes_text(sizes)}: these sizes make a shape or the arena too large "
            f"(past {SIZE_LIMIT} or int64)"
        )


@dataclass(frozen=True)
class _Plan:
    """What `ember_prepare` gave for one set of input shapes."""

    shapes: np.ndarray
    """Every input's and output's dims, as `ember_run` takes them."""
    shapes_address: int
    outputs: list[tuple[int, ...]]
    arena: int


PLANS_KEPT = 64
"""How many sets of input shapes a generic version keeps the plan of."""


def _address(array: np.ndarray) -> int:
    """The address of a contiguous array's data (through the buffer protocol,
    a fifth of the cost of `array.ctypes.data`, where the array is writable
    and not empty)."""
    try:
        return ctypes.addressof(ctypes.c_char.from_buffer(array))
    except (TypeError, ValueError, BufferError):
        return array.ctypes.data


def _shape_at(spec: SymbolicSpec, sizes: Mapping[str, int]) -> tuple[int, ...]:
    """The shape of an output for these sizes of the symbols."""
    shape = tuple(d.evaluate(sizes) if isinstance(d, SymExpr) else d for d in spec.dims)
    if any(d < 0 for d in shape):
        raise InputError(
            f"output {spec.describe()} would have shape {list(shape)} for {sizes_text(sizes)}"
        )
    return shape


def compile_generic(module: ModuleOp, report: CompileReport, options: Options) -> GenericModel:
    """The generic version of a model with symbolic dims (see `GenericModel`)."""
    from ember.reference import entry_function
    from ember.targets.cpu.jit_entry_check import add_entry_check
    from ember.targets.cpu.pipeline import jit_streamed

    func = entry_function(module)
    ranges = model_ranges(func)
    inputs, outputs = symbolic_specs(func)
    weights = lower_generic(module, ENTRY_NAME, report, options)
    arena = arena_formula(report)
    jit = jit_streamed(module, report, add_functions=lambda llvm_module: add_entry_check(
        llvm_module, ENTRY_NAME, [s.dims for s in inputs], [s.dims for s in outputs], ranges,
        arena))  # fmt: skip
    return GenericModel(EntryCheck(inputs, ranges), outputs, jit, weights, arena, report)


def lower_generic(module: ModuleOp, entry: str, report: CompileReport,
                  options: Options) -> np.ndarray:  # fmt: skip
    """Lowers a model with symbolic dims for every size to the loop level
    (`pipeline.lower_to_loops`), its entry named `entry` (`f(buffers, dims,
    weights, arena)`), and returns the weights; a model whose ops do not
    all lower with symbolic sizes yet is an InputDependentError that says
    how to pin or specialise them."""
    from ember.reference import entry_function
    from ember.targets.cpu.pipeline import lower_to_loops, make_entry

    func = entry_function(module)
    first = first_symbolic(func)  # for the error below: lowering changes the types
    assert first is not None, "a generic version of a model without symbolic dims"
    name, value_type = first
    make_entry(func, entry)
    try:
        return lower_to_loops(module, report, options)
    except CompileError as error:
        why = f"the generic version for every size is not there yet ({error})"
        raise dynamic_shape_error(func, name, value_type, why) from None


def arena_formula(report: CompileReport) -> Dim:
    """The arena the generic version needs, as a formula over the symbols."""
    return parse_dim(report.arena_formula) if report.arena_formula else report.arena_bytes


__all__ = ["GenericModel", "arena_formula", "compile_generic", "lower_generic"]
