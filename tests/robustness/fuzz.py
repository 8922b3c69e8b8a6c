"""Mutated models through the whole tool chain, one process for many cases.

    python -m tests.robustness.fuzz 0:50        # cases 0..49

Each case is a small real network (convolutions, pooling, a matrix multiply,
shape arithmetic, Softmax) with one or a few seeded mutations: bytes of the
serialized model flipped, inserted or cut off, or fields of the protobuf
changed (op types, attributes and their kinds, dims, data types, names,
inputs and outputs). Every case is imported, run in the reference
interpreter and compiled and run. Each must end in a result or an
`EmberError`: anything else is a bug, and so is a crash or a hang, which the
caller sees as a signal or a time-out after `case N` was printed.

Memory is capped (RLIMIT_AS), so a mutation that makes Ember allocate
terabytes is a `MemoryError` here, a bug, rather than a dead machine.
"""

from __future__ import annotations

import resource
import sys
import traceback
import warnings
from collections.abc import Callable

import numpy as np
import onnx
from onnx import AttributeProto, TensorProto, helper, numpy_helper

MEMORY_LIMIT = 6 << 30


def base_model() -> onnx.ModelProto:
    """A small network with most of what importers and lowerings handle."""
    rng = np.random.default_rng(0)

    def weight(name: str, *shape: int) -> TensorProto:
        return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32) * 0.3, name)

    n = helper.make_node
    nodes = [
        n("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], strides=[1, 1], name="conv1"),
        n("Relu", ["c1"], ["r1"], name="relu1"),
        n("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2], name="pool1"),
        n("Conv", ["p1", "w2"], ["c2"], group=2, name="conv2"),
        n("Add", ["c2", "bias2"], ["a2"], name="add2"),
        n("Shape", ["a2"], ["s2"], name="shape"),
        n("Gather", ["s2", "zero"], ["batch"], axis=0, name="gather"),
        n("Concat", ["batch", "minus_one"], ["flat_shape"], axis=0, name="concat"),
        n("Reshape", ["a2", "flat_shape"], ["flat"], name="reshape"),
        n("Gemm", ["flat", "w3", "b3"], ["logits"], transB=1, name="gemm"),
        n("Softmax", ["logits"], ["probs"], axis=-1, name="softmax"),
        n("ReduceMax", ["logits"], ["top"], axes=[1], keepdims=0, name="reducemax"),
        n("Cast", ["top"], ["top_int"], to=TensorProto.INT32, name="cast"),
    ]
    initializers = [
        weight("w1", 4, 3, 3, 3), weight("b1", 4), weight("w2", 4, 2, 2, 2),
        weight("bias2", 1, 4, 1, 1), weight("w3", 5, 36), weight("b3", 5),
        numpy_helper.from_array(np.array([0], np.int64), "zero"),
        numpy_helper.from_array(np.array([-1], np.int64), "minus_one"),
    ]  # fmt: skip
    graph = helper.make_graph(
        nodes, "fuzz_base",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 8, 8])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [2, 5]),
         helper.make_tensor_value_info("top_int", TensorProto.INT32, [2])],
        initializers,
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


# Mutations of the protobuf's fields ------------------------------------------

Mutation = Callable[[onnx.ModelProto, np.random.Generator], None]

_OP_TYPES = ["Relu", "Add", "Conv", "MaxPool", "Gather", "Concat", "Reshape", "Gemm", "Softmax",
             "Transpose", "Pad", "Expand", "Tile", "Slice", "Div", "Mod", "Range",
             "ConstantOfShape", "ReduceSum", "Cast", "NoSuchOp", ""]  # fmt: skip
_NUMBERS = [0, 1, -1, 2, 3, -7, 1000, 2**31, -(2**31), 2**62, -(2**63)]
_FLOATS = [0.0, -0.0, 1.5, -1e30, 1e30, float("nan"), float("inf")]


def _pick(rng: np.random.Generator, items: list) -> object:  # type: ignore[type-arg]
    return items[int(rng.integers(len(items)))]


