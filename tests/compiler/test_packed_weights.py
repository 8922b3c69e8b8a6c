"""Constant weights packed at compile time (`passes/loop/packed_weights.py`):
the tile-by-tile layout itself, and compiled models whose default schedules
pack their constant panels (one block a tile, a cache-blocking tile, rows 4
KiB apart, a weight that another product reads unpacked) against NumPy in
float64, on one thread and two."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import ember
from ember.passes.loop.packed_weights import tile_layout

RNG = np.random.default_rng(7)


def test_tile_layout_puts_tile_numbers_first_and_pads_with_zeros() -> None:
    array = RNG.standard_normal((5, 7)).astype(np.float32)
    packed = tile_layout(array, [0, 3])  # columns tiled by 3: tiles 0-2, the last one short
    assert packed.shape == (3, 5, 3)
    for tile in range(3):
        for row in range(5):
            for point in range(3):
                column = tile * 3 + point
                expected = array[row, column] if column < 7 else 0.0
                assert packed[tile, row, point] == expected
    assert packed.flags.c_contiguous


def test_tile_layout_with_every_axis_tiled_or_whole() -> None:
    array = RNG.standard_normal((4, 6, 10)).astype(np.float32)
    packed = tile_layout(array, [2, 6, 4])  # a tile of 6 is the whole axis: untiled
    assert packed.shape == (2, 3, 2, 6, 4)
    tiled = np.pad(array, [(0, 0), (0, 0), (0, 2)]).reshape(2, 2, 6, 3, 4)
    np.testing.assert_array_equal(packed, tiled.transpose(0, 3, 1, 2, 4))


def _matmuls(m: int, k: int, n: int, shared: bool = False) -> tuple[onnx.ModelProto, dict]:
    """y = x @ w (w constant, k x n); with `shared`, also z = w @ v, where w
    is the row operand: that product reads the original weight."""
    w = (RNG.standard_normal((k, n)) / np.sqrt(k)).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"])]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [m, k])]
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, n])]
    values = {"x": RNG.standard_normal((m, k)).astype(np.float32), "w": w}
    if shared:
        nodes.append(helper.make_node("MatMul", ["w", "v"], ["z"]))
        inputs.append(helper.make_tensor_value_info("v", TensorProto.FLOAT, [n, 16]))
        outputs.append(helper.make_tensor_value_info("z", TensorProto.FLOAT, [k, 16]))
        values["v"] = RNG.standard_normal((n, 16)).astype(np.float32)
    graph = helper.make_graph(nodes, "packed", inputs, outputs, [numpy_helper.from_array(w, "w")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), values


def _check(outputs: list[np.ndarray], values: dict, shared: bool) -> None:
    """Each output within K terms of |a| |b| at f32's epsilon of the exact product."""
    x, w = values["x"].astype(np.float64), values["w"].astype(np.float64)
    products = [(x, w)]
    if shared:
        products.append((w, values["v"].astype(np.float64)))
    assert len(outputs) == len(products)
    for got, (a, b) in zip(outputs, products):
        bound = a.shape[1] * np.finfo(np.float32).eps * (np.abs(a) @ np.abs(b))
        assert np.all(np.abs(got - a @ b) <= bound)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(
    ("m", "k", "n", "shared"),
    [
        (64, 256, 128, False),  # fits L2: one block a tile
        (128, 1024, 768, False),  # outgrows half of L2: a cache-blocking tile
        (4, 512, 1024, False),  # rows 4 KiB apart, read by one row block
        (37, 300, 200, False),  # partial blocks and a partial last tile
        (8, 300, 1000, False),  # n not whole vectors: left as it is
        (48, 256, 512, True),  # the weight also read unpacked by a second product
    ],
)
def test_packed_constant_weights_match_numpy(m: int, k: int, n: int, shared: bool,
                                             threads: int) -> None:  # fmt: skip
    model, values = _matmuls(m, k, n, shared)
    compiled = ember.compile(model, threads=threads)
    arguments = [values["x"], *([values["v"]] if shared else [])]
    _check(compiled(*arguments), values, shared)
