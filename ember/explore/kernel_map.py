"""Which graph node each kernel call of the compiled entry function comes
from, by the names values keep through the pipeline.

A kernel call reads the weights of the node it computes (`conv1_w` becomes
`conv1_w_hwio_packed` but keeps its stem) and writes the buffer of the
node's result (named as the graph value, `%r17`). So a call belongs to the
node whose weight it reads, else to the node whose result it writes (the
arguments its kernel stores to), else to a node whose result it reads.
Approximate by nature: a node matched by nothing shows no kernel.
"""

from __future__ import annotations

import re

from xdsl.dialects import memref, vector
from xdsl.dialects.func import CallOp, FuncOp
from xdsl.ir import BlockArgument, SSAValue

from ember.explore.graph_model import Graph
from ember.explore.naming import strip_rewrites

_VIEWS = (memref.ViewOp, memref.SubviewOp, memref.ReinterpretCastOp, memref.CollapseShapeOp,
          memref.ExpandShapeOp, memref.CastOp)  # fmt: skip
_STORES = (memref.StoreOp, vector.StoreOp)


def _unique(name: str) -> str:
    """A name without the `_1` the printer adds to keep names unique."""
    return re.sub(r"_\d+$", "", name)


def written_arguments(kernel: FuncOp) -> set[int]:
    """The indices of `kernel`'s arguments it stores to (directly or through views)."""
    written: set[int] = set()
    for op in kernel.walk():
        if isinstance(op, _STORES):
            value: SSAValue = op.operands[1]
            while not isinstance(value, BlockArgument) and isinstance(value.owner, _VIEWS):
                value = value.owner.operands[0]
            if isinstance(value, BlockArgument) and value.owner is kernel.body.block:
                written.add(value.index)
    return written


def kernel_calls(entry: FuncOp, kernels: dict[str, FuncOp]) -> list[CallOp]:
    return [op for op in entry.walk()
            if isinstance(op, CallOp) and op.callee.root_reference.data in kernels]  # fmt: skip


def map_kernels(graph: Graph, entry: FuncOp, kernels: dict[str, FuncOp]) -> dict[str, list[str]]:
    """Node id -> the kernel functions its calls run (in call order); every
    node of a cluster gets the cluster's kernels."""
    weights: dict[str, str] = {}
    results: dict[str, str] = {}
    readers: dict[str, set[str]] = {}
    for node in graph.nodes:
        for name in node.weights:
            readers.setdefault(strip_rewrites(name), set()).add(node.id)
    for node in graph.nodes:
        for name in node.weights:
            if len(readers[strip_rewrites(name)]) == 1:  # shared constants name no node
                weights[strip_rewrites(name)] = node.id
        for name in node.results:
            results.setdefault(_unique(name), node.id)
    found: dict[str, list[str]] = {}
    written_cache: dict[str, set[int]] = {}
    for call in kernel_calls(entry, kernels):
        callee = call.callee.root_reference.data
        if callee not in written_cache:
            written_cache[callee] = written_arguments(kernels[callee])
        names = [operand.name_hint or "" for operand in call.operands]
        node = next(
            (weights[strip_rewrites(n)] for n in names if n and strip_rewrites(n) in weights), None
        )
        if node is None:
            node = next((results[_unique(names[i])] for i in sorted(written_cache[callee])
                         if i < len(names) and _unique(names[i]) in results), None)  # fmt: skip
        if node is None:
            node = next(
                (results[_unique(n)] for n in reversed(names) if _unique(n) in results), None
            )
        if node is not None and callee not in found.setdefault(node, []):
            found[node].append(callee)
    by_cluster: dict[str, list[str]] = {}
    for node in graph.nodes:
        if node.cluster and node.id in found:
            by_cluster.setdefault(node.cluster, []).extend(
                k for k in found[node.id] if k not in by_cluster.get(node.cluster, [])
            )
    for node in graph.nodes:
        if node.cluster in by_cluster:
            found[node.id] = by_cluster[node.cluster]
    return found


def inherit_kernels(before: Graph, after: Graph) -> None:
    """Gives each node of the graph as imported the kernels of the optimised
    node that has its weights or its result's name, else, where it feeds one
    node only, that node's kernels."""
    weights: dict[str, list[str]] = {}
    results: dict[str, list[str]] = {}
    for node in after.nodes:
        if node.kernels:
            for name in node.weights:
                weights.setdefault(strip_rewrites(name), node.kernels)
            for name in node.results:
                results.setdefault(_unique(name), node.kernels)
    for node in before.nodes:
        found = [weights[strip_rewrites(n)] for n in node.weights if strip_rewrites(n) in weights]
        found += [results[_unique(n)] for n in node.results if _unique(n) in results]
        if found and node.op not in ("input", "output"):
            node.kernels = list(found[0])
    # A node folded into the one it feeds (a convolution into the BatchNorm
    # folded with it) ended in that node's kernels.
    consumers: dict[str, list[str]] = {}
    for source, target in before.edges:
        consumers.setdefault(source, []).append(target)
    by_id = {node.id: node for node in before.nodes}
    for node in reversed(before.nodes):
        fed = consumers.get(node.id, [])
        if not node.kernels and node.op not in ("input", "output") and len(fed) == 1:
            node.kernels = list(by_id[fed[0]].kernels)


__all__ = ["inherit_kernels", "kernel_calls", "map_kernels", "written_arguments"]
