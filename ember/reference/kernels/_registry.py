"""The kernel registry shared by the kernel family modules."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

Inputs = Sequence[np.ndarray | None]
Attrs = Mapping[str, Any]
Kernel = Callable[[Inputs, Attrs], list[np.ndarray]]

KERNELS: dict[str, Kernel] = {}


def register(*op_types: str) -> Callable[[Kernel], Kernel]:
    """Decorator registering one kernel under one or more ONNX op_types."""

    def deco(fn: Kernel) -> Kernel:
        register_all(op_types, fn)
        return fn

    return deco


def register_all(op_types: Iterable[str], fn: Kernel) -> None:
    """Register ``fn`` for every op_type in ``op_types`` (table-driven families)."""
    for op in op_types:
        if op in KERNELS:
            raise KeyError(f"kernel for {op!r} registered twice")
        KERNELS[op] = fn


def arg(inputs: Inputs, i: int) -> np.ndarray | None:
    """Input ``i``, or None when it is missing (None or beyond the end of ``inputs``)."""
    return inputs[i] if i < len(inputs) else None


def ints(value: np.ndarray | Sequence[int] | None) -> list[int] | None:
    """A 1-D int tensor or int list as a list of Python ints (None stays None)."""
    return None if value is None else [int(v) for v in np.asarray(value).reshape(-1)]


def norm_axis(axis: int, rank: int) -> int:
    """Map a possibly negative axis into [0, rank), raising when out of range."""
    if not -rank <= axis < max(rank, 1):
        raise ValueError(f"axis {axis} out of range for rank {rank}")
    return axis % rank if rank else 0


def is_floating(dtype: np.dtype[Any]) -> bool:
    """A floating-point dtype: NumPy's, or an ml_dtypes one (bfloat16, float8,
    float4: NumPy's kind "V")."""
    from ember.dialects.graph.types import is_narrow_float_dtype

    return dtype.kind == "f" or is_narrow_float_dtype(dtype)


def wide(x: np.ndarray) -> np.ndarray:
    """``x`` in float64 when it is floating point (for accurate intermediates), else as is."""
    return x.astype(np.float64) if is_floating(x.dtype) else x