def _node(model: onnx.ModelProto, rng: np.random.Generator) -> onnx.NodeProto:
    return model.graph.node[int(rng.integers(len(model.graph.node)))]


def change_op_type(model: onnx.ModelProto, rng: np.random.Generator) -> None:
    _node(model, rng).op_type = str(_pick(rng, _OP_TYPES))


def change_attribute(model: onnx.ModelProto, rng: np.random.Generator) -> None:
    """An attribute's value, or its kind (INT for INTS, FLOAT, STRING, TENSOR)."""
    node = _node(model, rng)
    names = [a.name for a in node.attribute] + ["axis", "pads", "strides", "kernel_shape",
                                                "group", "to", "mode", "perm", "keepdims"]  # fmt: skip
    name = str(_pick(rng, names))
    kept = [a for a in node.attribute if a.name != name]
    del node.attribute[:]
    node.attribute.extend(kept)
    kind = int(rng.integers(7))
    if kind == 0:
        value = helper.make_attribute(name, int(_pick(rng, _NUMBERS)))  # type: ignore[arg-type]
    elif kind == 1:
        count = int(rng.integers(0, 6))
        numbers = [int(_pick(rng, _NUMBERS)) for _ in range(count)]  # type: ignore[call-overload]
        value = helper.make_attribute(name, numbers, attr_type=AttributeProto.INTS)
    elif kind == 2:
        value = helper.make_attribute(name, float(_pick(rng, _FLOATS)))  # type: ignore[arg-type]
    elif kind == 3:
        value = helper.make_attribute(name, bytes(rng.integers(0, 256, 4, dtype=np.uint8)))
    elif kind == 4:
        value = helper.make_attribute(name, numpy_helper.from_array(np.array([1, 0], np.int64)))
    elif kind == 5:
        value = helper.make_attribute(name, "reflect")
    else:
        return  # the attribute removed
    node.attribute.append(value)


def change_input_dims(model: onnx.ModelProto, rng: np.random.Generator) -> None:
    values = [*model.graph.input, *model.graph.output]
    dims = _pick(rng, values).type.tensor_type.shape.dim  # type: ignore[attr-defined]
    if len(dims) and rng.random() < 0.8:
        dim = dims[int(rng.integers(len(dims)))]
        choice = _pick(rng, [0, 1, 7, -3, 2**20, 2**40, "n"])
        if isinstance(choice, str):
            dim.dim_param = choice
        else:
            dim.dim_value = int(choice)  # type: ignore[call-overload]
    elif len(dims):
        del dims[-1]
    else:
        dims.add().dim_value = 3


def change_element_type(model: onnx.ModelProto, rng: np.random.Generator) -> None:
    elem = int(_pick(rng, [0, 1, 2, 3, 6, 7, 9, 10, 11, 16, 999]))
    if rng.random() < 0.5:
        value = _pick(rng, [*model.graph.input, *model.graph.output])
        value.type.tensor_type.elem_type = elem  # type: ignore[attr-defined]
    else:
        tensor = _pick(rng, list(model.graph.initializer))
        tensor.data_type = elem  # type: ignore[attr-defined]


