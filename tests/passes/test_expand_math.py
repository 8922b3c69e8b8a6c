"""`loop-expand-math`'s f32 code, measured in ulp against float64 over a
dense sweep of f32 (every 4099th bit pattern, both signs, all exponents)
and at the edges: zeros, subnormals, the overflow and underflow limits of
exp, the switch points of tanh and erf, +-inf and NaN.

The bounds hold with and without fused multiply-adds (the polynomials are
`contract`: AVX2 and AVX-512 fuse them, a CPU without an fma does not).
"""

from __future__ import annotations

import math

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.context import Context
from xdsl.dialects import math as xmath

import ember
from ember import import_onnx
from ember.options import Options
from ember.targets.cpu.pipeline import cpu_passes

EDGES = np.float32([
    0.0, -0.0, 1e-45, -1e-45, 1e-38, -1e-38, 1.0, -1.0, 88.72, 88.7228, 88.73, 89.0, 1e30,
    -87.33, -87.34, -103.27, -103.28, -103.9, -104.0, -104.5, -1e30, 0.625, -0.625, 0.6249999,
    3.99, 4.0, 4.01, -4.01, 9.0, -9.0, 0.5, 1e-4, -1e-4,
])  # fmt: skip
SPECIALS = np.float32([np.inf, -np.inf, np.nan])


def _sweep() -> np.ndarray:
    bits = np.arange(0, 2**32, 4099, dtype=np.uint64).astype(np.uint32)
    values = bits.view(np.float32)
    return np.concatenate([values[np.isfinite(values)], EDGES])


def _unary(op: str, n: int) -> onnx.ModelProto:
    graph = helper.make_graph(
        [helper.make_node(op, ["x"], ["y"])], op,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n])],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def ulp_errors(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """|got - want| in units of the f32 spacing at `want` (float64 values);
    a result at +-inf counts as exact where the rounded `want` is that inf."""
    with np.errstate(over="ignore"):
        rounded = want.astype(np.float32)
    spacing = np.maximum(np.spacing(np.abs(rounded)).astype(np.float64), 2.0**-149)
    with np.errstate(invalid="ignore"):
        errors = np.abs(got.astype(np.float64) - want) / spacing
    errors[np.isinf(got) & (got == rounded)] = 0
    return errors


REFERENCES = {
    "Exp": (np.exp, 1.5),
    "Tanh": (np.tanh, 2.0),
    "Erf": (np.vectorize(math.erf, otypes=[np.float64]), 8.0),
}
"""Each op's float64 reference and the largest error allowed, in ulp
(measured: exp 0.94, tanh 1.24, erf 5.6 with fmas and 6.3 without)."""


@pytest.mark.parametrize("op", sorted(REFERENCES))
def test_ulp_error_over_a_sweep(op: str) -> None:
    reference, bound = REFERENCES[op]
    x = _sweep()
    (got,) = ember.compile(_unary(op, x.size), threads=1)(x)
    with np.errstate(over="ignore"):
        want = reference(x.astype(np.float64))
    errors = ulp_errors(got, want)
    worst = int(np.argmax(errors))
    assert errors[worst] <= bound, f"{op}({x[worst]!r}) = {got[worst]!r}, want {want[worst]!r}"


SPECIAL_RESULTS = {
    # op: results at (+inf, -inf, NaN, +0, -0, 89, -104)
    "Exp": [np.inf, 0.0, np.nan, 1.0, 1.0, np.inf, 0.0],
    "Tanh": [1.0, -1.0, np.nan, 0.0, -0.0, 1.0, -1.0],
    "Erf": [1.0, -1.0, np.nan, 0.0, -0.0, 1.0, -1.0],
}


@pytest.mark.parametrize("op", sorted(SPECIAL_RESULTS))
def test_special_values(op: str) -> None:
    x = np.float32([np.inf, -np.inf, np.nan, 0.0, -0.0, 89.0, -104.0])
    (got,) = ember.compile(_unary(op, x.size), threads=1)(x)
    want = np.float32(SPECIAL_RESULTS[op])
    np.testing.assert_array_equal(got, want)
    # The sign of a zero result is the argument's, as in libm.
    assert list(np.signbit(got[3:5])) == list(np.signbit(want[3:5]))


def test_exp_subnormal_results_round_once() -> None:
    """Results below 2^-126 come from two exponent scalings: each within an
    ulp of the subnormal spacing (2^-149), none flushed to zero."""
    x = np.linspace(-103.9, -87.0, 20001, dtype=np.float32)
    (got,) = ember.compile(_unary("Exp", x.size), threads=1)(x)
    want = np.exp(x.astype(np.float64))
    assert np.all(got > 0)
    assert ulp_errors(got, want).max() <= 1.0


@pytest.mark.parametrize(("power", "ulps"), [(3.0, 2.0), (0.5, 0.5), (0.75, 2.5)])
def test_power_by_products_and_roots(power: float, ulps: float) -> None:
    """Pow by an initializer 3 (a tanh GELU's cube), 0.5 or 0.75 (LRN's beta)
    within `ulps` of the float64 power, with pow's results at the edges
    (NaN, +-inf, +-0, negative x)."""
    x = np.concatenate([_sweep(), SPECIALS])
    x = x[(np.abs(x) < 1e12) | ~np.isfinite(x)]
    graph = helper.make_graph(
        [helper.make_node("Pow", ["x", "n"], ["y"])], "pow",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [x.size])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [x.size])],
        [numpy_helper.from_array(np.array(power, np.float32), "n")],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    (got,) = ember.compile(model, threads=1)(x)
    with np.errstate(invalid="ignore"):
        want = x.astype(np.float64) ** power
    ordinary = np.isfinite(want) & (x != 0)
    assert ulp_errors(got[ordinary], want[ordinary]).max() <= ulps
    edges = ~ordinary
    exact = np.float32([_c_pow(float(v), power) for v in x[edges]])
    np.testing.assert_array_equal(got[edges], exact)
    numbers = ~np.isnan(exact)  # the sign of zeros and infinities
    assert np.array_equal(np.signbit(got[edges][numbers]), np.signbit(exact[numbers]))


def _c_pow(x: float, y: float) -> float:
    """C's pow (what libm's powf and onnxruntime give): pow(-inf, 0.5) is
    +inf, where NumPy says NaN; a negative x with a fractional y is NaN."""
    try:
        return math.pow(x, y)
    except ValueError:
        return math.nan


EXPANDED = {xmath.ExpOp.name, xmath.ErfOp.name, xmath.TanhOp.name}


def _ops_before(model: onnx.ModelProto, options: Options, stop: str) -> set[str]:
    """The op names of `model` after the CPU pipeline's loop passes up to `stop`."""
    module = import_onnx(model)
    context = Context()
    for _, compiler_pass in cpu_passes(options):
        if compiler_pass.name == stop:
            break
        compiler_pass.apply(context, module)
    return {op.name for op in module.walk()}


def test_pipeline_expands_and_can_keep_libm() -> None:
    """The CPU pipeline leaves no f32 exp, tanh or erf call behind; with the
    pass disabled (libm's results wanted) the calls stay."""
    nodes = [helper.make_node("Softmax", ["x"], ["s"], axis=-1),
             helper.make_node("Gelu", ["s"], ["g"]),
             helper.make_node("Tanh", ["g"], ["y"])]  # fmt: skip
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 32])],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    assert not _ops_before(model, Options(), "loop-pack-weights") & EXPANDED
    kept = Options(disabled=("loop-expand-math",))
    assert EXPANDED <= _ops_before(model, kept, "loop-pack-weights")
