"""Models with symbolic dims compiled once (the generic version): one compiled
model runs at every size of its symbols and matches onnxruntime, the entry
check rejects inputs that disagree before anything runs, and specialised
versions fall back to it."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import onnx.numpy_helper
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper
from xdsl.dialects.builtin import ModuleOp

import ember
from ember.compiler import InputError, compile_module, has_symbols
from ember.errors import CompileError, EmberError
from ember.options import Options
from ember.reference import entry_function
from ember.targets.cpu.generic import GenericModel
from ember.targets.versions import VersionedModel, compile_versions
from tests.support.models import (
    light_model_path,
    mlp,
    resnet50_with_a_dynamic_batch,
    transformer_encoder,
    with_random_weights,
)

SMALL_ENCODER = {"hidden": 64, "heads": 4, "ffn": 128}


def _oracle(model: onnx.ModelProto) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    return ort.InferenceSession(model.SerializeToString(), options)


def _encoder_inputs(batch: int, seq: int, hidden: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(batch * 1000 + seq)
    return {
        "hidden": rng.standard_normal((batch, seq, hidden)).astype(np.float32),
        "mask": (rng.random((batch, seq)) > 0.2).astype(np.int64),
    }


@pytest.fixture(scope="module")
def encoder() -> tuple[onnx.ModelProto, GenericModel]:
    model = transformer_encoder(seq="S", **SMALL_ENCODER)  # type: ignore[arg-type]
    compiled = ember.compile(model, threads=1)
    assert isinstance(compiled, GenericModel)
    return model, compiled


@pytest.mark.parametrize("seq", [1, 7, 128, 384])
def test_one_encoder_runs_at_every_sequence_length(
    encoder: tuple[onnx.ModelProto, GenericModel], seq: int
) -> None:
    model, compiled = encoder
    feeds = _encoder_inputs(1, seq, SMALL_ENCODER["hidden"])
    (expected,) = _oracle(model).run(None, feeds)
    (got,) = compiled.run(feeds)
    assert got.shape == (1, seq, SMALL_ENCODER["hidden"])
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


def test_the_arena_is_a_formula_in_the_symbols(
    encoder: tuple[onnx.ModelProto, GenericModel],
) -> None:
    _, compiled = encoder
    # Attention scores are S x S per head: the formula grows with S * S.
    assert "S * S" in compiled.report.arena_formula
    assert compiled.arena_bytes({"S": 8}) < compiled.arena_bytes({"S": 64})


def test_dynamic_batch_and_sequence() -> None:
    model = transformer_encoder(seq="S", batch="N", **SMALL_ENCODER)  # type: ignore[arg-type]
    compiled = ember.compile(model)  # every core: the run-time loops split among threads
    oracle = _oracle(model)
    for batch, seq in [(1, 5), (3, 16), (2, 1)]:
        feeds = _encoder_inputs(batch, seq, SMALL_ENCODER["hidden"])
        (expected,) = oracle.run(None, feeds)
        np.testing.assert_allclose(compiled.run(feeds)[0], expected, rtol=1e-4, atol=1e-4)


def test_mlp_with_a_dynamic_batch() -> None:
    model = mlp(batch="N", sizes=(32, 48, 10))  # type: ignore[arg-type]
    compiled = ember.compile(model, threads=1)
    oracle = _oracle(model)
    for batch in (1, 3, 8, 13):
        x = np.random.default_rng(batch).standard_normal((batch, 32)).astype(np.float32)
        (expected,) = oracle.run(None, {"input": x})
        np.testing.assert_allclose(compiled(x)[0], expected, rtol=1e-5, atol=1e-6)


def _embeddings(positions: int = 64) -> onnx.ModelProto:
    """A BERT-style embedding layer as exporters write it: token embeddings
    gathered by `ids[N, S]`, plus position embeddings sliced to the sequence
    length read off the ids' shape (Shape -> Gather -> Slice)."""
    rng = np.random.default_rng(0)
    weights = [onnx.numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)
               for name, shape in (("tokens", (100, 16)), ("positions", (positions, 16)))]  # fmt: skip
    weights += [onnx.numpy_helper.from_array(np.array([v], np.int64), name)
                for name, v in (("zero", 0), ("one", 1))]  # fmt: skip
    nodes = [
        helper.make_node("Gather", ["tokens", "ids"], ["embedded"]),
        helper.make_node("Shape", ["ids"], ["shape"]),
        helper.make_node("Gather", ["shape", "one"], ["length"], axis=0),
        helper.make_node("Slice", ["positions", "zero", "length", "zero"], ["position"]),
        helper.make_node("Add", ["embedded", "position"], ["sum"]),
        helper.make_node("LayerNormalization", ["sum", "scale"], ["y"], axis=-1),
    ]
    weights.append(onnx.numpy_helper.from_array(np.full(16, 0.5, np.float32), "scale"))
    graph = helper.make_graph(
        nodes, "embeddings", [helper.make_tensor_value_info("ids", TensorProto.INT64, ["N", "S"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", "S", 16])], weights,
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_embeddings_with_a_dynamic_batch_and_sequence() -> None:
    model = _embeddings()
    compiled = ember.compile(model, dims={"S": (1, 64)}, threads=1)
    assert isinstance(compiled, GenericModel)
    oracle = _oracle(model)
    for batch, seq in [(1, 1), (2, 7), (3, 64)]:
        ids = np.random.default_rng(seq).integers(-100, 100, (batch, seq)).astype(np.int64)
        (expected,) = oracle.run(None, {"ids": ids})
        np.testing.assert_allclose(compiled(ids)[0], expected, rtol=1e-5, atol=1e-5)
    with pytest.raises(InputError, match="S = 65 is outside its range 1..64"):
        compiled(np.zeros((1, 65), np.int64))


def _fused_attention() -> onnx.ModelProto:
    """GPT-2's attention on `x[N, S, 16]`: one projection to q, k and v
    together, Split along the last axis (a Slice takes v's first half too),
    scores S x S."""
    rng = np.random.default_rng(1)
    weights = [onnx.numpy_helper.from_array(rng.standard_normal((16, 48)).astype(np.float32), "w"),
               onnx.numpy_helper.from_array(np.array([16, 16, 16], np.int64), "parts")]  # fmt: skip
    weights += [onnx.numpy_helper.from_array(np.array([v], np.int64), name)
                for name, v in (("zero", 0), ("eight", 8), ("last", 2))]  # fmt: skip
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["qkv"]),
        helper.make_node("Split", ["qkv", "parts"], ["q", "k", "v"], axis=2),
        helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 2, 1]),
        helper.make_node("MatMul", ["q", "kt"], ["scores"]),
        helper.make_node("Softmax", ["scores"], ["weights"], axis=-1),
        helper.make_node("Slice", ["v", "zero", "eight", "last"], ["half"]),
        helper.make_node("MatMul", ["weights", "half"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "attention", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", "S", 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", "S", 8])], weights,
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def test_split_and_slice_along_a_static_axis_of_a_symbolic_tensor() -> None:
    model = _fused_attention()
    compiled = ember.compile(model, threads=1)
    assert isinstance(compiled, GenericModel)
    oracle = _oracle(model)
    for batch, seq in [(1, 1), (2, 7), (3, 20)]:
        x = np.random.default_rng(seq).standard_normal((batch, seq, 16)).astype(np.float32)
        (expected,) = oracle.run(None, {"x": x})
        np.testing.assert_allclose(compiled(x)[0], expected, rtol=1e-4, atol=1e-5)


