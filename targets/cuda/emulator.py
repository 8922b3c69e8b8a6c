"""Run a `gpu`-level module on the CPU: `emulate(module).host_function(arrays...)`.

`emulate` lowers a copy of the module with `convert-gpu-to-loop` (each
kernel a function looping over every block and thread, cut at its barriers;
each launch a call of it) and `convert-loop-to-llvm`, and JIT-compiles it
for the host (`ember.targets.cpu`). Each host `func.func` of the module
(one without results) becomes a `HostFunction`: called with one NumPy array
per memref argument (C-contiguous, of the element type's dtype and the
type's static sizes; `?` sizes are taken from the array) and one Python
number per scalar argument, it runs in place, writing the arrays.

The emulation runs what the IR says, with the execution order of the
lowering (threads one after another within each barrier-free phase), so a
missing barrier or a wrong thread index shows as a wrong result; it is a
test harness, not a fast path.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    Float16Type,
    IndexType,
    MemRefType,
    ModuleOp,
    NoneAttr,
)
from xdsl.ir import Attribute

from ember.dialects.graph.types import UnsupportedTypeError
from ember.dialects.graph.types import numpy_dtype as graph_numpy_dtype
from ember.errors import EmberError
from ember.lowering.gpu_to_loop import ConvertGpuToLoopPass
from ember.lowering.loop_to_llvm import ConvertLoopToLLVMPass


class EmulationError(EmberError):
    """A host function called with arguments that do not fit its signature,
    or a module the emulator cannot run."""


_C_SCALARS: dict[Any, Any] = {
    np.bool_: ctypes.c_bool, np.int8: ctypes.c_int8, np.int16: ctypes.c_int16,
    np.int32: ctypes.c_int32, np.int64: ctypes.c_int64, np.uint8: ctypes.c_uint8,
    np.uint16: ctypes.c_uint16, np.uint32: ctypes.c_uint32, np.uint64: ctypes.c_uint64,
    np.float32: ctypes.c_float, np.float64: ctypes.c_double,
}  # fmt: skip


def numpy_dtype(element: Attribute) -> np.dtype:
    """The NumPy dtype of a value of type `element` (`index` is int64; the
    others as the graph level maps them)."""
    if isinstance(element, IndexType):
        return np.dtype(np.int64)
    try:
        return graph_numpy_dtype(element)
    except UnsupportedTypeError:
        raise EmulationError(f"emulator: no NumPy dtype for {element}") from None


@dataclass(frozen=True)
class HostFunction:
    """A host function of an emulated module, called with NumPy arrays and numbers."""

    name: str
    inputs: tuple[Attribute, ...]
    native: Any

    def __call__(self, *arguments: Any) -> None:
        if len(arguments) != len(self.inputs):
            raise EmulationError(
                f"@{self.name} takes {len(self.inputs)} arguments, got {len(arguments)}"
            )
        native: list[Any] = []
        for position, (value, t) in enumerate(zip(arguments, self.inputs, strict=True)):
            native += self._convert(position, value, t)
        self.native(*native)

    def _convert(self, position: int, value: Any, t: Attribute) -> list[Any]:
        where = f"@{self.name} argument {position}"
        if not isinstance(t, MemRefType):
            return [_C_SCALARS[numpy_dtype(t).type](value)]
        if not isinstance(value, np.ndarray):
            raise EmulationError(f"{where}: expected a NumPy array for {t}")
        expected = numpy_dtype(t.element_type)
        shape = t.get_shape()
        fits = len(shape) == value.ndim and all(
            s in (DYNAMIC_INDEX, n) for s, n in zip(shape, value.shape, strict=True)
        )
        if value.dtype != expected or not fits or not value.flags.c_contiguous:
            raise EmulationError(
                f"{where}: expected a C-contiguous {expected} array of shape "
                f"{['?' if s == DYNAMIC_INDEX else s for s in shape]} for {t}, got a "
                f"{value.dtype} array of shape {list(value.shape)}"
            )
        sizes = [n for s, n in zip(shape, value.shape, strict=True) if s == DYNAMIC_INDEX]
        return [ctypes.c_void_p(value.ctypes.data), *(ctypes.c_int64(n) for n in sizes)]


def _argument_types(t: Attribute, name: str) -> list[Any]:
    """The ctypes parameters one argument of type `t` becomes (the CPU ABI)."""
    if isinstance(t, MemRefType):
        if not isinstance(t.layout, NoneAttr):
            raise EmulationError(f"emulator: @{name}: only identity layouts, got {t}")
        dynamic = sum(1 for s in t.get_shape() if s == DYNAMIC_INDEX)
        return [ctypes.c_void_p, *[ctypes.c_int64] * dynamic]
    if isinstance(t, Float16Type):
        raise EmulationError(f"emulator: @{name}: an f16 scalar argument is not supported")
    return [_C_SCALARS[numpy_dtype(t).type]]


class EmulatedProgram:
    """The host functions of an emulated module, by name (`program.main(...)`
    or `program["main"](...)`); `library` is the compiled code they call."""

    def __init__(self, functions: dict[str, HostFunction], library: Any):
        self.functions = functions
        self.library = library

    def __getitem__(self, name: str) -> HostFunction:
        if name not in self.functions:
            known = ", ".join(sorted(self.functions)) or "none"
            raise EmulationError(f"emulator: no host function @{name} (there are: {known})")
        return self.functions[name]

    def __getattr__(self, name: str) -> HostFunction:
        if name.startswith("__"):
            raise AttributeError(name)
        return self[name]


def host_functions(module: ModuleOp) -> list[func.FuncOp]:
    """The module's host functions: its top-level `func.func`s."""
    return [op for op in module.ops if isinstance(op, func.FuncOp) and not op.is_declaration]


Jit = Callable[[ModuleOp], Any]
"""Compiles an `llvm`-dialect module into this process: the host target's
`Target.jit`, whose result gives ctypes functions by
`function(name, restype, argtypes)` and keeps their code alive."""


def emulate(module: ModuleOp, jit: Jit) -> EmulatedProgram:
    """JIT-compile a `gpu`-level module (left unchanged) for this CPU with
    `jit`, its kernels emulated; see the module docstring for how to call it."""
    module = module.clone()
    signatures: dict[str, Sequence[Attribute]] = {}
    for function in host_functions(module):
        name = function.sym_name.data
        if function.function_type.outputs.data:
            raise EmulationError(f"emulator: @{name} returns values; host functions return none")
        signatures[name] = function.function_type.inputs.data
    ctx = Context()
    ConvertGpuToLoopPass().apply(ctx, module)
    ConvertLoopToLLVMPass().apply(ctx, module)
    library = jit(module)
    functions = {
        name: HostFunction(
            name,
            tuple(inputs),
            library.function(name, None, [a for t in inputs for a in _argument_types(t, name)]),
        )
        for name, inputs in signatures.items()
    }
    return EmulatedProgram(functions, library)


__all__ = ["EmulatedProgram", "EmulationError", "HostFunction", "emulate", "numpy_dtype"]
