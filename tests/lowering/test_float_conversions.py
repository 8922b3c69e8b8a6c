"""The narrow floats' conversions on the CPU (`float_conversions.py`), bit for
bit against ml_dtypes (what onnx's reference computes with): every bit
pattern of each narrow type to f32, f16 and f64, and to each narrow type
from f32 and f64 values at and around every rounding boundary (and every
f16, a slow test), with and without `saturate`, in every `round_mode` for
FLOAT8E8M0; the reference interpreter's Cast against the same."""

from __future__ import annotations

import functools

import ml_dtypes
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import ember
from ember.reference.kernels.elementwise import cast

NARROW = {
    TensorProto.BFLOAT16: ml_dtypes.bfloat16,
    TensorProto.FLOAT8E4M3FN: ml_dtypes.float8_e4m3fn,
    TensorProto.FLOAT8E4M3FNUZ: ml_dtypes.float8_e4m3fnuz,
    TensorProto.FLOAT8E5M2: ml_dtypes.float8_e5m2,
    TensorProto.FLOAT8E5M2FNUZ: ml_dtypes.float8_e5m2fnuz,
    TensorProto.FLOAT8E8M0: ml_dtypes.float8_e8m0fnu,
    TensorProto.FLOAT4E2M1: ml_dtypes.float4_e2m1fn,
}
FLOAT8 = [TensorProto.FLOAT8E4M3FN, TensorProto.FLOAT8E4M3FNUZ, TensorProto.FLOAT8E5M2,
          TensorProto.FLOAT8E5M2FNUZ]  # fmt: skip
E8M0 = TensorProto.FLOAT8E8M0
TARGETS = (
    [(to, 1, "up") for to in NARROW if to != E8M0]
    + [(to, 0, "up") for to in FLOAT8]
    + [(E8M0, saturate, mode) for saturate in (0, 1) for mode in ("up", "down", "nearest")]
)
"""(type, saturate, round_mode): saturate only means something for the float8
types, round_mode for FLOAT8E8M0."""
IDS = [f"{TensorProto.DataType.Name(t)}-sat{s}-{m}" for t, s, m in TARGETS]


def _cast_model(source: int, casts: list[tuple[int, int, str]], n: int) -> ember.CompiledModel:
    nodes = [helper.make_node("Cast", ["x"], [f"y{i}"], to=to, saturate=saturate, round_mode=mode)
             for i, (to, saturate, mode) in enumerate(casts)]  # fmt: skip
    outputs = [helper.make_tensor_value_info(f"y{i}", to, [n]) for i, (to, *_) in enumerate(casts)]
    graph = helper.make_graph(nodes, "casts", [helper.make_tensor_value_info("x", source, [n])],
                              outputs)  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 25)])
    return ember.compile(model, "cpu")


def _to_odd_f32(x: np.ndarray) -> np.ndarray:
    """f64 to f32 rounded to odd (toward zero, the last bit set if inexact):
    rounding that once more to a type of at most 8 significant bits rounds
    as x itself would (f32 keeps 24, more than 2 * 8 + 2)."""
    with np.errstate(all="ignore"):
        near = x.astype(np.float32)
    toward_zero = np.where(np.abs(near.astype(np.float64)) > np.abs(x),
                           np.nextafter(near, np.float32(0)), near)  # fmt: skip
    inexact = (toward_zero.astype(np.float64) != x) & np.isfinite(x)
    return np.where(inexact, (toward_zero.view(np.uint32) | 1).view(np.float32), toward_zero)


def _expected(x: np.ndarray, to: int, saturate: int, round_mode: str) -> np.ndarray:
    """onnx's reference: ml_dtypes' conversion, after a clip when saturating to
    float8. ml_dtypes converts f64 through f32 (rounding twice: 1.25 + 2^-40
    becomes 1 in f4E2M1FN, not 1.5); Ember rounds once, so an f64 source is
    compared with the single rounding, through f32 rounded to odd."""
    dtype = np.dtype(NARROW[to])
    if x.dtype == np.float64:
        x = _to_odd_f32(x)
    with np.errstate(all="ignore"):
        if to == E8M0:
            return numpy_helper.to_float8e8m0(x, bool(saturate), round_mode)
        if saturate and to in FLOAT8:
            return numpy_helper.saturate_cast(x, dtype)
        return x.astype(dtype)


