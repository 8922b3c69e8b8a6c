"""The kernels of the losses, the bit ops and the newer element-wise ops
against onnxruntime, one single-node model per case (at the opset where
onnxruntime has the op's current form)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from onnx import helper
from onnx.reference import ReferenceEvaluator

from tests.reference.test_kernels import (
    F32,
    assert_same,
    check,
    randn,
    rng_for,
    run_kernel,
    run_ort,
)

_SCORES = randn(rng_for("scores"), 4, 5, 3, scale=2.0)
_TARGETS = np.array([[0, 4, 2], [1, 1, 3], [4, 0, -1], [2, 3, 0]], np.int64)
_WEIGHTS = np.array([0.5, 1.0, 2.0, 0.25, 1.5], F32)

LOSS_CASES = [
    pytest.param(reduction, weights, ignore, id=f"{reduction}-{weights is not None}-{ignore}")
    for reduction in ("none", "sum", "mean")
    for weights in (None, _WEIGHTS)
    for ignore in (None, -1, 3)
]


def _loss_attrs(reduction: str, ignore: int | None) -> dict[str, Any]:
    return {"reduction": reduction, **({} if ignore is None else {"ignore_index": ignore})}


def _targets(ignore: int | None) -> np.ndarray:
    return _TARGETS if ignore == -1 else np.abs(_TARGETS)  # -1 only where it is ignored


@pytest.mark.parametrize(("reduction", "weights", "ignore"), LOSS_CASES)
def test_negative_log_likelihood_loss(
    reduction: str, weights: np.ndarray | None, ignore: int | None
) -> None:
    check("NegativeLogLikelihoodLoss", [_SCORES, _targets(ignore), weights],
          _loss_attrs(reduction, ignore))  # fmt: skip


@pytest.mark.parametrize(("reduction", "weights", "ignore"), LOSS_CASES)
def test_softmax_cross_entropy_loss(
    reduction: str, weights: np.ndarray | None, ignore: int | None
) -> None:
    """Both outputs: the loss and log_prob."""
    inputs = [_SCORES, _targets(ignore).astype(np.int32), weights]
    attrs = _loss_attrs(reduction, ignore)
    expected = run_ort("SoftmaxCrossEntropyLoss", inputs, attrs, n_outputs=2)
    assert_same(run_kernel("SoftmaxCrossEntropyLoss", inputs, attrs, 2), expected, 1e-5)
    alone = run_kernel("SoftmaxCrossEntropyLoss", inputs, attrs)
    assert_same(alone, expected[:1], 1e-5)


_INTEGER_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]


def _integers(dtype: Any, *shape: int, key: object = "") -> np.ndarray:
    info = np.iinfo(dtype)
    rng = rng_for("ints", dtype, shape, key)
    return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)


@pytest.mark.parametrize("dtype", _INTEGER_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", ["BitwiseAnd", "BitwiseOr", "BitwiseXor"])
def test_bitwise_binary(op: str, dtype: Any) -> None:
    check(op, [_integers(dtype, 3, 4), _integers(dtype, 4, key=1)])


@pytest.mark.parametrize("dtype", [np.int8, np.int64, np.uint16], ids=lambda d: np.dtype(d).name)
def test_bitwise_not(dtype: Any) -> None:
    check("BitwiseNot", [_integers(dtype, 3, 4)])


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.uint32, np.uint64],
                         ids=lambda d: np.dtype(d).name)  # fmt: skip
@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
def test_bit_shift(direction: str, dtype: Any) -> None:
    """Unsigned types (onnxruntime's); shifts within the width (the newer rule
    for the others is in tests/lowering/test_new_ops.py)."""
    width = 8 * np.dtype(dtype).itemsize
    amounts = rng_for("shift", dtype).integers(0, width, (3, 4)).astype(dtype)
    check("BitShift", [_integers(dtype, 3, 4), amounts], {"direction": direction})


def test_bit_shift_outside_the_width() -> None:
    """ONNX opset 28: a shift by a negative amount or the width or more fills
    with zeros, or the sign for a signed right shift."""
    x = np.array([-8, 4, -1, 64], np.int8)
    y = np.array([8, -1, 100, 1], np.int8)
    left = run_kernel("BitShift", [x, y], {"direction": "LEFT"})[0]
    right = run_kernel("BitShift", [x, y], {"direction": "RIGHT"})[0]
    np.testing.assert_array_equal(left, np.array([0, 0, 0, -128], np.int8))
    np.testing.assert_array_equal(right, np.array([-1, 0, -1, 32], np.int8))


_SPECIAL = np.array([-np.inf, -1.5, 0.0, np.nan, 2.0, np.inf], F32)


@pytest.mark.parametrize(("negative", "positive"), [(1, 1), (0, 1), (1, 0)])
def test_is_inf(negative: int, positive: int) -> None:
    check("IsInf", [_SPECIAL], {"detect_negative": negative, "detect_positive": positive})


@pytest.mark.parametrize(("op", "x", "attrs", "opset"), [
    ("Acosh", np.linspace(1.0, 9.0, 12, dtype=F32), {}, 21),
    ("Asinh", randn(rng_for("asinh"), 3, 4, scale=3.0), {}, 21),
    ("Atanh", np.linspace(-0.95, 0.95, 12, dtype=F32), {}, 21),
    ("Shrink", randn(rng_for("shrink"), 3, 4, scale=2.0), {"lambd": 0.7, "bias": 0.3}, 21),
    ("Shrink", np.arange(-5, 6, dtype=np.int32), {"lambd": 1.5, "bias": 1.0}, 21),
    ("Swish", randn(rng_for("swish"), 3, 4, scale=4.0), {"alpha": 0.7}, 24),
], ids=["acosh", "asinh", "atanh", "shrink", "shrink-int", "swish"])  # fmt: skip
def test_unary(op: str, x: np.ndarray, attrs: dict[str, Any], opset: int) -> None:
    check(op, [x], attrs, opset=opset)


@pytest.mark.parametrize(("x", "to"), [
    (randn(rng_for("bitcast"), 2, 3), np.int32),
    (np.array([1, -1, 2**40], np.int64), np.float64),
    (np.array([-1, 5, -128], np.int8), np.uint8),
    (np.array([True, False, True]), np.uint8),
], ids=["f32-i32", "i64-f64", "i8-u8", "bool-u8"])  # fmt: skip
def test_bit_cast(x: np.ndarray, to: Any) -> None:
    """Against ONNX's reference evaluator (onnxruntime lacks BitCast)."""
    attrs = {"to": helper.np_dtype_to_tensor_dtype(np.dtype(to))}
    assert_same(run_kernel("BitCast", [x], attrs), _reference("BitCast", [x], attrs, 26), 0)