def _cache_and_last_token() -> onnx.ModelProto:
    """A decoder's bookkeeping on `x[1, S, 8]`: a cache of 4 past positions
    concatenated along the sequence (`S + 4` rows, twice: `2 * S + 4`), and
    the last position's row (`x[:, -1:]`, a start of `2 * S + 3`)."""
    rng = np.random.default_rng(2)
    weights = [
        onnx.numpy_helper.from_array(rng.standard_normal((1, 4, 8)).astype(np.float32), "past")
    ]
    weights += [onnx.numpy_helper.from_array(np.array([v], np.int64), name)
                for name, v in (("minus_one", -1), ("end", 1 << 40), ("one", 1))]  # fmt: skip
    nodes = [
        helper.make_node("Concat", ["x", "past", "x"], ["cache"], axis=1),
        helper.make_node("Slice", ["cache", "minus_one", "end", "one"], ["last"]),
        helper.make_node("Tanh", ["cache"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "cache", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, "S", 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, None, 8]),
         helper.make_tensor_value_info("last", TensorProto.FLOAT, [1, 1, 8])], weights,
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_concat_and_slice_at_offsets_that_depend_on_the_sizes() -> None:
    model = _cache_and_last_token()
    compiled = ember.compile(model, threads=1)
    assert isinstance(compiled, GenericModel)
    assert [o.describe() for o in compiled.outputs] == ["'y' float32[1, 2 * S + 4, 8]",
                                                        "'last' float32[1, 1, 8]"]  # fmt: skip
    oracle = _oracle(model)
    for seq in (1, 7, 33):
        x = np.random.default_rng(seq).standard_normal((1, seq, 8)).astype(np.float32)
        for got, expected in zip(compiled(x), oracle.run(None, {"x": x})):
            np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)


