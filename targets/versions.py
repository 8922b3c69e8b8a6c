"""Models with symbolic dims, compiled once per chosen size: the entry check
that reads the symbols' sizes off the input shapes, and the choice of version.

`ember.compile(model, specialize={"N": [1, 8]})` compiles one static version
per combination of the given sizes (`graph-bind-symbols` makes each) and
returns a `VersionedModel`. A call binds every symbol from the inputs' shapes
(`EntryCheck.bind`): each input dim that is a symbol gives or must agree with
its size, each other dim must equal what the sizes make of it, and each size
must lie in its symbol's range; a mismatch is an `InputError` naming the
input, the axis and the symbol. The version compiled for those sizes runs; a
size no version was compiled for runs the generic version, compiled at the
first such call (a full compile saved where the static versions cover every
call), or is an `InputError` that lists the versions where the model's ops
do not all lower with symbolic sizes yet.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.dialects.func import FuncOp
from xdsl.utils.exceptions import DiagnosticException

from ember.dialects.graph.dims import SYMBOLS_ATTR, dim_text, symbol_ranges, symbolic_shape
from ember.dialects.graph.symbolic import Dim, Range, SymExpr, in_range, range_text
from ember.dialects.graph.types import numpy_dtype
from ember.errors import EmberError
from ember.targets.calls import InputError, InputSpec, as_array, check_count, in_order

Model = Any
"""A target's compiled model (called with arrays, returns arrays)."""

Sizes = tuple[tuple[str, int], ...]
"""One binding of the symbols, sorted by name: the key of a version."""


@dataclass(frozen=True)
class SymbolicSpec:
    """An input or output of a model with symbolic dims."""

    name: str
    dims: tuple[Dim, ...]
    dtype: np.dtype[Any]

    def describe(self) -> str:
        return f"'{self.name}' {self.dtype}[{', '.join(dim_text(d) for d in self.dims)}]"


def symbolic_specs(func: FuncOp) -> tuple[list[SymbolicSpec], list[SymbolicSpec]]:
    """The entry function's inputs and outputs, symbols kept."""
    from ember.reference import input_names, output_names

    def specs(names: Sequence[str], types: Sequence[Any]) -> list[SymbolicSpec]:
        assert all(isinstance(t, TensorType) for t in types)
        return [SymbolicSpec(n, symbolic_shape(t), numpy_dtype(t.element_type))
                for n, t in zip(names, types)]  # fmt: skip

    function_type = func.function_type
    return (specs(input_names(func), function_type.inputs.data),
            specs(output_names(func), function_type.outputs.data))  # fmt: skip


class EntryCheck:
    """Binds a model's symbols from the shapes of its inputs (see the module
    docstring): `SymbolicSpec`s, or any `InputSpec` (a static one's dims are ints)."""

    def __init__(self, inputs: Sequence[InputSpec], ranges: Mapping[str, Range]):
        self.inputs = list(inputs)
        self.ranges = dict(ranges)
        # Per input, what each axis is: a symbol alone (bound or checked), a
        # static size, or an expression to evaluate once the symbols are bound.
        self._lone = [[(axis, d.lone_symbol()) for axis, d in enumerate(spec.dims)
                       if isinstance(d, SymExpr) and d.lone_symbol() is not None]
                      for spec in self.inputs]  # fmt: skip
        self._rest = [[(axis, d) for axis, d in enumerate(spec.dims)
                       if not (isinstance(d, SymExpr) and d.lone_symbol() is not None)]
                      for spec in self.inputs]  # fmt: skip

    def check_types(self, arrays: Sequence[np.ndarray]) -> None:
        """An InputError unless each input has its dtype and rank."""
        for spec, array in zip(self.inputs, arrays):
            if array.dtype != spec.dtype:
                raise InputError(f"input {spec.describe()}: got dtype {array.dtype}")
            if array.ndim != len(spec.dims):
                raise InputError(f"input {spec.describe()}: got shape {list(array.shape)}")

    def bind(self, arrays: Sequence[np.ndarray]) -> dict[str, int]:
        sizes: dict[str, int] = {}
        source: dict[str, str] = {}
        self.check_types(arrays)
        for spec, array, lone in zip(self.inputs, arrays, self._lone):
            for axis, name in lone:
                size = array.shape[axis]
                if name not in sizes:
                    sizes[name], source[name] = size, f"input '{spec.name}' axis {axis}"
                elif sizes[name] != size:
                    raise InputError(f"input '{spec.name}' axis {axis} is {size}, but {name} is "
                                     f"{sizes[name]} from {source[name]}")  # fmt: skip
        for name, size in sizes.items():
            bounds = self.ranges.get(name, (0, None))
            if not in_range(size, bounds):
                raise InputError(
                    f"{source[name]}: {name} = {size} is outside its range {range_text(bounds)}"
                )
        for spec, array, rest in zip(self.inputs, arrays, self._rest):
            for axis, dim in rest:
                size = array.shape[axis]
                expected = dim.substitute(sizes) if isinstance(dim, SymExpr) else dim
                if isinstance(expected, SymExpr):
                    unbound = ", ".join(sorted(expected.symbols() - set(sizes)))
                    raise InputError(f"input {spec.describe()}: no input dim gives {unbound}")
                if expected != size and expected >= 0:
                    raise InputError(
                        f"input {spec.describe()} axis {axis} is {size}, but "
                        f"{dim_text(dim)} = {expected} for {sizes_text(sizes)}"
                    )
        return sizes


def sizes_text(sizes: Mapping[str, int]) -> str:
    return ", ".join(f"{name}={size}" for name, size in sorted(sizes.items()))