_TIES = np.array([[3.0, 1.0, 3.0, 2.0, 1.0], [0.5, 0.5, 0.5, 0.5, 0.5], [-1.0, 4.0, 2.0, 4.0, 0.0]],
                 F32)  # fmt: skip


@pytest.mark.parametrize(("exclusive", "reverse"), [(0, 0), (1, 0), (0, 1), (1, 1)])
@pytest.mark.parametrize("op", ["CumSum", "CumProd"])
def test_cumulative(op: str, exclusive: int, reverse: int) -> None:
    x = randn(rng_for(op), 3, 4, 2).astype(np.float64)
    attrs = {"exclusive": exclusive, "reverse": reverse}
    for axis in (np.array(1, np.int32), np.array([-1], np.int64)):
        check(op, [x, axis], attrs, tol=1e-12, opset=26)
    check(op, [np.arange(1, 13, dtype=np.int32).reshape(3, 4), np.array(0, np.int32)], attrs,
          opset=26)  # fmt: skip


@pytest.mark.parametrize(("largest", "axis", "k"), [(1, -1, 3), (0, -1, 2), (1, 0, 2), (0, 0, 3)])
def test_top_k(largest: int, axis: int, k: int) -> None:
    """Equal values come in index order."""
    attrs = {"largest": largest, "axis": axis}
    check("TopK", [_TIES, np.array([k], np.int64)], attrs, n_outputs=2)
    check("TopK", [(_TIES * 2).astype(np.int64), np.array([k], np.int64)], attrs, n_outputs=2)


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_hardmax(axis: int) -> None:
    check("Hardmax", [_TIES], {"axis": axis})


