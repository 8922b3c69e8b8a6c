"""If, Loop and Scan: the reference interpreter and the CPU pipeline (where the
control flow unrolls) against onnxruntime, and the CPU pipeline's diagnostic
for control flow it cannot unroll."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import ember
from ember.dialects.graph import IfOp, LoopOp, ScanOp
from ember.errors import EmberError
from ember.reference import run

OPSET = 21
F32 = TensorProto.FLOAT


def _info(name: str, elem: int, shape: list[int] | None) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, shape)


def _model(nodes: list[onnx.NodeProto], inputs: list[onnx.ValueInfoProto],
           outputs: list[onnx.ValueInfoProto],
           initializers: list[onnx.TensorProto] = ()) -> onnx.ModelProto:  # fmt: skip
    graph = helper.make_graph(nodes, "control_flow", inputs, outputs, list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 10
    return model


def _onnxruntime(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(model.SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])  # fmt: skip
    return session.run(None, feeds)


def _assert_close(got: list[np.ndarray], expected: list[np.ndarray]) -> None:
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.shape == e.shape and g.dtype == e.dtype
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------------ models
def if_model(cond_from: str = "input") -> onnx.ModelProto:
    """then: x + w (w an initializer of the outer graph, read from the
    branch); else: x concatenated with itself (another shape). The
    condition is an input, Size(x) > 4 (`shape`: known at import), or
    ReduceSum(big) > 0 over an initializer too large to be evaluated at
    import (`folding`: known once `graph-fold-constants` has run)."""
    then_graph = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["then_out"])], "then", [],
        [_info("then_out", F32, None)])  # fmt: skip
    else_graph = helper.make_graph(
        [helper.make_node("Concat", ["x", "x"], ["else_out"], axis=0)], "else", [],
        [_info("else_out", F32, None)])  # fmt: skip
    nodes = [helper.make_node("If", ["cond"], ["y"], then_branch=then_graph,
                              else_branch=else_graph)]  # fmt: skip
    inputs = [_info("x", F32, [2, 3])]
    initializers = [numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3), "w")]
    if cond_from == "shape":
        initializers.append(numpy_helper.from_array(np.array(4, np.int64), "four"))
        nodes[:0] = [helper.make_node("Size", ["x"], ["size"]),
                     helper.make_node("Greater", ["size", "four"], ["cond"])]  # fmt: skip
    elif cond_from == "folding":
        initializers += [numpy_helper.from_array(np.ones(5000, np.float32), "big"),
                         numpy_helper.from_array(np.array(0.0, np.float32), "zero")]  # fmt: skip
        nodes[:0] = [helper.make_node("ReduceSum", ["big"], ["total"], keepdims=0),
                     helper.make_node("Greater", ["total", "zero"], ["cond"])]  # fmt: skip
    else:
        inputs.insert(0, _info("cond", TensorProto.BOOL, []))
    return _model(nodes, inputs, [_info("y", F32, None)], initializers)


def loop_model(trip_count: int | None = None, with_cond: bool = True,
               stops: bool = True) -> onnx.ModelProto:  # fmt: skip
    """acc += x * i for at most M iterations, while sum(acc) < 40 if `stops`
    (else the body passes its condition on); scan output: acc after each
    iteration. M is an input, or the initializer `trip_count`."""
    body = helper.make_graph(
        [
            helper.make_node("Cast", ["i"], ["i_f"], to=F32),
            helper.make_node("Mul", ["x", "i_f"], ["step"]),
            helper.make_node("Add", ["acc_in", "step"], ["acc_out"]),
            helper.make_node("ReduceSum", ["acc_out"], ["total"], keepdims=0),
            helper.make_node("Less", ["total", "limit"], ["below"]),
            helper.make_node("Identity", ["below" if stops else "cond_in"], ["cond_out"]),
            helper.make_node("Identity", ["acc_out"], ["scan_out"]),
        ],
        "body",
        [_info("i", TensorProto.INT64, []), _info("cond_in", TensorProto.BOOL, []),
         _info("acc_in", F32, [2])],
        [_info("cond_out", TensorProto.BOOL, []), _info("acc_out", F32, [2]),
         _info("scan_out", F32, [2])],
    )  # fmt: skip
    inputs = [_info("x", F32, [2]), _info("acc", F32, [2])]
    initializers = [numpy_helper.from_array(np.array(40.0, np.float32), "limit")]
    if trip_count is None:
        inputs.insert(0, _info("M", TensorProto.INT64, []))
    else:
        initializers.append(numpy_helper.from_array(np.array(trip_count, np.int64), "M"))
    if with_cond:
        inputs.insert(1, _info("cond", TensorProto.BOOL, []))
    loop = helper.make_node("Loop", ["M", "cond" if with_cond else "", "acc"],
                            ["acc_final", "accs"], body=body)  # fmt: skip
    return _model([loop], inputs, [_info("acc_final", F32, None), _info("accs", F32, None)],
                  initializers)  # fmt: skip


def scan_model() -> onnx.ModelProto:
    """Two states and two scan inputs, one read along axis 1 from the end;
    one scan output stacked along axis 1 in reverse."""
    body = helper.make_graph(
        [
            helper.make_node("Add", ["s_in", "a"], ["t"]),
            helper.make_node("Add", ["t", "b"], ["s_out"]),
            helper.make_node("Mul", ["p_in", "a"], ["p_out"]),
            helper.make_node("Mul", ["s_out", "scale"], ["y"]),
        ],
        "body",
        [_info("s_in", F32, [2]), _info("p_in", F32, [2]), _info("a", F32, [2]),
         _info("b", F32, [2])],
        [_info("s_out", F32, [2]), _info("p_out", F32, [2]), _info("y", F32, [2])],
    )  # fmt: skip
    scan = helper.make_node(
        "Scan", ["s0", "p0", "xa", "xb"], ["s", "p", "ys"], body=body, num_scan_inputs=2,
        scan_input_axes=[0, 1], scan_input_directions=[0, 1], scan_output_axes=[1],
        scan_output_directions=[1],
    )  # fmt: skip
    inputs = [_info("s0", F32, [2]), _info("p0", F32, [2]), _info("xa", F32, [4, 2]),
              _info("xb", F32, [2, 4])]  # fmt: skip
    scale = numpy_helper.from_array(np.array([0.5, -2.0], np.float32), "scale")
    outputs = [_info("s", F32, None), _info("p", F32, None), _info("ys", F32, None)]
    return _model([scan], inputs, outputs, [scale])


def nested_model() -> onnx.ModelProto:
    """A Loop of 3 iterations whose body holds an If on the iteration number."""
    then_graph = helper.make_graph(
        [helper.make_node("Add", ["v_in", "x"], ["then_out"])], "then", [],
        [_info("then_out", F32, [2])])  # fmt: skip
    else_graph = helper.make_graph(
        [helper.make_node("Mul", ["v_in", "x"], ["else_out"])], "else", [],
        [_info("else_out", F32, [2])])  # fmt: skip
    body = helper.make_graph(
        [
            helper.make_node("Equal", ["i", "one"], ["is_one"]),
            helper.make_node("If", ["is_one"], ["v_out"], then_branch=then_graph,
                             else_branch=else_graph),
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
        ],
        "body",
        [_info("i", TensorProto.INT64, []), _info("cond_in", TensorProto.BOOL, []),
         _info("v_in", F32, [2])],
        [_info("cond_out", TensorProto.BOOL, []), _info("v_out", F32, [2])],
    )  # fmt: skip
    initializers = [numpy_helper.from_array(np.array(3, np.int64), "M"),
                    numpy_helper.from_array(np.array(1, np.int64), "one")]  # fmt: skip
    loop = helper.make_node("Loop", ["M", "", "v0"], ["v"], body=body)
    return _model([loop], [_info("x", F32, [2]), _info("v0", F32, [2])],
                  [_info("v", F32, None)], initializers)  # fmt: skip


RNG = np.random.default_rng(7)


def _floats(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


# ------------------------------------------------------------------- tests
@pytest.mark.parametrize("cond", [True, False])
def test_if_picks_a_branch(cond: bool) -> None:
    model = if_model()
    feeds = {"cond": np.array(cond), "x": _floats(2, 3)}
    module = ember.import_onnx(model)
    assert any(isinstance(op, IfOp) for op in module.walk())
    _assert_close(run(module, feeds), _onnxruntime(model, feeds))


@pytest.mark.parametrize(
    ("trips", "cond"), [(0, True), (1, True), (5, True), (5, False), (40, True)]
)
def test_loop_runs_to_its_trip_count_or_condition(trips: int, cond: bool) -> None:
    model = loop_model()
    feeds = {"M": np.array(trips, np.int64), "cond": np.array(cond),
             "x": np.array([1.0, 2.0], np.float32), "acc": _floats(2)}  # fmt: skip
    got = run(ember.import_onnx(model), feeds)
    expected = _onnxruntime(model, feeds)
    _assert_close(got, expected)


@pytest.mark.parametrize("stops", [True, False])
def test_loop_without_a_condition_operand(stops: bool) -> None:
    model = loop_model(with_cond=False, stops=stops)
    feeds = {"M": np.array(6, np.int64), "x": np.array([3.0, 4.0], np.float32), "acc": _floats(2)}
    got = run(ember.import_onnx(model), feeds)
    assert (got[1].shape[0] < 6) == stops  # the body's condition ends the loop
    _assert_close(got, _onnxruntime(model, feeds))


def test_scan_axes_and_directions() -> None:
    model = scan_model()
    feeds = {"s0": _floats(2), "p0": _floats(2), "xa": _floats(4, 2), "xb": _floats(2, 4)}
    module = ember.import_onnx(model)
    assert any(isinstance(op, ScanOp) for op in module.walk())
    _assert_close(run(module, feeds), _onnxruntime(model, feeds))


def test_nested_if_in_loop() -> None:
    model = nested_model()
    feeds = {"x": _floats(2), "v0": _floats(2)}
    _assert_close(run(ember.import_onnx(model), feeds), _onnxruntime(model, feeds))


# ------------------------------------------------- compiled (unrolled) cases
@pytest.mark.parametrize(
    ("name", "model", "feeds"),
    [
        ("scan", scan_model(),
         {"s0": _floats(2), "p0": _floats(2), "xa": _floats(4, 2), "xb": _floats(2, 4)}),
        ("loop", loop_model(trip_count=4, with_cond=False, stops=False),
         {"x": _floats(2), "acc": _floats(2)}),
        ("if-from-shape", if_model("shape"), {"x": _floats(2, 3)}),
        ("if-from-folding", if_model("folding"), {"x": _floats(2, 3)}),
        ("nested", nested_model(), {"x": _floats(2), "v0": _floats(2)}),
    ],
)  # fmt: skip
def test_static_control_flow_compiles_unrolled(name: str, model: onnx.ModelProto,
                                               feeds: dict[str, np.ndarray]) -> None:  # fmt: skip
    compiled = ember.compile(model)
    _assert_close(compiled.run(feeds), _onnxruntime(model, feeds))


def test_loop_with_a_run_time_trip_count_is_refused_naming_the_node() -> None:
    with pytest.raises(EmberError) as error:
        ember.compile(loop_model())
    message = str(error.value)
    assert "\n" not in message
    assert "graph.loop with a run-time trip count" in message
    assert "(node acc_final)" in message
    assert "the CPU pipeline does not run control flow yet" in message


def test_if_with_a_run_time_condition_is_refused() -> None:
    with pytest.raises(EmberError, match="graph.if with a run-time condition"):
        ember.compile(if_model())


def test_if_decided_by_folding_is_imported_as_graph_if() -> None:
    module = ember.import_onnx(if_model("folding"))
    assert any(isinstance(op, IfOp) for op in module.walk())


def test_loop_import_keeps_the_region() -> None:
    module = ember.import_onnx(loop_model())
    (loop,) = [op for op in module.walk() if isinstance(op, LoopOp)]
    assert [str(a.type) for a in loop.body.block.args] == [
        "tensor<i64>", "tensor<i1>", "tensor<2xf32>"
    ]  # fmt: skip
    assert loop.max_trip_count is not None and loop.condition is not None


# ------------------------------------------------------------- bad models
def test_missing_branch_is_a_one_line_error() -> None:
    model = if_model()
    if_node = model.graph.node[0]
    kept = [a for a in if_node.attribute if a.name != "else_branch"]
    del if_node.attribute[:]
    if_node.attribute.extend(kept)
    with pytest.raises(EmberError, match="Required attribute 'else_branch' is missing"):
        ember.import_onnx(model)


def test_body_with_too_few_outputs_is_refused() -> None:
    model = loop_model()
    body = model.graph.node[0].attribute[0].g
    del body.output[1:]  # only the condition
    with pytest.raises(EmberError, match="fewer than the 2 it must"):
        ember.import_onnx(model)


def test_branch_with_inputs_is_refused() -> None:
    model = if_model()
    then_branch = next(a.g for a in model.graph.node[0].attribute if a.name == "then_branch")
    then_branch.input.append(_info("extra", F32, [2, 3]))
    with pytest.raises(EmberError, match="takes 1 inputs, expected 0"):
        ember.import_onnx(model)


def test_scan8_with_a_batch_axis() -> None:
    """Scan-8's states and scan inputs carry a batch axis (the sequence is
    axis 1); it imports as one Scan per batch entry."""
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "x"], ["s_out"]),
         helper.make_node("Identity", ["s_out"], ["y"])],
        "body",
        [_info("s_in", F32, [2]), _info("x", F32, [2])],
        [_info("s_out", F32, [2]), _info("y", F32, [2])],
    )  # fmt: skip
    scan = helper.make_node("Scan", ["", "s0", "xs"], ["s", "ys"], body=body,
                            num_scan_inputs=1, directions=[1])  # fmt: skip
    graph = helper.make_graph(
        [scan], "scan8", [_info("s0", F32, [3, 2]), _info("xs", F32, [3, 4, 2])],
        [_info("s", F32, [3, 2]), _info("ys", F32, [3, 4, 2])],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 8)])
    model.ir_version = 4
    feeds = {"s0": _floats(3, 2), "xs": _floats(3, 4, 2)}
    expected = _onnxruntime(model, feeds)
    _assert_close(run(ember.import_onnx(model), feeds), expected)
    _assert_close(ember.compile(model).run(feeds), expected)