class VersionedModel:
    """A model compiled for chosen sizes of its symbols: call it as a
    compiled model; the version for the inputs' sizes runs (see the module
    docstring). `versions` maps each binding to its compiled model; the
    generic version is `generic`, or made by `compile_generic` when first
    needed."""

    def __init__(self, check: EntryCheck, outputs: list[SymbolicSpec],
                 versions: dict[Sizes, Model], generic: Model | None = None,
                 compile_generic: Callable[[], Model] | None = None):  # fmt: skip
        self.inputs = check.inputs
        self.outputs = outputs
        self.versions = versions
        self._generic = generic
        self._compile_generic = compile_generic
        self._generic_error: EmberError | None = None
        self._lock = threading.Lock()
        self._check = check

    @property
    def generic(self) -> Model | None:
        """The version for every other size, compiled on first use (None where
        the model has ops whose lowering does not take symbolic sizes yet)."""
        self.compile_generic()
        return self._generic

    def compile_generic(self) -> None:
        """Compiles the generic version now, if it is not compiled yet (a
        model whose ops do not lower with symbolic sizes keeps the error for
        the first call that needs it)."""
        if self._compile_generic is not None:
            with self._lock:  # one compile, however many threads miss at once
                if self._compile_generic is not None:
                    try:
                        self._generic = self._compile_generic()
                    except EmberError as error:
                        self._generic_error = error
                    self._compile_generic = None

    def version_for(self, arrays: Sequence[np.ndarray]) -> Model:
        """The version compiled for these inputs' sizes, else the generic one
        (an InputError if there is none)."""
        check_count(self.inputs, arrays)
        sizes = self._check.bind([as_array(s, a) for s, a in zip(self.inputs, arrays)])
        key = tuple(sorted(sizes.items()))
        if key in self.versions:
            return self.versions[key]
        generic = self.generic
        if generic is not None:
            return generic
        compiled = "; ".join(sizes_text(dict(k)) for k in self.versions)
        raise InputError(
            f"no version of the model for {sizes_text(sizes)}: it was compiled for "
            f"{compiled} (compile with specialize= for more sizes)"
        ) from self._generic_error

    def __call__(self, *arrays: np.ndarray) -> list[np.ndarray]:
        return self.version_for(arrays)(*arrays)

    def run(self, feeds: Mapping[str, np.ndarray]) -> list[np.ndarray]:
        return self(*in_order(self.inputs, feeds))


def model_ranges(func: FuncOp) -> dict[str, Range]:
    """The ranges of the entry function's symbols."""
    return symbol_ranges(func.attributes.get(SYMBOLS_ATTR))  # type: ignore[arg-type]


Specialize = Mapping[str, Sequence[int]] | str
"""Sizes per symbol (`{"N": [1, 8]}`), or `"auto"` (`AUTO_DOC`) or `"none"`."""

AUTO_DOC = "one static version with every symbol at the low end of its range (a batch of one)"


def version_sizes(func: FuncOp, specialize: Specialize) -> list[dict[str, int]]:
    """Every combination of `specialize`'s sizes, checked: it names the
    model's symbols, each of them. `"auto"` is the low end of each symbol's
    range (1 at least), where a generic version's run-time sizes cost the
    most; `"none"` is no static version."""
    ranges = model_ranges(func)
    if specialize == "none":
        return []
    if specialize == "auto":
        return [{name: max(low, 1) for name, (low, _) in sorted(ranges.items())}] if ranges else []
    if isinstance(specialize, str):
        raise EmberError(
            f"specialize must be sizes per symbol, 'auto' or 'none', got {specialize!r}"
        )
    unknown = sorted(set(specialize) - set(ranges))
    if unknown:
        raise EmberError(
            f"specialize names unknown symbol(s) {', '.join(unknown)}; the model's symbols are "
            f"{', '.join(sorted(ranges)) or 'none'}"
        )
    missing = sorted(set(ranges) - set(specialize))
    if missing:
        raise EmberError(
            f"specialize gives no sizes for {', '.join(missing)}: each symbol needs its sizes "
            "(the CPU pipeline compiles static versions so far)"
        )
    names = sorted(specialize)
    return [dict(zip(names, (int(s) for s in combination)))
            for combination in itertools.product(*(specialize[n] for n in names))]  # fmt: skip


def specialized(module: ModuleOp, sizes: Mapping[str, int]) -> ModuleOp:
    """A copy of `module` with its symbols bound to these sizes (an
    EmberError where a size contradicts the model)."""
    from ember.passes.graph.bind_symbols import bind_symbols
    from ember.reference import entry_function

    version = module.clone()
    try:
        bind_symbols(entry_function(version), dict(sizes))
    except DiagnosticException as error:
        raise EmberError(f"specialize {sizes_text(sizes)}: {error}") from None
    return version


def compile_versions(module: ModuleOp, specialize: Specialize,
                     compile_one: Callable[[ModuleOp], Model]) -> VersionedModel:  # fmt: skip
    """One version per combination of `specialize`'s sizes, each compiled by
    `compile_one(module)`, and the generic version (`compile_one` of the
    symbolic module) as the fall-back where the model's ops lower with
    symbolic sizes, compiled at the first call no static version takes (now
    where there are none); every symbol of the model needs sizes."""
    from ember.reference import entry_function

    func = entry_function(module)
    inputs, outputs = symbolic_specs(func)
    versions: dict[Sizes, Model] = {}
    for sizes in version_sizes(func, specialize):
        versions[tuple(sorted(sizes.items()))] = compile_one(specialized(module, sizes))
    versioned = VersionedModel(EntryCheck(inputs, model_ranges(func)), outputs, versions,
                               compile_generic=lambda: compile_one(module.clone()))  # fmt: skip
    if not versions:  # the generic version alone: compiled now, as without specialize
        versioned.compile_generic()
    return versioned
