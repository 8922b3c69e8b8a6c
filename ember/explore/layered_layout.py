"""A layered (Sugiyama-style) layout of a directed graph, in plain Python:
the fallback the explorer draws with where Graphviz's `dot` is absent.

1. Layers by longest path: a node sits one layer below the lowest of its
   predecessors (edges against the topological order are ignored).
2. An edge spanning several layers gets a dummy node in each layer it
   crosses, so that it bends around the nodes there.
3. Order within a layer by barycentres: a few sweeps down and up, each
   node moved to the mean position of its neighbours in the layer before.
4. Coordinates: each layer packed left to right, then, layer by layer from
   the top, each node pulled towards the mean x of its upper neighbours
   as far as the order and the gaps allow.

Edges are polylines through their dummies. Good enough to read a network
of a few hundred nodes; `dot` does better (fewer crossings, splines).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

SWEEPS = 6
RANK_GAP = 34.0
NODE_GAP = 22.0
MARGIN = 12.0
DUMMY_WIDTH = 6.0


@dataclass
class Layout:
    positions: dict[str, tuple[float, float]]
    """Each node's centre."""
    routes: list[tuple[str, str, list[tuple[float, float]]]]
    """Each edge's polyline, from the bottom of its source to the top of its target."""
    width: float
    height: float


def longest_path_layers(ids: Sequence[str], edges: Sequence[tuple[str, str]]) -> dict[str, int]:
    """Each node's layer; edges that would close a cycle are ignored."""
    successors: dict[str, list[str]] = {i: [] for i in ids}
    indegree = dict.fromkeys(ids, 0)
    for source, target in edges:
        successors[source].append(target)
        indegree[target] += 1
    ready = [i for i in ids if indegree[i] == 0]
    order: list[str] = []
    while ready:
        node = ready.pop(0)
        order.append(node)
        for target in successors[node]:
            indegree[target] -= 1
            if indegree[target] == 0:
                ready.append(target)
    order += [i for i in ids if i not in set(order)]  # a cycle: left in the given order
    rank = {node: index for index, node in enumerate(order)}
    layer = dict.fromkeys(ids, 0)
    for node in order:
        for target in successors[node]:
            if rank[target] > rank[node]:
                layer[target] = max(layer[target], layer[node] + 1)
    return layer


def layered_layout(ids: Sequence[str], sizes: dict[str, tuple[float, float]],
                   edges: Sequence[tuple[str, str]]) -> Layout:  # fmt: skip
    """Positions for nodes `ids` of (width, height) `sizes` joined by `edges`."""
    layer = longest_path_layers(ids, edges)
    size = dict(sizes)
    chains: list[tuple[str, str, list[str]]] = []
    for number, (source, target) in enumerate(edges):
        if layer[target] <= layer[source]:
            continue
        dummies = []
        for step in range(layer[source] + 1, layer[target]):
            dummy = f"\0{number}.{step}"
            layer[dummy], size[dummy] = step, (DUMMY_WIDTH, 0.0)
            dummies.append(dummy)
        chains.append((source, target, dummies))
    layers: list[list[str]] = [[] for _ in range(max(layer.values(), default=-1) + 1)]
    for node in [*ids, *(d for _, _, ds in chains for d in ds)]:
        layers[layer[node]].append(node)
    upper: dict[str, list[str]] = {n: [] for n in layer}
    lower: dict[str, list[str]] = {n: [] for n in layer}
    for source, target, dummies in chains:
        path = [source, *dummies, target]
        for a, b in zip(path, path[1:]):
            lower[a].append(b)
            upper[b].append(a)
    _order_by_barycentres(layers, upper, lower)
    x = _coordinates(layers, size, upper)
    y: dict[str, float] = {}
    top = MARGIN
    for nodes in layers:
        height = max((size[n][1] for n in nodes), default=0.0)
        for node in nodes:
            y[node] = top + height / 2
        top += height + RANK_GAP
    routes = []
    for source, target, dummies in chains:
        points = [(x[source], y[source] + size[source][1] / 2)]
        points += [(x[d], y[d]) for d in dummies]
        points.append((x[target], y[target] - size[target][1] / 2))
        routes.append((source, target, points))
    width = max((x[n] + size[n][0] / 2 for n in layer), default=0.0) + MARGIN
    return Layout({n: (x[n], y[n]) for n in ids}, routes, width, top - RANK_GAP + MARGIN)


def _barycentre_order(nodes: list[str], neighbour_layer: list[str],
                      neighbours: dict[str, list[str]]) -> list[str]:  # fmt: skip
    """`nodes` sorted by the mean position of their neighbours in
    `neighbour_layer` (a node without any keeps its place)."""
    position = {n: i for i, n in enumerate(neighbour_layer)}
    current = {n: i for i, n in enumerate(nodes)}

    def key(node: str) -> float:
        found = [position[n] for n in neighbours[node] if n in position]
        return sum(found) / len(found) if found else float(current[node])

    return sorted(nodes, key=key)


def _order_by_barycentres(layers: list[list[str]], upper: dict[str, list[str]],
                          lower: dict[str, list[str]]) -> None:  # fmt: skip
    for sweep in range(SWEEPS):
        if sweep % 2 == 0:
            for index in range(1, len(layers)):
                layers[index] = _barycentre_order(layers[index], layers[index - 1], upper)
        else:
            for index in range(len(layers) - 2, -1, -1):
                layers[index] = _barycentre_order(layers[index], layers[index + 1], lower)


def _coordinates(layers: list[list[str]], size: dict[str, tuple[float, float]],
                 upper: dict[str, list[str]]) -> dict[str, float]:  # fmt: skip
    x: dict[str, float] = {}
    for nodes in layers:
        left = MARGIN
        for node in nodes:
            x[node] = left + size[node][0] / 2
            left += size[node][0] + NODE_GAP
    for nodes in layers[1:]:
        wanted = []
        for node in nodes:
            above = [x[n] for n in upper[node]]
            wanted.append(sum(above) / len(above) if above else x[node])
        # Left to right, no closer than the gap; then right to left the same,
        # so that a row pulled right does not drift further than it must.
        placed = list(wanted)
        for i in range(1, len(nodes)):
            least = placed[i - 1] + (size[nodes[i - 1]][0] + size[nodes[i]][0]) / 2 + NODE_GAP
            placed[i] = max(placed[i], least)
        for i in range(len(nodes) - 2, -1, -1):
            most = placed[i + 1] - (size[nodes[i + 1]][0] + size[nodes[i]][0]) / 2 - NODE_GAP
            placed[i] = min(placed[i], most)
        for node, value in zip(nodes, placed):
            x[node] = value
    low = min((x[n] - size[n][0] / 2 for n in x), default=MARGIN)
    return {n: value - low + MARGIN for n, value in x.items()}


__all__ = ["Layout", "layered_layout", "longest_path_layers"]