def _assert_same_bits(got: np.ndarray, want: np.ndarray, x: np.ndarray) -> None:
    """Equal bits, or both NaN (NaN payloads and signs aside)."""
    assert got.dtype == want.dtype
    wide = np.float32 if got.dtype.itemsize < 4 else got.dtype
    both_nan = np.isnan(got.astype(wide)) & np.isnan(want.astype(wide))
    unsigned = f"u{got.dtype.itemsize}"
    bad = (got.view(unsigned) != want.view(unsigned)) & ~both_nan
    assert not bad.any(), (
        f"{int(bad.sum())} of {bad.size} differ, first: {x[bad][:4]} -> "
        f"{got[bad][:4]} (want {want[bad][:4]})"
    )


def _around_boundaries(bits: int) -> np.ndarray:
    """Floats of `bits` bits (32 or 64) whose top 16 bits take every value
    and whose rest is 0, 1, half (a tie for bf16), half +- 1 or all ones: every
    narrow type's values and the midpoints between them, and their neighbours."""
    unsigned = np.dtype(f"u{bits // 8}")
    low_bits = bits - 16
    half = 1 << (low_bits - 1)
    lows = [0, 1, half - 1, half, half + 1, (1 << low_bits) - 1]
    top = np.arange(1 << 16, dtype=unsigned) << np.array(low_bits, unsigned)
    patterns = (top[:, None] | np.array(lows, unsigned)[None, :]).ravel()
    return patterns.view(f"f{bits // 8}")


def _sources() -> list[tuple[int, np.ndarray]]:
    every_f16 = np.arange(1 << 16, dtype=np.uint16).view(np.float16)
    return [(TensorProto.FLOAT16, every_f16), (TensorProto.FLOAT, _around_boundaries(32)),
            (TensorProto.DOUBLE, _around_boundaries(64))]  # fmt: skip


@functools.cache
def _converted(source: int) -> tuple[np.ndarray, list[np.ndarray]]:
    x = dict(_sources())[source]
    return x, _cast_model(source, TARGETS, x.size)(x)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # onnx's to_float8e8m0 on inf and NaN
@pytest.mark.parametrize(
    "source",
    [pytest.param(TensorProto.FLOAT16, marks=pytest.mark.slow), TensorProto.FLOAT,
     TensorProto.DOUBLE],
    ids=["f16", "f32", "f64"],
)  # fmt: skip
@pytest.mark.parametrize("target", TARGETS, ids=IDS)
def test_to_narrow_is_bit_exact(source: int, target: tuple[int, int, str]) -> None:
    x, outputs = _converted(source)
    got = outputs[TARGETS.index(target)]
    if target[0] == E8M0 and source == TensorProto.DOUBLE:
        x = x.astype(np.float32)  # FLOAT8E8M0 reads f32's exponent: an f64 goes through f32
    _assert_same_bits(got, _expected(x, *target), x)


@pytest.mark.parametrize("source", list(NARROW), ids=[TensorProto.DataType.Name(t) for t in NARROW])
def test_from_narrow_is_bit_exact(source: int) -> None:
    dtype = np.dtype(NARROW[source])
    unsigned = np.dtype(f"u{dtype.itemsize}")
    count = 16 if source == TensorProto.FLOAT4E2M1 else 1 << (8 * dtype.itemsize)
    x = np.arange(count, dtype=unsigned).view(dtype)
    targets = [TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.DOUBLE]
    outputs = _cast_model(source, [(t, 1, "up") for t in targets], count)(x)
    for got, to in zip(outputs, targets):
        _assert_same_bits(got, x.astype(helper.tensor_dtype_to_np_dtype(to)), x)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("target", TARGETS, ids=IDS)
def test_reference_cast_matches_onnx(target: tuple[int, int, str]) -> None:
    to, saturate, round_mode = target
    x = _around_boundaries(32)
    (got,) = cast([x], {"to": to, "saturate": saturate, "round_mode": round_mode})
    _assert_same_bits(got, _expected(x, *target), x)
