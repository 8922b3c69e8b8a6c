"""loop-pack-weights puts each weight's bytes in the blob: the bytes a
`dense` attribute holds are copied as they are (floats of every width,
integers), a splat is expanded, a bool is one byte 0 or 1, and a weight
the module repeats is stored once."""

from __future__ import annotations

from io import StringIO

import numpy as np
import pytest
from xdsl.dialects import memref
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.ir import Attribute
from xdsl.printer import Printer

from ember.context import make_context
from ember.dialects.graph.types import dense_from_array
from ember.passes.loop.pack_weights import PackWeightsPass, weights_blob
from tests.lowering.test_loop_to_llvm import parse

WEIGHTS = {
    "f16": np.array([1.5, -2.25, 65504.0], dtype=np.float16),
    "f32": np.array([[1.0, -2.5], [3.25, 1e-30]], dtype=np.float32),
    "f64": np.array([np.pi, -0.0], dtype=np.float64),
    "i8": np.array([-128, 0, 127], dtype=np.int8),
    "i32": np.arange(-5, 15, dtype=np.int32),
    "i64": np.array([2**40, -(2**40)], dtype=np.int64),
    "i1": np.array([True, False, True, True], dtype=np.bool_),
}


def _module(arrays: list[np.ndarray], splats: list[tuple[str, str, int]]) -> str:
    lines = []
    for index, array in enumerate(arrays):
        attr = dense_from_array(array)
        shape = "x".join(map(str, array.shape))
        element = str(attr.get_type().get_element_type())
        lines.append(f"  %w{index} = loop.weight {_text(attr)} -> memref<{shape}x{element}>")
    for index, (value, element, count) in enumerate(splats):
        lines.append(f"  %s{index} = loop.weight dense<{value}> : tensor<{count}x{element}>"
                     f" -> memref<{count}x{element}>")  # fmt: skip
    return "func.func @main() {\n" + "\n".join(lines) + "\n  func.return\n}\n"


def _text(attr: Attribute) -> str:
    out = StringIO()
    Printer(stream=out).print_attribute(attr)
    return out.getvalue()


def _placed(module: ModuleOp) -> dict[str, int]:
    """Weight name -> its byte offset in the blob."""
    offsets = {}
    for op in module.walk():
        if isinstance(op, memref.ViewOp):
            offset = op.byte_shift.owner.value  # type: ignore[attr-defined]
            assert isinstance(offset, IntegerAttr)
            offsets[op.result.name_hint] = offset.value.data
    return offsets


@pytest.mark.parametrize("repeat", [False, True])
def test_blob_holds_each_weights_bytes(repeat: bool) -> None:
    arrays = list(WEIGHTS.values()) * (2 if repeat else 1)
    module = parse(_module(arrays, [("5.0", "f32", 7), ("-3", "i16", 3), ("true", "i1", 5)]))
    PackWeightsPass().apply(make_context(), module)
    blob, offsets = weights_blob(module), _placed(module)
    expected = {f"w{i}": a for i, a in enumerate(arrays)}
    expected |= {"s0": np.full(7, 5.0, np.float32), "s1": np.full(3, -3, np.int16),
                 "s2": np.ones(5, np.bool_)}  # fmt: skip
    for name, array in expected.items():
        data = array.astype(np.uint8) if array.dtype == np.bool_ else array
        data = data.astype(data.dtype.newbyteorder("<"))
        assert blob[offsets[name] :][: data.nbytes].tobytes() == data.tobytes(), name
    if repeat:  # a repeated weight shares its place
        assert all(offsets[f"w{i}"] == offsets[f"w{i + len(WEIGHTS)}"] for i in range(len(WEIGHTS)))
