"""NPU tuning tasks: the distinct matrix products of a model's `npu.segment`s.

A *task* is one product layer of a segment (a MatMul, Gemm or Conv, the
quantised ones included) as the segment lowering forms it
(`ember.lowering.graph_to_npu`): a `Matmul` with its operands' DRAM
geometry, its bias and ReLU, its element types. Its key is a SHA-256 of a
text of what the product computes and how its operands lie
(`product_text`): the graph op, m x k x n, the element types, the fused
bias (per row or per column) and ReLU, a per-tensor or per-channel
requantisation, each operand's access without its address (a dense
matrix's row bytes; an image's planes, pitch, halo, kernel window,
strides and dilation) and the column tiles. Never the weights' or the
scales' values, nor the model's node names: two layers that compute the
same product on operands laid out alike are one task, in one model or
two, and their cycles in the cycle model are the same.

A convolution of a batch is one product per image, all run with the
first's schedule: the task is that product, counted once per image. A
model's tasks are weighted by how many products they stand for (`count`)
and named by the model's nodes they came from.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field, fields

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

from ember.dialects.npu.machine import NpuParams
from ember.dialects.npu.segment import SegmentOp
from ember.dialects.source_names import source_names
from ember.lowering.graph_to_npu import segment_lowering
from ember.lowering.graph_to_npu.matmul import Access, Matmul, Planes, RowMajor
from ember.options import DEFAULT_OPTIONS, Options

KEY_LENGTH = 20
"""Hex digits of a task's key (80 bits of its SHA-256)."""


@dataclass
class NpuTask:
    """One distinct product of a model's segments (see the module docstring)."""

    key: str
    text: str
    """What the key hashes (`product_text`)."""
    op_name: str
    product: Matmul
    """The first product of the task met, with its DRAM addresses."""
    ones: int
    """The DRAM address of its segment's column of ones (a float bias's)."""
    names: list[str] = field(default_factory=list)
    count: int = 1
    """How many of the model's products run this task."""

    @property
    def extents(self) -> tuple[int, int, int]:
        return (self.product.m, self.product.k, self.product.n)

    @property
    def macs(self) -> int:
        return self.product.macs

    def describe(self) -> str:
        """The op, its m x k x n and type and its first node names, for listings."""
        shown = ", ".join(self.names[:3]) + (", ..." if len(self.names) > 3 else "")
        dims = "x".join(map(str, self.extents))
        text = f"{self.op_name} [{dims} {self.product.elem.name}]"
        return text + (f" ({shown})" if shown else "")


def access_text(access: Access | None) -> str:
    """An operand's access without its DRAM address (see the module docstring)."""
    if access is None:
        return "none"
    if isinstance(access, RowMajor):
        return f"rows(row_bytes={access.row_bytes}, elem_bytes={access.elem_bytes})"
    if isinstance(access, Planes):
        values = [f"{f.name}={getattr(access, f.name)}" for f in fields(access)
                  if f.name != "address"]  # fmt: skip
        return f"planes({', '.join(values)})"
    raise TypeError(f"no text for an access of type {type(access).__name__}")


def product_text(op_name: str, product: Matmul, dim: int) -> str:
    """The stable text a task's key hashes (see the module docstring)."""
    scale = "per-channel" if isinstance(product.scale, tuple) else "per-tensor"
    requantised = scale if product.out.name == "int8" else "no"
    bias = "none" if product.bias is None else "per-row" if product.bias_per_row else "per-column"
    columns = ",".join(f"{first}+{width}" for first, width in product.column_tiles(dim))
    return "\n".join([
        f"{op_name} m={product.m} k={product.k} n={product.n} elem={product.elem.name} "
        f"out={product.out.name}",
        f"relu={int(product.relu)} bias={bias} requantised={requantised}",
        f"a={access_text(product.a)}", f"b={access_text(product.b)}",
        f"c={access_text(product.c)}", f"bias={access_text(product.bias)}",
        f"columns={columns}",
    ])  # fmt: skip


def task_key(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:KEY_LENGTH]


@dataclass(frozen=True)
class ProductLayer:
    """A product layer of a segment: its graph op, its first product, how
    many products (images) it runs, and its task's text and key."""

    op: Operation
    product: Matmul
    images: int
    ones: int
    text: str

    @property
    def key(self) -> str:
        return task_key(self.text)


def product_layers(segment: SegmentOp, params: NpuParams) -> Iterator[ProductLayer]:
    """The product layers of `segment` as its lowering forms them."""
    lowering = segment_lowering(segment, params)
    lowering.build()
    for op, (_, indices) in zip(lowering.layer_ops, lowering.layers, strict=True):
        product = lowering.products[indices[0]]
        if isinstance(product, Matmul):
            yield ProductLayer(op, product, len(indices), lowering.ones.address,
                               product_text(op.name, product, params.dim))  # fmt: skip


def segment_tasks(module: ModuleOp, params: NpuParams) -> list[NpuTask]:
    """The tasks of a partitioned module's segments, in the order first met."""
    tasks: dict[str, NpuTask] = {}
    for segment in [s for s in module.walk() if isinstance(s, SegmentOp)]:
        for layer in product_layers(segment, params):
            names = source_names(layer.op)
            known = tasks.get(layer.key)
            if known is None:
                tasks[layer.key] = NpuTask(layer.key, layer.text, layer.op.name, layer.product,
                                           layer.ones, list(names), layer.images)  # fmt: skip
                continue
            known.count += layer.images
            known.names.extend(n for n in names if n not in known.names)
    return list(tasks.values())


def model_tasks(module: ModuleOp, options: Options = DEFAULT_OPTIONS,
                params: NpuParams | None = None) -> list[NpuTask]:  # fmt: skip
    """The NPU tasks of an imported model (graph IR, consumed), partitioned
    as `compile_npu` partitions it."""
    from ember.targets.npu.compile import partition_model

    partition_model(module, options)
    return segment_tasks(module, params or NpuParams())


__all__ = ["NpuTask", "ProductLayer", "access_text", "model_tasks", "product_layers",
           "product_text", "segment_tasks", "task_key"]  # fmt: skip