def test_split_along_a_symbolic_axis() -> None:
    nodes = [helper.make_node("Concat", ["x", "x"], ["twice"], axis=1),  # 2 * S rows
             helper.make_node("Split", ["twice"], ["a", "b"], axis=1, num_outputs=2),
             helper.make_node("Sub", ["a", "b"], ["zero"])]  # fmt: skip
    graph = helper.make_graph(
        nodes, "halves", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, "S", 3])],
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, None) for name in ("zero", "b")],
    )  # fmt: skip
    compiled = ember.compile(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]))
    assert isinstance(compiled, GenericModel)
    for seq in (1, 5):
        x = np.random.default_rng(seq).standard_normal((2, seq, 3)).astype(np.float32)
        zero, b = compiled(x)
        np.testing.assert_array_equal(b, x)  # the second half starts at offset S
        np.testing.assert_array_equal(zero, np.zeros_like(x))


def _gemm(columns: int) -> onnx.ModelProto:
    rng = np.random.default_rng(columns)
    weights = [onnx.numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)
               for name, shape in (("w", (columns, 32)), ("b", (columns,)))]  # fmt: skip
    graph = onnx.helper.make_graph(
        [onnx.helper.make_node("Gemm", ["x", "w", "b"], ["y"], transB=1)], "gemm",
        [onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, ["M", 32])],
        [onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, ["M", columns])],
        weights,
    )  # fmt: skip
    opsets = [onnx.helper.make_opsetid("", 17)]
    return onnx.helper.make_model(graph, opset_imports=opsets, ir_version=8)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("columns", [10, 20, 33])
def test_run_time_rows_with_columns_short_of_a_block(columns: int, threads: int) -> None:
    # The bias is applied as the blocks store, so the last columns must be
    # covered by (overlapping) whole blocks on the rows peeled at run time too.
    model = _gemm(columns)
    compiled = ember.compile(model, threads=threads)
    oracle = _oracle(model)
    for rows in range(1, 18):  # fewer than a block (clamped rows), whole, overlapping
        x = np.random.default_rng(rows).standard_normal((rows, 32)).astype(np.float32)
        (expected,) = oracle.run(None, {"x": x})
        np.testing.assert_allclose(compiled(x)[0], expected, rtol=1e-5, atol=1e-5)


