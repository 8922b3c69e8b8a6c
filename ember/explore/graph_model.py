"""A model's graph as the explorer draws it: nodes, edges and clusters.

Read from the entry function of graph-level IR: each argument is an input
node, each op a node (constants are not drawn: a node names the weights it
reads), each value returned an output node. An op with an isolated region
of graph ops that run as one unit, `graph.fused` (a fusion group, one
kernel) or `npu.segment` (one NPU program), is a cluster of its inner ops,
their edges joined to the ops outside through the region's arguments and
yield.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from xdsl.dialects.builtin import ModuleOp, StringAttr, TensorType
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.traits import IsTerminator

from ember.dialects.graph import ConstantOp, FusedOp
from ember.dialects.npu.segment import SegmentOp
from ember.explore.naming import node_name


@dataclass
class Node:
    id: str
    name: str
    op: str
    """The op's kind (`conv_nhwc`), `input` or `output`."""
    shapes: str
    """Its results' types (`1x64x55x55xf32`)."""
    layout: str = ""
    kernels: list[str] = field(default_factory=list)
    """The kernel functions it ended in, where known."""
    cluster: str = ""
    weights: tuple[str, ...] = ()
    """The names of the constants it reads."""
    results: tuple[str, ...] = ()
    """The names of the values it defines."""


@dataclass
class Cluster:
    id: str
    label: str


@dataclass
class Graph:
    nodes: list[Node] = field(default_factory=list)
    edges: list[tuple[str, str]] = field(default_factory=list)
    clusters: list[Cluster] = field(default_factory=list)

    def node(self, node_id: str) -> Node:
        return next(node for node in self.nodes if node.id == node_id)


def format_type(type_: Attribute) -> str:
    """`tensor<1x3x224x224xf32>` -> `1x3x224x224xf32`."""
    if isinstance(type_, TensorType):
        dims = "x".join("?" if d < 0 else str(d) for d in type_.get_shape())
        return f"{dims}x{type_.element_type}" if dims else str(type_.element_type)
    return str(type_)


def describe_layout(op: Operation) -> str:
    """The activation layout an op works in, where the IR says it."""
    source, target = op.attributes.get("source"), op.attributes.get("target")
    if isinstance(source, StringAttr) and isinstance(target, StringAttr):
        return f"{source.data} -> {target.data}"
    short = op.name.rsplit(".", 1)[-1]
    for layout in ("nhwc", "nchwc", "nchw"):
        if short.endswith(f"_{layout}"):
            return layout.upper()
    return ""


def graph_of(module: ModuleOp) -> Graph:
    """The graph of `module`'s entry function (`@main`, or its only function)."""
    funcs = [op for op in module.ops if isinstance(op, FuncOp) and not op.is_declaration]
    func = next((f for f in funcs if f.sym_name.data in ("main", "ember_main")), funcs[0])
    graph = Graph()
    producers: dict[SSAValue, str] = {}
    for index, arg in enumerate(func.body.block.args):
        names = func.arg_attrs.data[index].data if func.arg_attrs else {}
        onnx_name = names.get("onnx.name")
        label = (
            onnx_name.data
            if isinstance(onnx_name, StringAttr)
            else arg.name_hint or f"input{index}"
        )
        graph.nodes.append(Node(f"in{index}", label, "input", format_type(arg.type),
                                results=(arg.name_hint,) if arg.name_hint else ()))  # fmt: skip
        producers[arg] = f"in{index}"
    counter = iter(range(1 << 30))
    _add_block(graph, func.body.block, producers, "", lambda: f"n{next(counter)}")
    return graph


def _add_block(graph: Graph, block: Block, producers: dict[SSAValue, str], cluster: str,
               new_id: Callable[[], str]) -> list[str | None]:  # fmt: skip
    """Adds the ops of `block` (in `cluster`); returns the producers of the
    values its terminator yields or returns."""
    for op in block.ops:
        if isinstance(op, ConstantOp):
            continue
        if op.has_trait(IsTerminator):
            sources = [producers.get(v) for v in op.operands]
            if isinstance(op, ReturnOp):
                for index, (value, source) in enumerate(zip(op.operands, sources)):
                    out = f"out{index}"
                    graph.nodes.append(Node(out, _output_name(op, index), "output",
                                            format_type(value.type)))  # fmt: skip
                    if source is not None:
                        graph.edges.append((source, out))
            return sources
        if isinstance(op, FusedOp | SegmentOp):
            cluster_id = f"cluster_{len(graph.clusters)}"
            label = (f"fused {op.kind.data}" if isinstance(op, FusedOp)
                     else f"npu segment {op.sym_name.data}")  # fmt: skip
            graph.clusters.append(Cluster(cluster_id, label))
            inner = dict(producers)
            for arg, operand in zip(op.body.block.args, op.operands):
                if operand in producers:
                    inner[arg] = producers[operand]
            first = len(graph.nodes)
            yielded = _add_block(graph, op.body.block, inner, cluster_id, new_id)
            if isinstance(op, SegmentOp):  # its ops end in the segment's program
                for node in graph.nodes[first:]:
                    node.kernels = [op.sym_name.data]
            for result, source in zip(op.results, yielded):
                if source is not None:
                    producers[result] = source
            continue
        node_id = new_id()
        weights = tuple(v.name_hint for v in op.operands
                        if isinstance(v.owner, ConstantOp) and v.name_hint)  # fmt: skip
        graph.nodes.append(Node(node_id, node_name(op), op.name.split(".", 1)[-1],
                                ", ".join(format_type(r.type) for r in op.results),
                                describe_layout(op), cluster=cluster, weights=weights,
                                results=tuple(r.name_hint for r in op.results if r.name_hint)))  # fmt: skip
        for operand in op.operands:
            source = producers.get(operand)
            if source is not None and (source, node_id) not in graph.edges:
                graph.edges.append((source, node_id))
        for result in op.results:
            producers[result] = node_id
    return []


def _output_name(op: ReturnOp, index: int) -> str:
    func = op.parent_op()
    if isinstance(func, FuncOp) and func.res_attrs is not None:
        name = func.res_attrs.data[index].data.get("onnx.name")
        if isinstance(name, StringAttr):
            return name.data
    return f"output{index}"


__all__ = ["Cluster", "Graph", "Node", "describe_layout", "format_type", "graph_of"]
