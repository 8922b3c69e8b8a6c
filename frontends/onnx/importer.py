"""ONNX model -> `builtin.module` with one `func.func @main` of `graph` ops.

The function's arguments are the model's inputs (initializers are weights,
even when an old exporter also lists them as inputs), its results are the
model's outputs; both keep their ONNX names as `onnx.name` argument/result
attributes and as SSA name hints. Initializers become `graph.constant` ops
holding their bytes. Every result type comes from the op's shape rule,
helped by compile-time values of small integer tensors (shape arithmetic),
and is checked against the shapes the model declares for its outputs.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import numpy as np
import onnx
from onnx import ModelProto, ValueInfoProto, helper, numpy_helper
from xdsl.builder import Builder, InsertPoint
from xdsl.dialects.builtin import (
    UNKNOWN_LOC,
    ArrayAttr,
    DictionaryAttr,
    ModuleOp,
    StringAttr,
    TensorType,
)
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import VerifyException

from ember.dialects.graph import IMPORTABLE_OPS, ConstantOp, GraphOp, IfOp, LoopOp, ScanOp, YieldOp
from ember.dialects.graph.control_flow import (
    MAX_BODY_TYPE_ROUNDS,
    RankMismatch,
    initial_arguments,
    static_trip_count,
    widened_arguments,
)
from ember.dialects.graph.dims import (
    SYMBOLS_ATTR,
    dim_from_name,
    range_problem,
    symbol_name,
    symbolic_shape,
    symbols_attribute,
)
from ember.dialects.graph.shapes import (
    ShapeContext,
    ShapeError,
    UnknownValueError,
    infer_types,
    refine,
    types_compatible,
)
from ember.dialects.graph.spec import IMPORTED_DOMAINS, ONNX_DOMAIN, Arity, AttrKind, OpSpec
from ember.dialects.graph.symbolic import DEFAULT_RANGE, Dim, Range, SymExpr, in_ranges
from ember.dialects.graph.types import (
    DYNAMIC,
    UnsupportedTypeError,
    attribute_from_value,
    dense_from_array,
    element_type_from_onnx,
    format_shape,
    numpy_dtype,
    shape_of,
    tensor_type,
    type_size_problem,
)
from ember.dialects.source_names import name_location
from ember.errors import (
    EmberError,
    InputDependentError,
    InvalidModelError,
    ModelLoadError,
    ModelShapeError,
    TensorTooLargeError,
    UnsupportedModelError,
)
from ember.frontends.onnx.loader import ModelSource, describe_source, load_model
from ember.frontends.onnx.upgrade import MAX_OPSET, MIN_OPSET, REWRITTEN_OPS, Node, upgrade
from ember.frontends.onnx.validate import check_names, node_label, validate
from ember.reference.evaluate import propagate_value

ONNX_NAME = "onnx.name"
LoopT = TypeVar("LoopT", LoopOp, ScanOp)
CONTROL_FLOW_OPS = ("If", "Loop", "Scan")
"""ONNX ops with subgraphs, imported as region ops (`graph.if`, ...)."""
TORCH_NAME_SCOPES = "pkg.torch.onnx.name_scopes"
"""The node metadata where `torch.onnx.export` records the module path."""


def import_onnx(
    source: ModelSource,
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    dims: Mapping[str, Range] | None = None,
) -> ModuleOp:
    """Imports an ONNX model (path, bytes or ModelProto) as `graph` IR.

    `input_shapes` overrides the shapes of named inputs (-1: a dynamic dim,
    the model's symbol for it if it names one). `dims` gives symbols their
    ranges (`{"S": (1, 512)}`, `(1, None)`: no upper bound); a range of one
    size (`{"N": (8, 8)}`) pins the symbol to it. Raises `EmberError`
    subclasses with a one-line message for bad models.
    """
    model = load_model(source)
    return OnnxImporter(model, describe_source(source), input_shapes or {}, dims or {}).run()


def source_name(node: onnx.NodeProto, index: int) -> str:
    """The name the ops of `node` carry as their location: the PyTorch module
    path a torch export recorded (`layer1.0.conv1`; for an op of the top
    module, torch's name for it: `relu`), else the node's name, else its
    first output's, else its type and position."""
    scopes = next((p.value for p in node.metadata_props if p.key == TORCH_NAME_SCOPES), "")
    if scopes:
        try:
            path = ast.literal_eval(scopes)
        except (ValueError, SyntaxError):
            path = []
        if isinstance(path, list) and path:
            modules = [str(p) for p in path[:-1] if p]
            return modules[-1] if modules else str(path[-1])
    if node.name:
        return node.name
    first = next((o for o in node.output if o), "")
    return first or f"{node.op_type}_{index}"


def sanitize_name(name: str) -> str:
    """An SSA name hint for an ONNX tensor name (`gpu_0/conv1_w_0` -> `gpu_0_conv1_w_0`)."""
    cleaned = re.sub(r"[^\w$.-]", "_", name)
    return cleaned if re.match(r"[A-Za-z_$.-]", cleaned) else f"v{cleaned}"


def _declared_dims(tensor: onnx.TypeProto.Tensor) -> list[int]:
    """The dims a value info declares; a named or missing dim is unknown."""
    return [d.dim_value if d.HasField("dim_value") else DYNAMIC for d in tensor.shape.dim]


def domain_of(node: onnx.NodeProto) -> str:
    """The node's domain as `OpSpec.domain` spells it (ai.onnx for "")."""
    return ONNX_DOMAIN if node.domain in ("", ONNX_DOMAIN) else node.domain


def op_class_of(node: onnx.NodeProto) -> type[GraphOp] | None:
    """The `graph` op a node becomes, found by (domain, op type); None for an
    op Ember does not model (or one `upgrade` rewrites first)."""
    return IMPORTABLE_OPS.get((domain_of(node), node.op_type))


def tensor_array(tensor: onnx.TensorProto, what: str) -> np.ndarray:
    """The NumPy array of a TensorProto; `what` names it (file and tensor) in errors."""
    try:
        element_type_from_onnx(tensor.data_type)
    except UnsupportedTypeError as error:
        raise UnsupportedModelError(f"{what}: {error}") from None
    try:
        return numpy_helper.to_array(tensor)
    except (ValueError, TypeError, KeyError) as error:
        raise InvalidModelError(
            f"{what}: its data does not match its dims {list(tensor.dims)} ({error})"
        ) from None


def _decoded(value: bytes, what: str) -> str:
    try:
        return value.decode()
    except UnicodeDecodeError:
        raise InvalidModelError(f"{what}: {value!r} is not valid UTF-8") from None


PREVIEW_DOMAIN = "ai.onnx.preview"


def _is_flex_attention(node: onnx.NodeProto) -> bool:
    """ai.onnx.preview's FlexAttention, which the importer expands (its
    modifier subgraphs inlined)."""
    return (node.domain, node.op_type) == (PREVIEW_DOMAIN, "FlexAttention")


def _attribute_values(node: onnx.NodeProto, where: str) -> dict[str, Any]:
    """The node's attributes as Python values; `where` names the file and node."""
    values: dict[str, Any] = {}
    for attr in node.attribute:
        what = f"{where}: attribute '{attr.name}'"
        if attr.type == onnx.AttributeProto.GRAPH and (
            node.op_type in CONTROL_FLOW_OPS or _is_flex_attention(node)
        ):
            continue  # imported as a region, or inlined
        if attr.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS):
            raise UnsupportedModelError(f"{where}: subgraph attribute '{attr.name}'")
        try:
            value = helper.get_attribute_value(attr)
        except ValueError as error:
            raise InvalidModelError(f"{what}: {error}") from None
        if isinstance(value, onnx.TensorProto):
            value = tensor_array(value, what)
        elif isinstance(value, bytes):
            value = _decoded(value, what)
        elif isinstance(value, list) and value and isinstance(value[0], bytes):
            value = [_decoded(v, what) for v in value]
        values[attr.name] = value
    return values


class OnnxImporter:
    """Imports one model. Before building any IR it checks, in this order, that
    every name is UTF-8, that the opsets and every op are supported (listing all
    unsupported ops at once, by domain and type), and that the model obeys ONNX's rules (see
    `validate`: Ember's own single-assignment check, then `onnx.checker` on each
    node and initializer; why not `check_model`, and its cost, are noted there). Shape-level rules and the per-tensor
    size limit (`MAX_TENSOR_BYTES`) are checked op by op as types are inferred.
    """

    def __init__(
        self,
        model: ModelProto,
        where: str,
        input_shapes: Mapping[str, Sequence[int]],
        dims: Mapping[str, Range],
    ):
        self.model = model
        self.where = where
        self.input_shapes = dict(input_shapes)
        self.dims = dict(dims)
        self.location = UNKNOWN_LOC  # of the node being imported
        for name, bounds in self.dims.items():
            problem = range_problem(*bounds)
            if problem:
                raise EmberError(f"{where}: --dim {name}: {problem}")
        self.pinned = {name: low for name, (low, high) in self.dims.items() if low == high}
        self.seen: set[str] = set()
        self.values: dict[str, SSAValue] = {}
        self.known: dict[SSAValue, np.ndarray] = {}
        self.symbols: dict[str, Range] = {}
        self.param_names = {
            d.dim_param for i in model.graph.input if i.type.HasField("tensor_type")
            for d in i.type.tensor_type.shape.dim if d.dim_param
        }  # fmt: skip
        check_names(model, where)
        self.opsets = {o.domain or ONNX_DOMAIN: o.version for o in model.opset_import}
        self.opset = self._check_opset()

    # ---------------------------------------------------------------- driver
    def run(self) -> ModuleOp:
        if self.model.functions:
            try:
                self.model = onnx.inliner.inline_local_functions(self.model)
            except (RuntimeError, ValueError, onnx.checker.ValidationError) as error:
                message = " ".join(str(error).split())
                raise InvalidModelError(
                    f"{self.where}: cannot inline model functions: {message}"
                ) from None
        graph = self.model.graph
        self._check_supported()
        validate(self.model, self.where)
        initializers = {t.name for t in graph.initializer}
        inputs = [i for i in graph.input if i.name not in initializers]
        unknown = set(self.input_shapes) - {i.name for i in inputs}
        if unknown:
            raise EmberError(
                f"{self.where}: --input-shape names unknown input(s) {', '.join(sorted(unknown))}; "
                f"inputs are {', '.join(i.name for i in inputs)}"
            )
        input_types = [self._input_type(i) for i in inputs]
        unknown = set(self.dims) - self.seen
        if unknown:
            known = ", ".join(sorted(self.seen)) or "none"
            raise EmberError(
                f"{self.where}: --dim names unknown symbol(s) {', '.join(sorted(unknown))}; "
                f"the model's symbols are {known}"
            )
        block = Block(arg_types=input_types)
        for arg, info in zip(block.args, inputs):
            arg.name_hint = sanitize_name(info.name)
            self.values[info.name] = arg
        self.builder = Builder(InsertPoint.at_end(block))
        for tensor in graph.initializer:
            what = f"{self.where}: initializer '{tensor.name}'"
            self._constant(tensor.name, tensor_array(tensor, what))
        used = self._used_names()
        with in_ranges(self.symbols):
            for index, proto in enumerate(graph.node):
                self._import_node(proto, index, used)
        outputs = [self._output(info) for info in graph.output]
        self.builder.insert(ReturnOp(*outputs))
        func = FuncOp(
            "main",
            (input_types, [v.type for v in outputs]),
            Region(block),
            arg_attrs=self._name_attrs(i.name for i in inputs),
            res_attrs=self._name_attrs(o.name for o in graph.output),
        )
        if self.symbols:
            func.attributes[SYMBOLS_ATTR] = symbols_attribute(self.symbols)
        return ModuleOp([func])

    @staticmethod
    def _name_attrs(names: Any) -> ArrayAttr[DictionaryAttr]:
        return ArrayAttr([DictionaryAttr({ONNX_NAME: StringAttr(n)}) for n in names])

    # ------------------------------------------------------------- checking
    def _check_opset(self) -> int:
        """The model's ai.onnx opset (MAX_OPSET for a model with no ai.onnx node
        that imports none: one of ai.onnx.ml ops only, say)."""
        opset = self.opsets.get(ONNX_DOMAIN)
        if opset is None:
            if all(domain_of(node) != ONNX_DOMAIN for node in self.model.graph.node):
                return MAX_OPSET
            raise UnsupportedModelError(f"{self.where}: the model imports no ai.onnx opset")
        if opset < MIN_OPSET and self._unchanged_since(opset):
            return MIN_OPSET
        if not MIN_OPSET <= opset <= MAX_OPSET:
            raise UnsupportedModelError(
                f"{self.where}: unsupported opset {opset} "
                f"(Ember supports ai.onnx opsets {MIN_OPSET} to {MAX_OPSET})"
            )
        return opset

    def _unchanged_since(self, opset: int) -> bool:
        """Whether every ai.onnx node of the graph means the same at `opset` as
        at MIN_OPSET (its schema was not revised in between): such a model is
        read as a MIN_OPSET one."""
        for node in self.model.graph.node:
            if domain_of(node) != ONNX_DOMAIN:
                continue
            try:
                old = onnx.defs.get_schema(node.op_type, opset).since_version
                new = onnx.defs.get_schema(node.op_type, MIN_OPSET).since_version
            except onnx.defs.SchemaError:
                return False
            if old != new:
                return False
        return True

    def _check_supported(self) -> None:
        """Lists every unsupported op type with the nodes that use it (an op of
        another domain as `domain.Type`), after checking the opset of each
        other domain the nodes use."""
        unsupported: dict[str, list[str]] = {}
        for index, node in _all_nodes(self.model.graph):
            domain = domain_of(node)
            if domain == ONNX_DOMAIN:
                if (node.op_type in REWRITTEN_OPS or node.op_type in CONTROL_FLOW_OPS
                        or op_class_of(node) is not None):  # fmt: skip
                    continue
                op = node.op_type
            else:
                if op_class_of(node) is not None:
                    self._check_domain_op(node, index)
                    continue
                if _is_flex_attention(node):
                    continue  # its definition's ops, imported in its place
                op = f"{node.domain}.{node.op_type}"
            unsupported.setdefault(op, []).append(node.name or f"#{index}")
        if unsupported:
            listing = "; ".join(
                f"{op} (node{'s' if len(names) > 1 else ''} {', '.join(repr(n) for n in names)})"
                for op, names in sorted(unsupported.items())
            )
            raise UnsupportedModelError(f"{self.where}: unsupported ops: {listing}")

    def _check_domain_op(self, node: onnx.NodeProto, index: int) -> None:
        """The model imports the node's domain (other than ai.onnx) at a version
        Ember reads, where the op means what its newest schema says."""
        domain, label = node.domain, node_label(node, index)
        version = self.opsets.get(domain)
        if version is None:
            raise InvalidModelError(
                f"{self.where}: {label}: domain {domain} is not among the model's opset imports"
            )
        low, high = IMPORTED_DOMAINS[domain]
        if not low <= version <= high:
            raise UnsupportedModelError(
                f"{self.where}: unsupported {domain} opset {version} "
                f"(Ember supports {domain} opsets {low} to {high})"
            )
        newest = onnx.defs.get_schema(node.op_type, domain).since_version
        try:
            since = onnx.defs.get_schema(node.op_type, version, domain).since_version
        except onnx.defs.SchemaError:
            since = None
        if since != newest:
            raise UnsupportedModelError(
                f"{self.where}: {label}: Ember supports {domain}.{node.op_type} as "
                f"{domain} opset {newest} defines it, not opset {version}"
            )

    def _used_names(self) -> set[str]:
        """Every name a node reads, in the graph or in any subgraph (a
        subgraph reads values of the graphs around it), and the outputs."""
        used = {name for _, node in _all_nodes(self.model.graph) for name in node.input}
        used |= {o.name for g in _all_graphs(self.model.graph) for o in g.output}
        return used

    # ----------------------------------------------------------------- types
    def _input_type(self, info: ValueInfoProto) -> TensorType:
        if not info.type.HasField("tensor_type"):
            raise UnsupportedModelError(f"{self.where}: input '{info.name}' is not a tensor")
        tensor = info.type.tensor_type
        try:
            element_type = element_type_from_onnx(tensor.elem_type)
        except UnsupportedTypeError as error:
            readers = [node_label(node, index) for index, node in enumerate(self.model.graph.node)
                       if info.name in node.input]  # fmt: skip
            read_by = f" (read by {readers[0]})" if readers else ""
            raise UnsupportedModelError(
                f"{self.where}: input '{info.name}': {error}{read_by}"
            ) from None
        declared = list(tensor.shape.dim) if tensor.HasField("shape") else None
        if info.name in self.input_shapes:
            given = self.input_shapes[info.name]
            if declared is not None and len(declared) != len(given):
                raise ModelShapeError(
                    f"{self.where}: --input-shape gives input '{info.name}' rank {len(given)}, "
                    f"but the model declares rank {len(declared)}"
                )
            dims: list[Dim] = [
                d if d >= 0 else self._symbol(info.name, axis, declared[axis] if declared else None)
                for axis, d in enumerate(given)
            ]
        elif declared is None:
            raise ModelShapeError(
                f"{self.where}: input '{info.name}' has no declared rank; give one with "
                f"--input-shape {info.name}=..."
            )
        else:
            dims = [d.dim_value if d.HasField("dim_value") else self._symbol(info.name, axis, d)
                    for axis, d in enumerate(declared)]  # fmt: skip
        input_type = tensor_type(element_type, dims)
        problem = type_size_problem(input_type)
        if problem:
            raise TensorTooLargeError(f"{self.where}: input '{info.name}': {problem}")
        return input_type

    def _symbol(
        self, input_name: str, axis: int, dim: onnx.TensorShapeProto.Dimension | None
    ) -> Dim:
        """The symbol of a dynamic input dim: its `dim_param`, or a fresh one
        named after the input and axis (`x_0`) where it has none."""
        if dim is not None and dim.dim_param:
            symbol = dim_from_name(dim.dim_param)
        else:
            name = symbol_name(f"{input_name}_{axis}")
            while name in self.param_names:
                name += "_"
            symbol = SymExpr.symbol(name)
        names = symbol.symbols()
        self.seen |= names
        for name in names - set(self.pinned):
            self.symbols.setdefault(name, self.dims.get(name, DEFAULT_RANGE))
        return symbol.substitute(self.pinned) if names & set(self.pinned) else symbol

    def _declared_type(self, info: ValueInfoProto) -> TensorType | None:
        tensor = info.type.tensor_type
        if not info.type.HasField("tensor_type") or not tensor.HasField("shape"):
            return None
        try:
            element_type = element_type_from_onnx(tensor.elem_type)
        except UnsupportedTypeError:
            return None
        return tensor_type(element_type, _declared_dims(tensor))

    # ----------------------------------------------------------------- nodes
    def _constant(self, name: str, array: np.ndarray) -> SSAValue:
        try:
            attr = dense_from_array(array)
        except UnsupportedTypeError as error:
            raise UnsupportedModelError(f"{self.where}: tensor '{name}': {error}") from None
        op = self.builder.insert(ConstantOp.build(result_types=[attr.get_type()],
                                                  properties={"value": attr}))  # fmt: skip
        op.results[0].name_hint = sanitize_name(name)
        self.values[name] = op.results[0]
        if array.size <= 4096:
            self.known[op.results[0]] = array
        return op.results[0]

    def _value(self, name: str, label: str) -> SSAValue:
        if name not in self.values:
            raise ModelLoadError(
                f"{self.where}: {label}: input '{name}' is not produced by any earlier node, "
                "input or initializer"
            )
        return self.values[name]

    def _type_of(self, name: str) -> TensorType:
        value_type = self.values[name].type if name in self.values else None
        if not isinstance(value_type, TensorType):
            raise ModelLoadError(f"{self.where}: tensor '{name}' is not defined")
        return value_type

    def _import_node(self, proto: onnx.NodeProto, index: int, used: set[str]) -> None:
        label = node_label(proto, index)
        self.location = name_location(source_name(proto, index))
        if domain_of(proto) == ONNX_DOMAIN and proto.op_type in CONTROL_FLOW_OPS:
            self._import_control_flow(proto, label, used)
            return
        if _is_flex_attention(proto):
            self._import_flex_attention(proto, f"{self.where}: {label}", used)
            return
        node = Node(proto.op_type, proto.name, list(proto.input),
                    self._read_outputs(proto, used),
                    _attribute_values(proto, f"{self.where}: {label}"), label)  # fmt: skip
        op_class = op_class_of(proto)
        if domain_of(proto) != ONNX_DOMAIN and op_class is not None:
            self._import_canonical(node, used, op_class)  # upgrade rewrites ai.onnx nodes only
            return
        upgraded = upgrade(node, self.opset, self._type_of)
        for name, array in upgraded.constants.items():
            self._constant(name, array)
        for canonical in upgraded.nodes:
            self._import_canonical(canonical, used)

    # ---------------------------------------------------------- control flow
    def _import_control_flow(self, proto: onnx.NodeProto, label: str, used: set[str]) -> None:
        """If, Loop and Scan: their subgraphs become the regions of
        `graph.if`, `graph.loop` and `graph.scan`."""
        where = f"{self.where}: {label}"
        graphs = {a.name: a.g for a in proto.attribute if a.type == onnx.AttributeProto.GRAPH}
        attrs = _attribute_values(proto, where)
        inputs = list(proto.input)
        location = self.location
        known = self._known_condition(inputs[0]) if proto.op_type == "If" else None
        if known is not None:
            taken = "then_branch" if known else "else_branch"
            results = self._inline_branch(graphs[taken], where, used)
        elif proto.op_type == "Scan" and self.opset < 9:
            results = self._import_batched_scan(proto, where, attrs, graphs["body"], used)
        else:
            if proto.op_type == "If":
                op: Operation = self._import_if(where, inputs, graphs, used)
            elif proto.op_type == "Loop":
                op = self._import_loop(where, inputs, graphs["body"], used)
            else:
                op = self._import_scan(where, inputs, attrs, graphs["body"], used)
            op.location = location
            self.builder.insert(op)
            results = list(op.results)
        self.location = location
        if len(proto.output) > len(results):
            raise InvalidModelError(
                f"{where}: {len(proto.output)} outputs, but the subgraph gives {len(results)}"
            )
        for name, value in zip(proto.output, results):
            if name:
                value.name_hint = sanitize_name(name)
                self.values[name] = value

    def _import_batched_scan(self, proto: onnx.NodeProto, where: str, attrs: dict[str, Any],
                             body: onnx.GraphProto, used: set[str]) -> list[SSAValue]:  # fmt: skip
        """Scan-8, whose states and scan inputs carry a leading batch axis (the
        sequence axis is 1), as one opset-9 Scan per batch entry, its
        results stacked: a static batch size and no `sequence_lens` needed."""
        lengths, *inputs = list(proto.input)
        if lengths:
            raise UnsupportedModelError(f"{where}: Scan-8 with sequence_lens is not supported")
        batch = self._type_of(inputs[0]).get_shape()[0] if inputs else DYNAMIC
        if batch == DYNAMIC:
            raise InputDependentError(f"{where}: Scan-8 needs a static batch size")
        count = int(attrs["num_scan_inputs"])
        directions = {"scan_input_directions": attrs["directions"]} if "directions" in attrs else {}
        location = self.location
        per_entry: list[list[str]] = []
        for entry in range(batch):
            prefix = f"{proto.output[0]}__batch{entry}"
            self._constant(f"{prefix}_index", np.array(entry, np.int64))
            sliced = [f"{prefix}_in{i}" for i in range(len(inputs))]
            for name, part in zip(inputs, sliced):
                self._import_canonical(Node("Gather", "", [name, f"{prefix}_index"], [part],
                                            {"axis": 0}, where), used)  # fmt: skip
            attrs_9 = {"num_scan_inputs": count, **directions}
            op = self._import_scan(where, sliced, attrs_9, body, used)
            op.location = location
            self.builder.insert(op)
            names = [f"{prefix}_out{i}" for i in range(len(op.results))]
            self.values.update(zip(names, op.results))
            per_entry.append(names)
        self._constant(f"{proto.output[0]}__batch_axis", np.array([0], np.int64))
        results = []
        for index, parts in enumerate(zip(*per_entry)):
            stacked = [f"{part}_stacked" for part in parts]
            for part, name in zip(parts, stacked):
                self._import_canonical(Node("Unsqueeze", "", [part, f"{proto.output[0]}__batch_axis"],
                                            [name], {}, where), used)  # fmt: skip
            joined = f"{proto.output[0]}__batch_result{index}"
            self._import_canonical(Node("Concat", "", stacked, [joined], {"axis": 0}, where), used)
            results.append(self.values[joined])
        return results

    def _known_condition(self, name: str) -> bool | None:
        value = self.known.get(self.values[name]) if name in self.values else None
        return None if value is None or value.size != 1 else bool(value.reshape(-1)[0])

    def _inline_branch(self, graph: onnx.GraphProto, where: str, used: set[str],
                       inputs: Sequence[SSAValue] = ()) -> list[SSAValue]:  # fmt: skip
        """The branch an If with a condition known at import takes, imported
        in its place: the other branch may not even hold for these shapes
        (AffineGrid's function picks its 2-D or 3-D branch from the rank).
        `inputs` are the values of the subgraph's inputs (a FlexAttention
        modifier's one tensor)."""
        if len(graph.input) != len(inputs):
            raise InvalidModelError(
                f"{where}: subgraph '{graph.name}' takes {len(graph.input)} inputs, "
                f"expected {len(inputs)}"
            )
        outer_values = self.values
        self.values = dict(outer_values)
        self.values.update((info.name, value) for info, value in zip(graph.input, inputs))
        try:
            for tensor in graph.initializer:
                self._constant(tensor.name, tensor_array(tensor, f"{where}: '{tensor.name}'"))
            for index, proto in enumerate(graph.node):
                self._import_node(proto, index, used)
            return [self._value(o.name, f"{where}: subgraph output") for o in graph.output]
        finally:
            self.values = outer_values

    def _import_flex_attention(self, proto: onnx.NodeProto, where: str, used: set[str]) -> None:
        """ai.onnx.preview's FlexAttention as the ops of its definition (as
        onnx's reference computes it): Q and K each scaled by the square root
        of `scale`, K and V heads repeated for grouped queries, the scores
        in `softmax_precision` (f32 for half inputs), `score_mod` and
        `prob_mod` inlined around the Softmax, the result in V's type."""
        graphs = {a.name: a.g for a in proto.attribute if a.type == onnx.AttributeProto.GRAPH}
        attrs = _attribute_values(proto, where)
        q, k, v = list(proto.input[:3])
        shapes = [self._type_of(name).get_shape() for name in (q, k, v)]
        if any(len(shape) != 4 for shape in shapes):
            raise ModelShapeError(f"{where}: FlexAttention takes rank-4 Q, K and V")
        (_, heads, _, size), (_, kv_heads, _, _), _ = shapes
        if DYNAMIC in (heads, kv_heads, size) or heads % kv_heads:
            raise ModelShapeError(
                f"{where}: FlexAttention needs static head counts, Q's a multiple of K's, "
                f"and a static head size (got {heads}, {kv_heads} and {size})"
            )
        prefix = f"{proto.output[0]}__flex"
        dtype = numpy_dtype(self._type_of(q).element_type)
        half = dtype.itemsize < 4
        precision = attrs.get("softmax_precision", onnx.TensorProto.FLOAT if half else
                              helper.np_dtype_to_tensor_dtype(dtype))  # fmt: skip
        scale = attrs.get("scale", 1.0 / np.sqrt(size))
        self._constant(f"{prefix}_scale", np.array(np.sqrt(np.float32(scale)), dtype=dtype))

        def node(op: str, inputs: list[str], name: str, **node_attrs: Any) -> str:
            self._import_canonical(Node(op, "", inputs, [f"{prefix}_{name}"], node_attrs, where),
                                   used)  # fmt: skip
            return f"{prefix}_{name}"

        def grouped(name: str, label: str) -> str:
            if heads == kv_heads:
                return name
            last = self._type_of(name).get_shape()[3]
            if last == DYNAMIC:
                raise ModelShapeError(
                    f"{where}: grouped FlexAttention needs a static {label} head size"
                )
            self._constant(f"{prefix}_{label}_axis", np.array([2], np.int64))
            self._constant(f"{prefix}_{label}_repeat",
                           np.array([1, 1, heads // kv_heads, 1, 1], np.int64))  # fmt: skip
            wide = node("Unsqueeze", [name, f"{prefix}_{label}_axis"], f"{label}_wide")
            repeated = node("Expand", [wide, f"{prefix}_{label}_repeat"], f"{label}_repeated")
            self._constant(f"{prefix}_{label}_shape", np.array([0, heads, -1, last], np.int64))
            return node("Reshape", [repeated, f"{prefix}_{label}_shape"], f"{label}_grouped")

        def modified(name: str, label: str) -> str:
            if label not in graphs:
                return name
            (result,) = self._inline_branch(graphs[label], where, used, [self.values[name]])
            self.values[f"{prefix}_{label}"] = result
            return f"{prefix}_{label}"

        queries = node("Mul", [q, f"{prefix}_scale"], "q")
        keys = node("Mul", [grouped(k, "k"), f"{prefix}_scale"], "k")
        keys = node("Transpose", [keys], "kt", perm=[0, 1, 3, 2])
        scores = node("MatMul", [queries, keys], "scores")
        if helper.np_dtype_to_tensor_dtype(dtype) != precision:
            scores = node("Cast", [scores], "scores_cast", to=precision)
        probs = node("Softmax", [modified(scores, "score_mod")], "probs", axis=-1)
        values = node("Cast", [grouped(v, "v")], "v_cast", to=precision)
        output = node("MatMul", [modified(probs, "prob_mod"), values], "output")
        to = helper.np_dtype_to_tensor_dtype(numpy_dtype(self._type_of(v).element_type))
        self._import_canonical(Node("Cast", "", [output], [proto.output[0]], {"to": to}, where),
                               used)  # fmt: skip

    def _import_subgraph(self, graph: onnx.GraphProto, arg_types: Sequence[Attribute],
                         where: str, used: set[str]) -> Region:  # fmt: skip
        """One block: `graph`'s inputs as its arguments (of `arg_types`), its
        nodes, and a `graph.yield` of its outputs. Names of the enclosing
        graphs stay visible: a subgraph uses them as values from above."""
        if len(graph.input) != len(arg_types):
            raise InvalidModelError(
                f"{where}: subgraph '{graph.name}' takes {len(graph.input)} inputs, "
                f"expected {len(arg_types)}"
            )
        block = Block(arg_types=arg_types)
        outer_builder, outer_values = self.builder, self.values
        self.builder = Builder(InsertPoint.at_end(block))
        self.values = dict(outer_values)
        try:
            for arg, info in zip(block.args, graph.input):
                arg.name_hint = sanitize_name(info.name)
                self.values[info.name] = arg
            for tensor in graph.initializer:
                self._constant(tensor.name, tensor_array(tensor, f"{where}: '{tensor.name}'"))
            for index, proto in enumerate(graph.node):
                self._import_node(proto, index, used)
            outputs = [self._value(o.name, f"{where}: subgraph output") for o in graph.output]
            self.builder.insert(YieldOp(*outputs))
        finally:
            self.builder, self.values = outer_builder, outer_values
        return Region(block)

    def _import_if(self, where: str, inputs: list[str], graphs: dict[str, onnx.GraphProto],
                   used: set[str]) -> IfOp:  # fmt: skip
        cond = self._value(inputs[0], where)
        then_branch = self._import_subgraph(graphs["then_branch"], [], where, used)
        else_branch = self._import_subgraph(graphs["else_branch"], [], where, used)
        probe = IfOp(cond, [], then_branch, else_branch)
        try:
            result_types = probe.infer_result_types()
        except RankMismatch as error:
            raise InputDependentError(
                f"{where}: {error}: the condition, known only at run time, decides the rank"
            ) from None
        except VerifyException as error:
            raise ModelShapeError(f"{where}: {error}") from None
        finally:
            regions = [probe.detach_region(0), probe.detach_region(0)]
            probe.erase()
        return IfOp(cond, result_types, *regions)

    def _import_loop(self, where: str, inputs: list[str], body: onnx.GraphProto,
                     used: set[str]) -> LoopOp:  # fmt: skip
        trips = self._value(inputs[0], where) if inputs and inputs[0] else None
        cond = self._value(inputs[1], where) if len(inputs) > 1 and inputs[1] else None
        carried = [self._value(n, where) for n in inputs[2:]]
        op = self._body_to_fixed_point(
            where, body, lambda region: LoopOp(trips, cond, carried, [], region), used
        )
        result_types = op.infer_result_types(static_trip_count(op, self.known.get))
        return LoopOp(trips, cond, carried, result_types, _taken_body(op))

    def _import_scan(self, where: str, inputs: list[str], attrs: dict[str, Any],
                     body: onnx.GraphProto, used: set[str]) -> ScanOp:  # fmt: skip
        values = [self._value(n, where) for n in inputs if n]
        count = int(attrs.pop("num_scan_inputs"))
        axes = {k: [int(x) for x in v] for k, v in attrs.items()}
        op = self._body_to_fixed_point(
            where, body, lambda region: ScanOp(values, count, [], region, axes), used
        )
        return ScanOp(values, count, op.infer_result_types(), _taken_body(op), axes)

    def _body_to_fixed_point(
        self, where: str, body: onnx.GraphProto, build: Callable[[Region], LoopT], used: set[str]
    ) -> LoopT:
        """The op `build` makes of `body`, imported with each carried
        argument's type widened to cover what the body yields for it until
        the types settle."""
        try:
            probe = build(Region(Block()))
            arg_types = initial_arguments(probe)
            probe.erase()
            for _ in range(MAX_BODY_TYPE_ROUNDS):
                op = build(self._import_subgraph(body, arg_types, where, used))
                widened = widened_arguments(op, arg_types)
                if widened == arg_types:
                    return op
                op.erase()  # with its body, whose ops use values from above
                arg_types = widened
        except VerifyException as error:
            raise ModelShapeError(f"{where}: {error}") from None
        raise ModelShapeError(f"{where}: the carried values' types do not settle")

    @staticmethod
    def _read_outputs(proto: onnx.NodeProto, used: set[str]) -> list[str]:
        """The node's outputs, those past the ones its `graph` op models blanked
        when nothing reads them: an upgrade rule that computes such an output
        (Dropout's mask) then leaves it out."""
        op_class = op_class_of(proto)
        results = op_class.SPEC.results if op_class is not None else ()
        if op_class is None or any(r.arity is Arity.VARIADIC for r in results):
            return list(proto.output)
        # Optional results (MaxPool's Indices) are computed only when read.
        modelled = sum(1 for r in results if r.arity is Arity.SINGLE)
        return [name if i < modelled or name in used else ""
                for i, name in enumerate(proto.output)]  # fmt: skip

    def _import_canonical(
        self, node: Node, used: set[str], op_class: type[GraphOp] | None = None
    ) -> None:
        """Builds the op of `node`: `op_class`, else the ai.onnx op of its type."""
        if op_class is None and node.op_type == "Constant":
            self._constant(node.outputs[0], node.attrs["value"])
            return
        op_class = op_class or IMPORTABLE_OPS[(ONNX_DOMAIN, node.op_type)]
        spec = op_class.SPEC
        groups = self._operand_groups(node, spec)
        attrs = self._attributes(node, spec)
        num_results = self._num_results(node, spec, used)
        context = ShapeContext(
            spec,
            {k: [v.type for v in vs] for k, vs in groups.items()},  # type: ignore[misc]
            {k: [self.known.get(v) for v in vs] for k, vs in groups.items()},
            attrs,
            num_results,
        )
        try:
            result_types = infer_types(context)
        except UnknownValueError as error:
            raise InputDependentError(f"{self.where}: {node.label}: {error}") from None
        except ShapeError as error:
            raise ModelShapeError(f"{self.where}: {node.label}: {error}") from None
        for name, result_type in zip(node.outputs, result_types):
            problem = type_size_problem(result_type)
            if problem:
                raise TensorTooLargeError(f"{self.where}: {node.label}: output '{name}': {problem}")
        operands: list[SSAValue | list[SSAValue]] = [
            groups[o.name] if o.arity is not Arity.SINGLE else groups[o.name][0]
            for o in spec.operands
        ]
        results = op_class.group_result_types(list(result_types))  # the variadic or optional group
        properties = {
            name: attribute_from_value(spec.attribute(name).kind, value)
            for name, value in attrs.items()
        }
        op = self.builder.insert(
            op_class.build(operands=operands, result_types=results, properties=properties)
        )
        op.location = self.location
        for name, value in zip(node.outputs, op.results):
            if not name:  # an output the node does not give (LSTM's Y, say)
                continue
            value.name_hint = sanitize_name(name)
            self.values[name] = value
        values = propagate_value(op, context)
        for value, array in zip(op.results, values or ()):
            self.known[value] = array

    def _operand_groups(self, node: Node, spec: OpSpec) -> dict[str, list[SSAValue]]:
        groups: dict[str, list[SSAValue]] = {}
        position = 0
        for operand in spec.operands:
            if operand.arity is Arity.VARIADIC:
                names = [n for n in node.inputs[position:] if n]
                groups[operand.name] = [self._value(n, node.label) for n in names]
                position = len(node.inputs)
                continue
            name = node.input(position)
            position += 1
            if not name:
                if operand.arity is Arity.SINGLE:
                    raise ModelLoadError(
                        f"{self.where}: {node.label}: required input '{operand.name}' is missing"
                    )
                groups[operand.name] = []
            else:
                groups[operand.name] = [self._value(name, node.label)]
        extra = [n for n in node.inputs[position:] if n]
        if extra:
            raise UnsupportedModelError(
                f"{self.where}: {node.label}: {len(node.inputs)} inputs, but {spec.op_name} "
                f"takes {position}"
            )
        return groups

    def _attributes(self, node: Node, spec: OpSpec) -> dict[str, Any]:
        known = {a.name: a for a in spec.attributes}
        attrs: dict[str, Any] = {}
        for name, value in node.attrs.items():
            if name not in known:
                raise UnsupportedModelError(
                    f"{self.where}: {node.label}: attribute '{name}' is not supported"
                )
            if known[name].kind is AttrKind.TYPE:
                try:
                    value = element_type_from_onnx(value)
                except UnsupportedTypeError as error:
                    raise UnsupportedModelError(f"{self.where}: {node.label}: {error}") from None
            attrs[name] = value
        return attrs

    def _num_results(self, node: Node, spec: OpSpec, used: set[str]) -> int:
        """Every output of a variadic result; the single results, and the
        optional ones up to the last output the node gives."""
        if any(r.arity is Arity.VARIADIC for r in spec.results):
            return len(node.outputs)
        modelled = len(spec.results)
        for extra in node.outputs[modelled:]:
            if extra and extra in used:
                raise UnsupportedModelError(
                    f"{self.where}: {node.label}: output '{extra}' is used, but Ember models "
                    f"only the first {modelled} output(s) of {node.op_type}"
                )
        given = [i + 1 for i, name in enumerate(node.outputs[:modelled]) if name]
        fixed = sum(1 for r in spec.results if r.arity is Arity.SINGLE)
        return max([fixed, *given])

    def _output(self, info: ValueInfoProto) -> SSAValue:
        value = self._value(info.name, f"graph output '{info.name}'")
        declared = self._declared_type(info)
        if declared is None or not isinstance(value.type, TensorType) or self.input_shapes:
            # With overridden input shapes the declared output shapes are stale.
            return value
        if any(isinstance(d, SymExpr) for d in symbolic_shape(value.type)):
            # Exporters declare the output shapes of the sizes they traced with.
            return value
        if not types_compatible(value.type, declared):
            raise ModelShapeError(
                f"{self.where}: output '{info.name}' is declared "
                f"{format_shape(shape_of(declared))}x{declared.element_type}, but the graph "
                f"computes {format_shape(shape_of(value.type))}x{value.type.element_type}"
            )
        refined = refine(value.type, declared)
        if refined != value.type:
            value = Rewriter.replace_value_with_new_type(value, refined)
            self.values[info.name] = value
        return value


def _taken_body(op: Operation) -> Region:
    """The body of `op`, an op built only to read its types: the op is
    erased, so that it is not left among the users of its operands."""
    body = op.detach_region(0)
    op.erase()
    return body


def _all_graphs(graph: onnx.GraphProto) -> list[onnx.GraphProto]:
    """`graph` and every subgraph in it, at any depth."""
    graphs = [graph]
    for node in graph.node:
        for attr in node.attribute:
            subgraphs = [attr.g] if attr.type == onnx.AttributeProto.GRAPH else list(attr.graphs)
            for subgraph in subgraphs:
                graphs += _all_graphs(subgraph)
    return graphs


def _all_nodes(graph: onnx.GraphProto) -> list[tuple[int, onnx.NodeProto]]:
    """Every node of `graph` and of its subgraphs, with its index in its graph."""
    return [(i, node) for g in _all_graphs(graph) for i, node in enumerate(g.node)]


__all__ = ["import_onnx", "sanitize_name"]
