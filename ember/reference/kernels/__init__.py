"""NumPy reference kernels for ONNX operators: the semantic ground truth of Ember.

Every kernel implements **ONNX opset 21** semantics and follows one contract::

    Kernel = Callable[[Sequence[np.ndarray | None], Mapping[str, Any]], list[np.ndarray]]
    KERNELS: dict[str, Kernel]   # keyed by ONNX op_type, e.g. "Conv"

- ``inputs`` are the node's inputs in ONNX order. A missing optional input is ``None``;
  trailing missing inputs may also simply be absent from the sequence.
- ``attrs`` maps ONNX attribute names to ONNX-native Python values: int, float, str,
  list[int], list[float], ``np.ndarray`` for TENSOR attributes (ConstantOfShape ``value``,
  Constant ``value``) and TensorProto enum ints for Cast ``to``. The caller fills in the
  opset-21 schema defaults (see :func:`schema_defaults`), so attributes with a schema default
  are always present; attributes without one (Conv ``kernel_shape``/``pads``/``strides``,
  Transpose ``perm``, ...) may be absent and are then handled per ONNX semantics. For
  Split, the caller may pass ``__num_results__`` (the node's number of outputs), used when
  neither the ``split`` input nor ``num_outputs`` is given; SoftmaxCrossEntropyLoss reads it
  to give its optional ``log_prob``, MaxPool its ``Indices``, Dropout its ``mask`` and
  BatchNormalization (in training mode) its running statistics. Unknown attributes
  are ignored.
- The result is a list with one array per ONNX output asked for; Split returns one
  array per part.
- Results keep the input dtype (float32 stays float32); intermediates may be computed in
  float64 and are cast back once.

Families live in one module each: :mod:`.elementwise`, :mod:`.nn`, :mod:`.recurrent`,
:mod:`.signal`, :mod:`.tensor`, :mod:`.vision`, :mod:`.reduce`, :mod:`.quantize`,
:mod:`.transformer`, :mod:`.loss`, :mod:`.text` (TfIdfVectorizer), :mod:`.random`
(RandomUniform, RandomNormal, Bernoulli, Multinomial), :mod:`.ml` (domain
``ai.onnx.ml``) and :mod:`.training`
(domain ``ai.onnx.preview.training``); :mod:`.layout` holds the kernels of Ember's own layout ops (domain
``ember``: LayoutTransform and the laid-out Conv/MaxPool/AveragePool), which are defined
through the ONNX kernels.
"""

from __future__ import annotations

from typing import Any

import onnx
from onnx import AttributeProto, helper, numpy_helper

from . import (  # noqa: F401  (registers kernels)
    elementwise,
    layout,
    loss,
    ml,
    nn,
    quantize,
    random,
    recurrent,
    reduce,
    signal,
    tensor,
    text,
    training,
    transformer,
    vision,
)
from ._registry import KERNELS, Kernel

__all__ = ["KERNELS", "Kernel", "onnx_schema", "schema_defaults"]


def _native(value: Any) -> Any:
    """An attribute value from ``helper.get_attribute_value`` as an ONNX-native Python value."""
    if isinstance(value, bytes):
        return value.decode("utf-8")
    if isinstance(value, onnx.TensorProto):
        return numpy_helper.to_array(value)
    if isinstance(value, (list, tuple)):
        return [_native(v) for v in value]
    return value


def onnx_schema(op_type: str, opset: int = 21, domain: str = "") -> onnx.defs.OpSchema:
    """The schema of ``op_type`` at ``opset``, or its newest one for an op that ONNX
    added after ``opset`` (Attention, RMSNormalization, Swish, BitCast: Ember models
    those as their newest opset defines them). ``domain`` "" is ai.onnx; an op of
    another domain (ai.onnx.ml) is modelled by its newest schema, whatever ``opset``."""
    if domain not in ("", "ai.onnx"):
        return onnx.defs.get_schema(op_type, domain)
    try:
        return onnx.defs.get_schema(op_type, opset)
    except onnx.defs.SchemaError:
        return onnx.defs.get_schema(op_type)


def schema_defaults(op_type: str, opset: int = 21, domain: str = "") -> dict[str, Any]:
    """Default attribute values of ``op_type`` in its schema at ``opset``
    (see :func:`onnx_schema`).

    Attributes without a schema default are left out.
    """
    schema = onnx_schema(op_type, opset, domain)
    defaults: dict[str, Any] = {}
    for name, attr in schema.attributes.items():
        proto = attr.default_value
        if proto.type == AttributeProto.UNDEFINED:
            continue
        defaults[name] = _native(helper.get_attribute_value(proto))
    return defaults