def _cnn() -> onnx.ModelProto:
    """Convolutions (3x3 padded, 1x1), max pooling, a residual add, a
    channel Concat, global average pooling, Flatten and Gemm on a batch of
    `N` images."""
    rng = np.random.default_rng(0)
    shapes = {"w1": (16, 3, 3, 3), "b1": (16,), "w2": (32, 16, 3, 3), "b2": (32,),
              "w3": (16, 32, 1, 1), "wf": (10, 32), "bf": (10,)}  # fmt: skip
    weights = [onnx.numpy_helper.from_array((rng.standard_normal(s) * 0.2).astype(np.float32), n)
               for n, s in shapes.items()]  # fmt: skip
    node = onnx.helper.make_node
    nodes = [
        node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        node("Relu", ["c1"], ["r1"]),
        node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        node("Conv", ["p1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]),
        node("Relu", ["c2"], ["r2"]),
        node("Conv", ["r2", "w3"], ["c3"]),
        node("Add", ["c3", "p1"], ["s"]),
        node("Concat", ["s", "p1"], ["cat"], axis=1),
        node("GlobalAveragePool", ["cat"], ["g"]),
        node("Flatten", ["g"], ["f"]),
        node("Gemm", ["f", "wf", "bf"], ["y"], transB=1),
    ]
    graph = onnx.helper.make_graph(
        nodes, "cnn",
        [onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, ["N", 3, 16, 16])],
        [onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, ["N", 10])],
        weights,
    )  # fmt: skip
    opsets = [onnx.helper.make_opsetid("", 17)]
    return onnx.helper.make_model(graph, opset_imports=opsets, ir_version=8)


def _runs_at_every_batch(model: onnx.ModelProto, image: tuple[int, ...],
                         batches: tuple[int, ...], opt_level: int) -> None:  # fmt: skip
    """One generic compile of `model` (input x of [N, *image]) matches
    onnxruntime at each batch."""
    compiled = ember.compile(model, threads=1, opt_level=opt_level)
    assert isinstance(compiled, GenericModel)
    oracle = _oracle(model)
    for batch in batches:
        x = np.random.default_rng(batch).standard_normal((batch, *image)).astype(np.float32)
        (expected,) = oracle.run(None, {"x": x})
        np.testing.assert_allclose(compiled(x)[0], expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("opt_level", [1, 2])
def test_a_convolutional_net_runs_at_every_batch(opt_level: int) -> None:
    # -O2 lays the activations out as NHWC with the batch symbolic.
    _runs_at_every_batch(_cnn(), (3, 16, 16), (1, 3, 8), opt_level)


def _decoder() -> onnx.ModelProto:
    """A U-Net style decoder step on a batch of `N`: transposed convolutions
    (stride 2; two groups, and one group by phases) next to a bilinear
    upsampling of the same input, joined along the channels, then a 3x3
    convolution."""
    rng = np.random.default_rng(1)
    shapes = {"wt": (8, 4, 2, 2), "bt": (8,), "wp": (8, 3, 3, 3), "wc": (4, 19, 3, 3)}
    weights = [onnx.numpy_helper.from_array((rng.standard_normal(s) * 0.3).astype(np.float32), n)
               for n, s in shapes.items()]  # fmt: skip
    weights.append(onnx.numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales"))
    node = onnx.helper.make_node
    nodes = [
        node("ConvTranspose", ["x", "wt", "bt"], ["up"], strides=[2, 2], group=2),
        node(
            "ConvTranspose",
            ["x", "wp"],
            ["phases"],
            strides=[2, 2],
            pads=[1, 1, 1, 1],
            output_padding=[1, 1],
        ),
        node("Resize", ["x", "", "scales"], ["big"], mode="linear"),
        node("Concat", ["up", "phases", "big"], ["cat"], axis=1),
        node("Conv", ["cat", "wc"], ["y"], pads=[1, 1, 1, 1]),
    ]
    graph = onnx.helper.make_graph(
        nodes, "decoder",
        [onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, ["N", 8, 5, 6])],
        [onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, ["N", 4, 10, 12])],
        weights,
    )  # fmt: skip
    return onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 19)])


@pytest.mark.parametrize("opt_level", [1, 2])
def test_a_decoder_runs_at_every_batch(opt_level: int) -> None:
    _runs_at_every_batch(_decoder(), (8, 5, 6), (1, 4), opt_level)


def test_symbolic_image_sizes_are_not_lowered_yet() -> None:
    model = _cnn()
    model.graph.input[0].type.tensor_type.shape.dim[2].dim_param = "H"
    with pytest.raises(ember.EmberError, match=r"graph.conv \(symbolic sizes \(.*H.*\) past the "
                                               r"batch dim not lowered yet"):  # fmt: skip
        ember.compile(model, threads=1, opt_level=1)