@pytest.mark.parametrize(("indices", "axis"), [
    (np.array([[0, 3, -1], [5, -6, 2]], np.int64), -1),
    (np.array([[0, 3, -1], [5, -6, 2]], np.int64), 0),
    (np.array([1.7, -2.2, 4.0], F32), 1),
], ids=["last-axis", "first-axis", "float-indices"])  # fmt: skip
def test_one_hot(indices: np.ndarray, axis: int) -> None:
    """A negative index counts from depth; one outside [-depth, depth) is all off."""
    depth = np.array(5, indices.dtype)  # onnxruntime's kernels take depth of the indices' type
    check("OneHot", [indices, depth, np.array([-1.0, 2.5], F32)], {"axis": axis})


@pytest.mark.parametrize(("axes", "keepdims"), [(None, 1), ([1], 0), ([0, 2], 1)])
def test_reduce_log_sum(axes: list[int] | None, keepdims: int) -> None:
    x = rng_for("log-sum").uniform(0.1, 3.0, (3, 4, 5)).astype(F32)
    check("ReduceLogSum", [x, None if axes is None else np.array(axes, np.int64)],
          {"keepdims": keepdims})  # fmt: skip


@pytest.mark.parametrize("mode", ["DCR", "CRD"])
def test_space_to_depth(mode: str) -> None:
    """DCR against onnxruntime; CRD (opset 28, which onnxruntime's SpaceToDepth
    lacks) as the inverse of DepthToSpace's kernel (itself checked against it)."""
    attrs = {"blocksize": 2, **({"mode": mode} if mode == "CRD" else {})}
    x = randn(rng_for("s2d"), 2, 3, 4, 6)
    if mode == "DCR":
        check("SpaceToDepth", [x], attrs)
    else:
        (back,) = run_kernel("DepthToSpace", run_kernel("SpaceToDepth", [x], attrs), attrs)
        np.testing.assert_array_equal(back, x)


@pytest.mark.parametrize(("k", "dtype"), [(0, None), (1, 11), (-2, 6)])
def test_eye_like(k: int, dtype: int | None) -> None:
    attrs = {"k": k, **({} if dtype is None else {"dtype": dtype})}
    check("EyeLike", [randn(rng_for("eye"), 4, 5)], attrs)


@pytest.mark.parametrize(("batch_axis", "time_axis"), [(1, 0), (0, 1)])
def test_reverse_sequence(batch_axis: int, time_axis: int) -> None:
    x = randn(rng_for("rev"), 4, 4, 2)
    lens = np.array([4, 1, 3, 2], np.int64)
    check("ReverseSequence", [x, lens], {"batch_axis": batch_axis, "time_axis": time_axis})


@pytest.mark.parametrize(("p", "axis"), [(1, -1), (2, 0), (2, 1)])
def test_lp_normalization(p: int, axis: int) -> None:
    x = randn(rng_for("lpnorm"), 3, 4, 2)
    x[0, :, 0] = 0.0  # a zero norm along axis 1
    check("LpNormalization", [x], {"p": p, "axis": axis}, opset=22)


@pytest.mark.parametrize("attrs", [
    {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]},
    {"kernel_shape": [2, 2], "p": 3, "auto_pad": "SAME_UPPER"},
    {"kernel_shape": [3], "p": 1, "strides": [2]},
], ids=["2d-pads", "same-upper-p3", "1d-p1"])  # fmt: skip
def test_lp_pool(attrs: dict[str, Any]) -> None:
    rank = len(attrs["kernel_shape"])
    x = randn(rng_for("lppool", rank), 1, 2, *[7] * rank)
    check("LpPool", [x], attrs, tol=1e-4)


@pytest.mark.parametrize(("equation", "shapes"), [
    ("bij,bjk->bik", [(5, 2, 3), (5, 3, 4)]),
    ("...ii->...i", [(3, 5, 5)]),
    ("ij,j", [(3, 4), (4,)]),
    ("i,i", [(5,), (5,)]),
    ("ij->ji", [(3, 4)]),
    ("...k,jk->...j", [(2, 1, 3), (4, 3)]),
], ids=["batch-matmul", "batch-diagonal", "implicit", "inner", "transpose", "ellipsis"])  # fmt: skip
def test_einsum(equation: str, shapes: list[tuple[int, ...]]) -> None:
    inputs = [randn(rng_for("einsum", equation, i), *s) for i, s in enumerate(shapes)]
    check("Einsum", inputs, {"equation": equation})


