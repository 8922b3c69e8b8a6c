"""The calling contract of a compiled model, whatever its target.

A compiled model is called as `model(x, y)` (inputs in the model's order)
or `model.run({"x": x})` (by name) and returns its outputs as a list of
NumPy arrays in the model's order. What a call checks (count, dtype, shape)
and how inputs and outputs are described lives here, below every target:
`TensorSpec` (a static input or output), `InputSpec` (what the checks read,
static or symbolic), `CheckedCalls` (the two ways to call, for a model whose
`_execute` takes checked, contiguous arrays) and `InputError` (a call's
mistake). `model_specs` and `has_symbols` read them off the entry function.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.dialects.func import FuncOp

from ember.dialects.graph.dims import symbolic_shape
from ember.dialects.graph.symbolic import Dim, symbols_of
from ember.dialects.graph.types import DYNAMIC, UnsupportedTypeError, numpy_dtype
from ember.errors import CompileError, EmberError, InputDependentError
from ember.passes.graph.unroll_control_flow import remaining_control_flow


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
            control_flow = remaining_control_flow(func)
            if control_flow is not None:  # the likelier cause, and the one to name
                raise CompileError(
                    f"{control_flow}: the CPU pipeline does not run control flow yet"
                )
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
    (`TensorSpec`) or a generic version's (`ember.targets.versions.SymbolicSpec`):
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


class CheckedCalls:
    """`model(x, y)` and `model.run({"x": x})` for a compiled model whose
    `_execute` takes its inputs checked (count, dtype, shape) and
    contiguous, in the model's order."""

    inputs: list[TensorSpec]

    def __call__(self, *arrays: np.ndarray) -> list[np.ndarray]:
        """The outputs for these inputs, given in the model's input order."""
        check_count(self.inputs, arrays)
        return self._execute([self._checked(spec, a) for spec, a in zip(self.inputs, arrays)])

    def run(self, feeds: Mapping[str, np.ndarray]) -> list[np.ndarray]:
        """The outputs for these inputs, given by name."""
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


__all__ = [
    "CheckedCalls",
    "InputError",
    "InputSpec",
    "TensorSpec",
    "as_array",
    "check_count",
    "dynamic_shape_error",
    "first_symbolic",
    "has_symbols",
    "in_order",
    "model_specs",
]
