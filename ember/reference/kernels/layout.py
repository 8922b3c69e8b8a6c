"""Kernels of Ember's own layout ops (`dialects/graph/ops_layout.py`).

`LayoutTransform` moves the elements; a laid-out op (ConvNCHWc, MaxPoolNHWC,
...) converts its operands to the ONNX layouts, runs the ONNX op's kernel and
converts the results back: the definition of its semantics, not a fast path.
"""

from __future__ import annotations

import numpy as np

from ember.dialects.graph.layouts import convert_array
from ember.dialects.graph.ops_layout import LAID_OUT, signature

from ._registry import KERNELS, Attrs, Inputs, Kernel, register, register_all


@register("LayoutTransform")
def layout_transform(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    return [convert_array(np.asarray(inputs[0]), attrs["source"], attrs["target"])]


def _laid_out(op_type: str) -> Kernel:
    def kernel(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
        arrays = [None if x is None else np.asarray(x) for x in inputs]
        present = [x.shape for x in arrays if x is not None]
        (layouts, result_layouts), (canonical, canonical_results) = signature(op_type, present)
        converted = [None if x is None else convert_array(x, layout, onnx_layout)
                     for x, layout, onnx_layout in zip(arrays, layouts, canonical)]  # fmt: skip
        outputs = KERNELS[LAID_OUT[op_type].onnx_type](converted, attrs)
        return [convert_array(y, onnx_layout, layout)
                for y, onnx_layout, layout in zip(outputs, canonical_results, result_layouts)]  # fmt: skip

    return kernel


for _op_type in LAID_OUT:
    register_all([_op_type], _laid_out(_op_type))