@pytest.mark.parametrize(("equation", "ranks", "terms", "output"), [
    ("...ii ->...i", [3], ["Aii"], "Ai"),
    ("ij,jk", [2, 2], ["ij", "jk"], "ik"),
    ("...j,j...->...", [3, 2], ["ABj", "jB"], "AB"),
], ids=["spaces", "implicit", "ellipsis-ranks"])  # fmt: skip
def test_einsum_terms(equation: str, ranks: list[int], terms: list[str], output: str) -> None:
    """Ellipses become fresh capital letters, right-aligned across operands."""
    from ember.dialects.graph.ops_nn import einsum_terms

    assert einsum_terms(equation, ranks) == (terms, output)


def _reference(op_type: str, inputs: list[np.ndarray], attrs: dict[str, Any], opset: int) -> list:
    """ONNX's reference evaluator on one node (for ops onnxruntime lacks)."""
    names = [f"in{i}" for i in range(len(inputs))]
    node = helper.make_node(op_type, names, ["out"], **attrs)
    graph = helper.make_graph(
        [node], op_type,
        [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(x.dtype), x.shape)
         for n, x in zip(names, inputs)],
        [helper.make_empty_tensor_value_info("out")],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    return ReferenceEvaluator(model).run(None, dict(zip(names, inputs)))


@pytest.mark.parametrize(("shape", "target", "axes"), [
    ((20, 8, 3), [10, 11, 3], None),
    ((7, 4), [4, 9], None),
    ((3, 20, 8), [10, 9], [-2, -1]),
], ids=["crop-and-pad", "odd", "axes"])  # fmt: skip
def test_center_crop_pad(shape: tuple[int, ...], target: list[int], axes: list[int] | None) -> None:
    x = randn(rng_for("crop", shape), *shape)
    inputs = [x, np.array(target, np.int64)]
    attrs = {} if axes is None else {"axes": axes}
    assert_same(run_kernel("CenterCropPad", inputs, attrs),
                _reference("CenterCropPad", inputs, attrs, 18), 0)  # fmt: skip


@pytest.mark.parametrize(("shape", "groups"), [((3, 4, 2, 2), 2), ((2, 6, 5), 3), ((2, 4, 3), 4)])
def test_group_normalization(shape: tuple[int, ...], groups: int) -> None:
    rng = rng_for("group-norm", shape)
    inputs = [randn(rng, *shape), randn(rng, shape[1]), randn(rng, shape[1])]
    attrs = {"num_groups": groups, "epsilon": 1e-3}
    expected = _reference("GroupNormalization", inputs, attrs, 21)
    assert_same(run_kernel("GroupNormalization", inputs, attrs), expected, 1e-5)


@pytest.mark.parametrize("axes", [None, [1, 2]])
def test_mean_variance_normalization(axes: list[int] | None) -> None:
    x = randn(rng_for("mvn"), 3, 4, 5, 2)
    check("MeanVarianceNormalization", [x], {} if axes is None else {"axes": axes}, tol=1e-4)


@pytest.mark.parametrize("shape", [(2, 2), (3, 3, 3), (2, 4, 4)])
def test_det(shape: tuple[int, ...]) -> None:
    check("Det", [randn(rng_for("det", shape), *shape)], tol=1e-4)


def test_max_unpool() -> None:
    """Indices as MaxPool gives them (flat, into the default 4 x 4 shape)."""
    x = randn(rng_for("unpool"), 1, 2, 2, 2)
    indices = np.array([[[[0, 3], [9, 14]], [[17, 22], [24, 31]]]], np.int64)
    check("MaxUnpool", [x, indices], {"kernel_shape": [2, 2], "strides": [2, 2]})


def test_max_unpool_to_a_larger_output_shape() -> None:
    """ONNX's rule (its reference evaluator and the conformance data, not
    onnxruntime's): the indices address the default shape, which is then
    zero-padded at the end of each axis up to output_shape."""
    x = randn(rng_for("unpool-shape"), 1, 2, 2, 2)
    indices = np.array([[[[0, 3], [9, 14]], [[17, 22], [24, 31]]]], np.int64)
    inputs = [x, indices, np.array([1, 2, 5, 6], np.int64)]
    attrs = {"kernel_shape": [2, 2], "strides": [2, 2]}
    assert_same(run_kernel("MaxUnpool", inputs, attrs), _reference("MaxUnpool", inputs, attrs, 22),
                0)  # fmt: skip