def damage_initializer(model: onnx.ModelProto, rng: np.random.Generator) -> None:
    """Dims that do not match the data, data cut short, or the tensor removed."""
    index = int(rng.integers(len(model.graph.initializer)))
    tensor = model.graph.initializer[index]
    kind = int(rng.integers(4))
    if kind == 0 and len(tensor.dims):
        tensor.dims[0] = int(_pick(rng, [0, 1, 2**33, -1, tensor.dims[0] + 1]))
    elif kind == 1:
        tensor.raw_data = tensor.raw_data[: len(tensor.raw_data) // 2]
    elif kind == 2:
        del model.graph.initializer[index]
    else:
        tensor.name = str(_pick(rng, ["x", "probs", "c1", ""]))


def rewire(model: onnx.ModelProto, rng: np.random.Generator) -> None:
    """An input or output renamed: dangling, duplicated, or a cycle."""
    node = _node(model, rng)
    names = ["x", "c1", "probs", "logits", "missing", "", "zero", "flat"]
    if rng.random() < 0.5 and len(node.input):
        node.input[int(rng.integers(len(node.input)))] = str(_pick(rng, names))
    elif rng.random() < 0.5:
        node.input.append(str(_pick(rng, names)))
    elif len(node.output):
        node.output[0] = str(_pick(rng, names))
    if rng.random() < 0.2:
        model.graph.output[0].name = str(_pick(rng, names))


def change_opset(model: onnx.ModelProto, rng: np.random.Generator) -> None:
    model.opset_import[0].version = int(_pick(rng, [1, 6, 7, 9, 11, 13, 18, 21, 28, 99, -1]))


def invalid_text(model: onnx.ModelProto, rng: np.random.Generator) -> None:
    """A name with bytes that are not UTF-8 (protobuf's Python API refuses
    them in str fields, so this is done on the wire format later)."""
    _node(model, rng).name = "\u00e9\u00e9\u00e9"


FIELD_MUTATIONS: list[Mutation] = [change_op_type, change_attribute, change_input_dims,
                                   change_element_type, damage_initializer, rewire,
                                   change_opset, invalid_text]  # fmt: skip


# Mutations of the bytes ------------------------------------------------------


def mutate_bytes(data: bytes, rng: np.random.Generator) -> bytes:
    buffer = bytearray(data)
    kind = int(rng.integers(4))
    if kind == 0:  # flip a few bytes
        for _ in range(int(rng.integers(1, 8))):
            buffer[int(rng.integers(len(buffer)))] = int(rng.integers(256))
    elif kind == 1:  # cut off
        del buffer[int(rng.integers(len(buffer))) :]
    elif kind == 2:  # insert
        at = int(rng.integers(len(buffer)))
        buffer[at:at] = bytes(rng.integers(0, 256, int(rng.integers(1, 16)), dtype=np.uint8))
    else:  # the UTF-8 of a name broken (0xc3 0xa9 is é; 0xc3 0x28 is invalid)
        at = buffer.find(b"\xc3\xa9")
        if at >= 0:
            buffer[at + 1] = 0x28
    return bytes(buffer)


def make_case(index: int) -> bytes:
    rng = np.random.default_rng(1000 + index)
    model = base_model()
    FIELD_MUTATIONS[int(rng.integers(len(FIELD_MUTATIONS)))](model, rng)
    data = model.SerializeToString()
    if rng.random() < 0.3:
        data = mutate_bytes(data, rng)
    return data


# Running a case ---------------------------------------------------------------


def run_case(data: bytes) -> str:
    """What happened to one model: `ok ...` or `error: ...` (an EmberError).
    Any other exception propagates."""
    import ember
    from ember.compiler import compile_module
    from ember.errors import EmberError
    from ember.inputs import random_array

    try:
        module = ember.import_onnx(data)
        compiled = compile_module(module.clone())
        rng = np.random.default_rng(0)
        inputs = {s.name: random_array(s.shape, s.dtype, rng) for s in compiled.inputs}
        outputs = compiled.run(inputs)
        ember.reference.run(module, inputs)
    except EmberError as error:
        message = str(error)
        assert "\n" not in message.strip(), f"a diagnostic of several lines: {message!r}"
        return f"error: {message}"
    return f"ok: {[o.shape for o in outputs]}"


def main(argv: list[str]) -> int:
    """Runs cases `start:stop`; prints `case N` before each so that a crash or
    a hang can be pinned on it; exit status 3 at the first other exception."""
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    warnings.simplefilter("ignore")  # NumPy's overflow/invalid warnings are not failures
    start, _, stop = argv[0].partition(":")
    for index in range(int(start), int(stop)):
        print(f"case {index}", flush=True)
        try:
            outcome = run_case(make_case(index))
        except Exception:
            print(f"BUG in case {index}:\n{traceback.format_exc()}", flush=True)
            return 3
        print(f"  {outcome[:200]}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