@pytest.mark.slow
def test_squeezenet_computes_its_output_shape_at_every_batch() -> None:
    # Its last Reshape takes the shape of a tensor (Shape): graph-canonicalize
    # makes it the constant [-1, 1000, 1, 1] from the inferred type.
    model = with_random_weights(onnx.load(light_model_path("squeezenet")), 0)
    for value in (*model.graph.input, *model.graph.output):
        value.type.tensor_type.shape.dim[0].dim_param = "N"
    compiled = ember.compile(model, threads=1)
    assert isinstance(compiled, GenericModel)
    oracle = _oracle(model)
    for batch in (1, 3):
        x = np.random.default_rng(batch).standard_normal((batch, 3, 224, 224)).astype(np.float32)
        (expected,) = oracle.run(None, {"data_0": x})
        np.testing.assert_allclose(compiled(x)[0], expected, rtol=1e-4, atol=1e-6)


@pytest.mark.slow
def test_one_resnet50_runs_at_every_batch() -> None:
    model = resnet50_with_a_dynamic_batch()
    compiled = ember.compile(model, threads=2)
    assert isinstance(compiled, GenericModel)
    oracle = _oracle(model)
    for batch in (1, 3, 8):
        x = np.random.default_rng(batch).standard_normal((batch, 3, 224, 224)).astype(np.float32)
        (expected,) = oracle.run(None, {"gpu_0/data_0": x})
        (got,) = compiled(x)
        assert got.shape == (batch, 1000)
        np.testing.assert_allclose(got, expected, rtol=1e-3, atol=1e-4)


def test_entry_check_names_the_input_and_the_symbol(
    encoder: tuple[onnx.ModelProto, GenericModel],
) -> None:
    _, compiled = encoder
    feeds = _encoder_inputs(1, 7, SMALL_ENCODER["hidden"])
    with pytest.raises(InputError, match=r"input 'mask' axis 1 is 5, but S is 7 from input "
                                         r"'hidden' axis 1"):  # fmt: skip
        compiled.run({"hidden": feeds["hidden"], "mask": feeds["mask"][:, :5]})
    with pytest.raises(InputError, match=r"input 'hidden' .* axis 2 is 32, but 64"):
        compiled.run({"hidden": feeds["hidden"][:, :, :32], "mask": feeds["mask"]})


def test_declared_ranges_are_checked_at_entry() -> None:
    model = mlp(batch="N", sizes=(8, 4))  # type: ignore[arg-type]
    compiled = ember.compile(model, dims={"N": (1, 4)}, threads=1)
    with pytest.raises(InputError, match=r"N = 5 is outside its range 1\.\.4"):
        compiled(np.zeros((5, 8), np.float32))


def test_auto_specializes_at_the_low_end_of_each_range() -> None:
    model = mlp(batch="N", sizes=(8, 4))  # type: ignore[arg-type]
    compiled = ember.compile(model, dims={"N": (2, 64)}, specialize="auto", threads=1)
    assert isinstance(compiled, VersionedModel)
    assert list(compiled.versions) == [(("N", 2),)] and compiled.generic is not None
    x = np.ones((2, 8), np.float32)
    assert compiled.version_for([x]) is compiled.versions[(("N", 2),)]
    assert compiled.version_for([np.ones((3, 8), np.float32)]) is compiled.generic
    assert isinstance(ember.compile(model, specialize="none", threads=1), GenericModel)
    with pytest.raises(EmberError, match="specialize must be sizes per symbol, 'auto' or 'none'"):
        ember.compile(model, specialize="all")


