"""The narrow types end to end (docs/types.md): ONNX initializers (packed
int4/float4 storage included) and inputs, the CPU's results as ml_dtypes
arrays equal to the reference interpreter's, elementwise ops computed in
f32, quantisation with int4 and blocked scales, and the C header's types."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import ember
from ember.deploy import compile_to_directory
from ember.frontends.onnx import import_onnx
from ember.reference import run as run_reference

RNG = np.random.default_rng(0)


def _model(nodes: list, inputs: list, outputs: list, initializers: list = ()) -> object:  # type: ignore[assignment]
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])


def _check_against_reference(model: object, *inputs: np.ndarray) -> list[np.ndarray]:
    got = ember.compile(model)(*inputs)
    want = run_reference(import_onnx(model), list(inputs))
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(
            g.view(f"u{g.dtype.itemsize}"), w.view(f"u{w.dtype.itemsize}")
        )
    return got


def test_packed_int4_and_float4_initializers_import_unpacked() -> None:
    # ONNX packs two int4/uint4/float4 values per byte; Ember holds one per byte.
    int4 = np.array([-8, -1, 0, 3, 7], ml_dtypes.int4)  # an odd count: half a byte of padding
    fp4 = np.array([-6, -0.5, 0, 1.5, 4], ml_dtypes.float4_e2m1fn)
    model = _model(
        [helper.make_node("Cast", ["w"], ["a"], to=TensorProto.INT8),
         helper.make_node("Cast", ["v"], ["b"], to=TensorProto.FLOAT)],
        [],
        [helper.make_tensor_value_info("a", TensorProto.INT8, [5]),
         helper.make_tensor_value_info("b", TensorProto.FLOAT, [5])],
        [numpy_helper.from_array(int4, "w"), numpy_helper.from_array(fp4, "v")],
    )  # fmt: skip
    a, b = _check_against_reference(model)
    np.testing.assert_array_equal(a, [-8, -1, 0, 3, 7])
    np.testing.assert_array_equal(b, [-6, -0.5, 0, 1.5, 4])


@pytest.mark.parametrize(
    "dtype", [ml_dtypes.bfloat16, ml_dtypes.float4_e2m1fn],
    ids=lambda d: np.dtype(d).name,
)  # fmt: skip
def test_elementwise_ops_compute_in_f32_and_round_once(dtype: type) -> None:
    onnx_type = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    info = [helper.make_tensor_value_info(n, onnx_type, [3, 8]) for n in ("x", "y")]
    model = _model(
        [helper.make_node("Mul", ["x", "y"], ["p"]), helper.make_node("Relu", ["p"], ["r"]),
         helper.make_node("Less", ["x", "y"], ["c"]), helper.make_node("Where", ["c", "x", "r"], ["w"])],
        info,
        [helper.make_tensor_value_info("r", onnx_type, [3, 8]),
         helper.make_tensor_value_info("w", onnx_type, [3, 8])],
    )  # fmt: skip
    x, y = (RNG.uniform(-3, 3, (3, 8)).astype(np.float32).astype(dtype) for _ in range(2))
    product, chosen = _check_against_reference(model, x, y)
    assert product.dtype == np.dtype(dtype)
    want = np.maximum(x.astype(np.float32) * y.astype(np.float32), 0).astype(dtype)
    np.testing.assert_array_equal(product.view(np.uint8 if product.itemsize == 1 else np.uint16),
                                  want.view(np.uint8 if want.itemsize == 1 else np.uint16))  # fmt: skip
    np.testing.assert_array_equal(chosen.astype(np.float32),
                                  np.where(x < y, x, want).astype(np.float32))  # fmt: skip


def test_narrow_inputs_are_checked_by_dtype() -> None:
    model = _model(
        [helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT)],
        [helper.make_tensor_value_info("x", TensorProto.BFLOAT16, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])],
    )
    compiled = ember.compile(model)
    assert compiled.inputs[0].dtype == np.dtype(ml_dtypes.bfloat16)
    with pytest.raises(ember.EmberError, match="got dtype float32"):
        compiled(np.zeros(4, np.float32))


def test_blocked_int4_quantisation_round_trips_within_half_a_step() -> None:
    # Blocks of 4 along axis 1 of a 3x10 tensor: 3 blocks, the last of 2.
    x = RNG.standard_normal((3, 10)).astype(np.float32)
    blocks = np.stack([np.abs(x[:, i:i + 4]).max(axis=1) for i in range(0, 10, 4)], axis=1)  # fmt: skip
    scale = (blocks / 7).astype(np.float32)
    zero = np.zeros_like(scale).astype(ml_dtypes.int4)
    attrs = {"axis": 1, "block_size": 4}
    model = _model(
        [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], **attrs),
         helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], **attrs)],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 10])],
        [helper.make_tensor_value_info("q", TensorProto.INT4, [3, 10]),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 10])],
        [numpy_helper.from_array(scale, "s"), numpy_helper.from_array(zero, "z")],
    )  # fmt: skip
    quantized, restored = _check_against_reference(model, x)
    per_element = np.repeat(scale, 4, axis=1)[:, :10]
    assert np.all(np.abs(restored - x) <= per_element / 2 + 1e-6)
    assert quantized.astype(np.int8).min() >= -8


def test_bfloat16_matmul_sums_in_float32() -> None:
    # Small integers: every product and partial sum is exact in f32, so the
    # result is the exact product rounded once to bf16 (257 -> 256, 258 -> 258).
    a = RNG.integers(-8, 9, (4, 16)).astype(np.float32)
    b = RNG.integers(-8, 9, (16, 3)).astype(np.float32)
    info = [helper.make_tensor_value_info(n, TensorProto.BFLOAT16, s) for n, s in
            (("a", [4, 16]), ("b", [16, 3]))]  # fmt: skip
    model = _model([helper.make_node("MatMul", ["a", "b"], ["c"])], info,
                   [helper.make_tensor_value_info("c", TensorProto.BFLOAT16, [4, 3])])  # fmt: skip
    (got,) = ember.compile(model)(a.astype(ml_dtypes.bfloat16), b.astype(ml_dtypes.bfloat16))
    np.testing.assert_array_equal(
        got.view(np.uint16), (a @ b).astype(ml_dtypes.bfloat16).view(np.uint16)
    )


def test_header_declares_storage_types(tmp_path: Path) -> None:
    names = {"h": TensorProto.FLOAT16, "b": TensorProto.BFLOAT16, "q": TensorProto.INT4,
             "f": TensorProto.FLOAT8E4M3FN}  # fmt: skip
    model = _model(
        [helper.make_node("Cast", [n], [f"{n}_out"], to=TensorProto.FLOAT) for n in names],
        [helper.make_tensor_value_info(n, t, [2]) for n, t in names.items()],
        [helper.make_tensor_value_info(f"{n}_out", TensorProto.FLOAT, [2]) for n in names],
    )
    compile_to_directory(model, tmp_path / "out")
    header = (tmp_path / "out" / "model.h").read_text()
    for c_type, name, dtype in [("_Float16", "h", "float16"), ("uint16_t", "b", "bfloat16"),
                                ("uint8_t", "q", "int4"), ("uint8_t", "f", "float8_e4m3fn")]:  # fmt: skip
        assert f'    const {c_type} *{name};  /* input "{name}": {dtype}[2] */' in header


def test_round_trips_through_narrow_floats_match_onnxruntime() -> None:
    # onnxruntime cannot hand most narrow types to NumPy, but it runs f32 -> T -> f32.
    # Two bands are left out, where onnxruntime parts from onnx's reference
    # without saturate (Ember follows the reference: docs/types.md): from 480
    # in f8E4M3FN (onnxruntime 448, the reference NaN) and from 61440 in f8E5M2
    # (onnxruntime NaN, the reference inf).
    import onnxruntime as ort

    targets = [(TensorProto.FLOAT8E4M3FN, 1), (TensorProto.FLOAT8E4M3FN, 0),
               (TensorProto.FLOAT8E4M3FNUZ, 1), (TensorProto.FLOAT8E5M2, 1),
               (TensorProto.FLOAT8E5M2, 0), (TensorProto.FLOAT8E5M2FNUZ, 0),
               (TensorProto.BFLOAT16, 1)]  # fmt: skip
    nodes, outputs = [], []
    for i, (to, saturate) in enumerate(targets):
        nodes += [helper.make_node("Cast", ["x"], [f"n{i}"], to=to, saturate=saturate),
                  helper.make_node("Cast", [f"n{i}"], [f"y{i}"], to=TensorProto.FLOAT)]  # fmt: skip
        outputs.append(helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, [64]))
    model = _model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [64])], outputs)
    model.ir_version = 10  # type: ignore[attr-defined]
    x = np.concatenate([RNG.standard_normal(50) * 10.0 ** RNG.integers(-6, 6, 50),
                        [np.inf, -np.inf, np.nan, 0, -0.0, 448, 464, 480, 57344, 61440, 1e-9,
                         1.0625, 1.1875, -3.3]]).astype(np.float32)  # fmt: skip
    magnitude = np.abs(x)
    x[((magnitude >= 480) & (magnitude < 512)) | ((magnitude >= 61440) & (magnitude < 65536))] = 1
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])  # type: ignore[attr-defined]
    expected = session.run(None, {"x": x})
    for got, want in zip(ember.compile(model)(x), expected, strict=True):
        np.testing.assert_array_equal(got, want)