def test_specialised_versions_fall_back_to_the_generic_one() -> None:
    model = mlp(batch="N", sizes=(16, 8))  # type: ignore[arg-type]
    versioned = ember.compile(model, specialize={"N": [1, 8]}, threads=1)
    assert isinstance(versioned, VersionedModel)
    assert isinstance(versioned.generic, GenericModel)
    oracle = _oracle(model)
    for batch in (1, 5, 8):
        x = np.random.default_rng(batch).standard_normal((batch, 16)).astype(np.float32)
        chosen = versioned.version_for([x])
        assert (chosen is versioned.generic) == (batch == 5)
        (expected,) = oracle.run(None, {"input": x})
        np.testing.assert_allclose(versioned(x)[0], expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("lowers", [True, False], ids=["generic", "no-generic"])
def test_the_generic_version_is_compiled_at_the_first_size_no_static_one_takes(lowers: bool
                                                                               ) -> None:  # fmt: skip
    """The static versions are compiled at once, the generic one at the first
    miss and only then; a generic version that does not lower is tried once
    and every miss is the InputError that lists the versions."""
    model = mlp(batch="N", sizes=(16, 8))  # type: ignore[arg-type]
    compiled: list[str] = []

    def compile_one(module: ModuleOp) -> Any:
        symbolic = has_symbols(entry_function(module))
        compiled.append("generic" if symbolic else "static")
        if symbolic and not lowers:
            raise CompileError("symbolic sizes (N) not lowered yet")
        return compile_module(module, None, Options(threads=1))

    versioned = compile_versions(ember.import_onnx(model), {"N": [1, 8]}, compile_one)
    assert compiled == ["static", "static"]
    for batch in (1, 8, 1):
        versioned(np.ones((batch, 16), np.float32))
    assert compiled == ["static", "static"]
    for batch in (5, 3):
        x = np.ones((batch, 16), np.float32)
        if lowers:
            assert versioned(x)[0].shape == (batch, 8)
        else:
            with pytest.raises(InputError, match=f"no version of the model for N={batch}"):
                versioned(x)
    assert compiled == ["static", "static", "generic"]
    assert isinstance(versioned.generic, GenericModel) == lowers


def _flat_mask_lookup() -> onnx.ModelProto:
    """The legacy exporter's `mask[batch_idx, kv_idx]`: the mask flattened
    and gathered at b * S + s, with b and s from Range over the sizes (Shape
    values used as data), and position ids Range(0, S) added as floats."""
    n = helper.make_node
    c = helper.make_tensor
    nodes = [
        n("Shape", ["mask"], ["shape"]),
        n("Constant", [], ["zero"], value=c("z", TensorProto.INT64, [], [0])),
        n("Constant", [], ["one"], value=c("o", TensorProto.INT64, [], [1])),
        n("Gather", ["shape", "zero"], ["batch"], axis=0),
        n("Gather", ["shape", "one"], ["seq"], axis=0),
        n("Range", ["zero", "batch", "one"], ["rows"]),
        n("Range", ["zero", "seq", "one"], ["columns"]),
        n("Constant", [], ["axis1"], value=c("a", TensorProto.INT64, [1], [1])),
        n("Unsqueeze", ["rows", "axis1"], ["rows2"]),
        n("Mul", ["rows2", "seq"], ["starts"]),
        n("Add", ["starts", "columns"], ["flat_index"]),
        n("Constant", [], ["minus1"], value=c("m", TensorProto.INT64, [1], [-1])),
        n("Reshape", ["mask", "minus1"], ["flat"]),
        n("Gather", ["flat", "flat_index"], ["picked"], axis=0),
        n("Cast", ["picked"], ["picked_f"], to=TensorProto.FLOAT),
        n("Cast", ["columns"], ["positions"], to=TensorProto.FLOAT),
        n("Add", ["picked_f", "positions"], ["out"]),
    ]  # fmt: skip
    graph = helper.make_graph(
        nodes, "flat_mask_lookup",
        [helper.make_tensor_value_info("mask", TensorProto.BOOL, ["B", "S"])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, ["B", "S"])],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def test_shape_values_used_as_data() -> None:
    model = _flat_mask_lookup()
    compiled = ember.compile(model, threads=1)
    assert isinstance(compiled, GenericModel)
    for batch, seq in [(1, 1), (2, 5), (3, 17)]:
        mask = np.random.default_rng(seq).random((batch, seq)) > 0.5
        (expected,) = _oracle(model).run(None, {"mask": mask})
        (got,) = compiled.run({"mask": mask})
        np.testing.assert_array_equal(got, expected)
