"""The `graph` dialect: ONNX-level operators on value tensors.

Ops follow ONNX opset-21 semantics (the importer upgrades older opsets).
Each op is declared by an `OpSpec` row in one of the family modules:

- `ops_elementwise`: unary, binary, variadic, Where, Cast, Clip, Dropout
- `ops_nn`: Conv, pooling, normalisation, Gemm/MatMul, Softmax, Flatten
- `ops_tensor`: Constant, shape ops, Reshape, Slice, Gather, Pad, Concat, Split
- `ops_reduce`: ReduceX and ArgMax/ArgMin
- `ops_loss`: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss
- `ops_resize`: Resize, and the sampling tables it means
- `ops_recurrent`: RNN, GRU and LSTM
- `ops_signal`: DFT, STFT, the window functions and MelWeightMatrix
- `ops_vision`: GridSample, AffineGrid, Col2Im, RoiAlign and DeformConv
- `ops_quantize`: QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear
- `ops_qlinear`: the quantised products QLinearConv, QLinearMatMul and
  onnxruntime's QGemm (domain `com.microsoft`, formed by `graph-fuse-qdq`),
  and the integer products ConvInteger and MatMulInteger
- `ops_transformer`: Attention, RMSNormalization, RotaryEmbedding,
  TensorScatter, SwiGLU, CausalConvWithState and LinearAttention (opsets 23-28)
- `ops_text`: TfIdfVectorizer (n-gram counts of token ids)
- `ops_random`: RandomUniform, RandomNormal, their Like forms, Bernoulli and Multinomial,
  and the counter-based generator (SplitMix64) that Dropout shares
- `ops_ml`: Binarizer, ArrayFeatureExtractor and TreeEnsemble (domain `ai.onnx.ml`)
- `ops_training`: the optimiser update rules Adagrad, Adam and Momentum
  (domain `ai.onnx.preview.training`)
- `ops_layout`: Ember's own layout ops (domain `ember`, not importable from
  ONNX): LayoutTransform and Conv/MaxPool/AveragePool in NCHWc and NHWC

`fused` adds the structural `graph.fused` (a group of ops that becomes one
kernel) and its terminator `graph.yield`; `control_flow` adds ONNX's
If, Loop and Scan as `graph.if`, `graph.loop` and `graph.scan`, whose
regions end in `graph.yield` too.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import Dialect

from ember.dialects.graph import (
    ops_elementwise,
    ops_layout,
    ops_loss,
    ops_ml,
    ops_nn,
    ops_qlinear,
    ops_quantize,
    ops_random,
    ops_recurrent,
    ops_reduce,
    ops_resize,
    ops_signal,
    ops_tensor,
    ops_text,
    ops_training,
    ops_transformer,
    ops_vision,
)
from ember.dialects.graph.base import GraphOp, class_name_of
from ember.dialects.graph.control_flow import IfOp, LoopOp, ScanOp
from ember.dialects.graph.dims import DimsAttr, RangeAttr
from ember.dialects.graph.fused import FusedOp, YieldOp
from ember.dialects.graph.ops_elementwise import (
    AbsOp,
    AcoshOp,
    AcosOp,
    AddOp,
    AndOp,
    AsinhOp,
    AsinOp,
    AtanhOp,
    AtanOp,
    BitCastOp,
    BitShiftOp,
    BitwiseAndOp,
    BitwiseNotOp,
    BitwiseOrOp,
    BitwiseXorOp,
    CastOp,
    CeilOp,
    CeluOp,
    ClipOp,
    CoshOp,
    CosOp,
    DivOp,
    DropoutOp,
    EluOp,
    EqualOp,
    ErfOp,
    ExpOp,
    FloorOp,
    GeluOp,
    GreaterOp,
    GreaterOrEqualOp,
    HardSigmoidOp,
    HardSwishOp,
    IdentityOp,
    IsInfOp,
    IsNaNOp,
    LeakyReluOp,
    LessOp,
    LessOrEqualOp,
    LogOp,
    MaxOp,
    MeanOp,
    MinOp,
    MishOp,
    ModOp,
    MulOp,
    NegOp,
    NotOp,
    OrOp,
    PowOp,
    PReluOp,
    ReciprocalOp,
    ReluOp,
    RoundOp,
    SeluOp,
    ShrinkOp,
    SigmoidOp,
    SignOp,
    SinhOp,
    SinOp,
    SoftplusOp,
    SoftsignOp,
    SqrtOp,
    SubOp,
    SumOp,
    SwishOp,
    TanhOp,
    TanOp,
    ThresholdedReluOp,
    WhereOp,
    XorOp,
)
from ember.dialects.graph.ops_layout import (
    AveragePoolNCHWcOp,
    AveragePoolNHWCOp,
    ConvNCHWcOp,
    ConvNHWCOp,
    LayoutTransformOp,
    MaxPoolNCHWcOp,
    MaxPoolNHWCOp,
)
from ember.dialects.graph.ops_loss import (
    NegativeLogLikelihoodLossOp,
    SoftmaxCrossEntropyLossOp,
)
from ember.dialects.graph.ops_ml import ArrayFeatureExtractorOp, BinarizerOp, TreeEnsembleOp
from ember.dialects.graph.ops_nn import (
    AveragePoolOp,
    BatchNormalizationOp,
    ConvOp,
    ConvTransposeOp,
    DetOp,
    EinsumOp,
    FlattenOp,
    GemmOp,
    GlobalAveragePoolOp,
    GlobalMaxPoolOp,
    GroupNormalizationOp,
    HardmaxOp,
    InstanceNormalizationOp,
    LayerNormalizationOp,
    LogSoftmaxOp,
    LpNormalizationOp,
    LpPoolOp,
    LRNOp,
    MatMulOp,
    MaxPoolOp,
    MaxUnpoolOp,
    MeanVarianceNormalizationOp,
    SoftmaxOp,
)
from ember.dialects.graph.ops_qlinear import (
    ConvIntegerOp,
    MatMulIntegerOp,
    QGemmOp,
    QLinearConvOp,
    QLinearMatMulOp,
)
from ember.dialects.graph.ops_quantize import (
    DequantizeLinearOp,
    DynamicQuantizeLinearOp,
    QuantizeLinearOp,
)
from ember.dialects.graph.ops_random import (
    BernoulliOp,
    MultinomialOp,
    RandomNormalLikeOp,
    RandomNormalOp,
    RandomUniformLikeOp,
    RandomUniformOp,
)
from ember.dialects.graph.ops_recurrent import GRUOp, LSTMOp, RNNOp
from ember.dialects.graph.ops_reduce import (
    ArgMaxOp,
    ArgMinOp,
    CumProdOp,
    CumSumOp,
    ReduceL1Op,
    ReduceL2Op,
    ReduceLogSumExpOp,
    ReduceLogSumOp,
    ReduceMaxOp,
    ReduceMeanOp,
    ReduceMinOp,
    ReduceProdOp,
    ReduceSumOp,
    ReduceSumSquareOp,
    TopKOp,
)
from ember.dialects.graph.ops_resize import ResizeOp
from ember.dialects.graph.ops_signal import (
    BlackmanWindowOp,
    DFTOp,
    HammingWindowOp,
    HannWindowOp,
    MelWeightMatrixOp,
    STFTOp,
)
from ember.dialects.graph.ops_tensor import (
    CenterCropPadOp,
    ConcatOp,
    ConstantOfShapeOp,
    ConstantOp,
    DepthToSpaceOp,
    ExpandOp,
    EyeLikeOp,
    GatherElementsOp,
    GatherNDOp,
    GatherOp,
    OneHotOp,
    PadOp,
    RangeOp,
    ReshapeOp,
    ReverseSequenceOp,
    ScatterElementsOp,
    ScatterNDOp,
    ShapeOp,
    SizeOp,
    SliceOp,
    SpaceToDepthOp,
    SplitOp,
    SqueezeOp,
    TileOp,
    TransposeOp,
    TriluOp,
    UnsqueezeOp,
    constant_data,
    constant_value_of,
    dense_constant,
    describe_constant,
)
from ember.dialects.graph.ops_text import TfIdfVectorizerOp
from ember.dialects.graph.ops_training import AdagradOp, AdamOp, MomentumOp
from ember.dialects.graph.ops_transformer import (
    AttentionOp,
    CausalConvWithStateOp,
    LinearAttentionOp,
    RMSNormalizationOp,
    RotaryEmbeddingOp,
    SwiGLUOp,
    TensorScatterOp,
)
from ember.dialects.graph.ops_vision import (
    AffineGridOp,
    Col2ImOp,
    DeformConvOp,
    GridSampleOp,
    RoiAlignOp,
)
from ember.dialects.graph.spec import IMPORTED_DOMAINS, ONNX_DOMAIN, OpSpec

ALL_SPECS: list[OpSpec] = [
    *ops_elementwise.SPECS,
    *ops_nn.SPECS,
    *ops_tensor.SPECS,
    *ops_reduce.SPECS,
    *ops_loss.SPECS,
    *ops_resize.SPECS,
    *ops_recurrent.SPECS,
    *ops_signal.SPECS,
    *ops_vision.SPECS,
    *ops_transformer.SPECS,
    *ops_quantize.SPECS,
    *ops_qlinear.SPECS,
    *ops_text.SPECS,
    *ops_random.SPECS,
    *ops_ml.SPECS,
    *ops_training.SPECS,
    *ops_layout.SPECS,
]


def _classes_by_name() -> dict[str, type[GraphOp]]:
    modules = (
        ops_elementwise,
        ops_nn,
        ops_tensor,
        ops_reduce,
        ops_loss,
        ops_resize,
        ops_recurrent,
        ops_signal,
        ops_vision,
        ops_transformer,
        ops_quantize,
        ops_qlinear,
        ops_text,
        ops_random,
        ops_ml,
        ops_training,
        ops_layout,
    )
    return {
        name: value
        for module in modules
        for name, value in vars(module).items()
        if isinstance(value, type)
        and issubclass(value, GraphOp)
        and value.__module__ == module.__name__
    }


_CLASSES = _classes_by_name()
OPS: list[type[GraphOp]] = [ConstantOp, *(_CLASSES[class_name_of(s)] for s in ALL_SPECS)]
"""Every `graph` op class, in table order (a row without its class fails here, at import)."""


def op_classes(specs: Sequence[OpSpec]) -> tuple[type[GraphOp], ...]:
    """The op classes of `specs` (a family's table, e.g. `ops_elementwise.SPECS`)."""
    by_name = {op.__name__: op for op in OPS}
    return tuple(by_name[class_name_of(spec)] for spec in specs)


OPS_BY_TYPE: dict[str, type[GraphOp]] = {op.SPEC.onnx_type: op for op in OPS}
"""The op class for each op type, Ember's own included. An op type names one
op whatever its domain (the reference kernels are keyed by it too)."""
if len(OPS_BY_TYPE) != len(OPS):
    raise TypeError("two graph ops share an op type (in different domains)")

IMPORTABLE_OPS: dict[tuple[str, str], type[GraphOp]] = {
    (op.SPEC.domain, op.SPEC.onnx_type): op
    for op in OPS
    if op.SPEC.domain == ONNX_DOMAIN or op.SPEC.domain in IMPORTED_DOMAINS
}
"""The op class for each (domain, op type) the importer may create: ai.onnx's
ops and those of the other ONNX domains it reads (`spec.IMPORTED_DOMAINS`)."""

OPS_BY_ONNX_TYPE: dict[str, type[GraphOp]] = {
    name: op for name, op in OPS_BY_TYPE.items() if op.SPEC.domain == ONNX_DOMAIN
}
"""The op class for each supported ONNX op type (what the importer may create)."""

Graph = Dialect("graph", [*OPS, FusedOp, YieldOp, IfOp, LoopOp, ScanOp], [DimsAttr, RangeAttr])

__all__ = [
    "AdagradOp",
    "AdamOp",
    "AffineGridOp",
    "ArrayFeatureExtractorOp",
    "BinarizerOp",
    "IMPORTABLE_OPS",
    "MomentumOp",
    "Col2ImOp",
    "DeformConvOp",
    "GridSampleOp",
    "RoiAlignOp",
    "BlackmanWindowOp",
    "DFTOp",
    "HammingWindowOp",
    "HannWindowOp",
    "MelWeightMatrixOp",
    "STFTOp",
    "DequantizeLinearOp",
    "DynamicQuantizeLinearOp",
    "ConvIntegerOp",
    "MatMulIntegerOp",
    "QGemmOp",
    "QLinearConvOp",
    "QLinearMatMulOp",
    "ALL_SPECS",
    "DimsAttr",
    "RangeAttr",
    "AbsOp",
    "AcoshOp",
    "AcosOp",
    "AddOp",
    "AndOp",
    "ArgMaxOp",
    "ArgMinOp",
    "AsinhOp",
    "AsinOp",
    "AtanhOp",
    "AtanOp",
    "AttentionOp",
    "AveragePoolNCHWcOp",
    "AveragePoolNHWCOp",
    "AveragePoolOp",
    "BatchNormalizationOp",
    "BernoulliOp",
    "BitCastOp",
    "BitShiftOp",
    "BitwiseAndOp",
    "BitwiseNotOp",
    "BitwiseOrOp",
    "BitwiseXorOp",
    "CastOp",
    "CausalConvWithStateOp",
    "CeilOp",
    "CeluOp",
    "CenterCropPadOp",
    "ClipOp",
    "ConcatOp",
    "ConstantOfShapeOp",
    "ConstantOp",
    "ConvNCHWcOp",
    "ConvNHWCOp",
    "ConvOp",
    "ConvTransposeOp",
    "CosOp",
    "CoshOp",
    "CumProdOp",
    "CumSumOp",
    "DepthToSpaceOp",
    "DetOp",
    "DivOp",
    "DropoutOp",
    "EinsumOp",
    "EluOp",
    "EqualOp",
    "ErfOp",
    "ExpOp",
    "ExpandOp",
    "EyeLikeOp",
    "FlattenOp",
    "FloorOp",
    "FusedOp",
    "IfOp",
    "LoopOp",
    "ScanOp",
    "GatherElementsOp",
    "GatherNDOp",
    "GatherOp",
    "GeluOp",
    "GemmOp",
    "GlobalAveragePoolOp",
    "GlobalMaxPoolOp",
    "Graph",
    "GraphOp",
    "GreaterOp",
    "GreaterOrEqualOp",
    "GroupNormalizationOp",
    "HardmaxOp",
    "HardSigmoidOp",
    "HardSwishOp",
    "IdentityOp",
    "InstanceNormalizationOp",
    "IsInfOp",
    "IsNaNOp",
    "LpNormalizationOp",
    "LpPoolOp",
    "LRNOp",
    "LayerNormalizationOp",
    "LayoutTransformOp",
    "LeakyReluOp",
    "LessOp",
    "LessOrEqualOp",
    "LinearAttentionOp",
    "LogOp",
    "LogSoftmaxOp",
    "MatMulOp",
    "MaxOp",
    "MaxPoolNCHWcOp",
    "MaxPoolNHWCOp",
    "MaxPoolOp",
    "MaxUnpoolOp",
    "MeanOp",
    "MeanVarianceNormalizationOp",
    "MinOp",
    "MishOp",
    "MultinomialOp",
    "ModOp",
    "MulOp",
    "NegativeLogLikelihoodLossOp",
    "NegOp",
    "NotOp",
    "OPS",
    "OPS_BY_ONNX_TYPE",
    "OPS_BY_TYPE",
    "OneHotOp",
    "OrOp",
    "PReluOp",
    "PadOp",
    "PowOp",
    "RandomNormalLikeOp",
    "RandomNormalOp",
    "RandomUniformLikeOp",
    "RandomUniformOp",
    "RangeOp",
    "ReciprocalOp",
    "ReduceL1Op",
    "QuantizeLinearOp",
    "ReduceLogSumOp",
    "ResizeOp",
    "RMSNormalizationOp",
    "ReverseSequenceOp",
    "RNNOp",
    "GRUOp",
    "LSTMOp",
    "ReduceL2Op",
    "ReduceLogSumExpOp",
    "ReduceMaxOp",
    "ReduceMeanOp",
    "ReduceMinOp",
    "ReduceProdOp",
    "ReduceSumOp",
    "ReduceSumSquareOp",
    "ReluOp",
    "ReshapeOp",
    "RotaryEmbeddingOp",
    "RoundOp",
    "SeluOp",
    "ScatterElementsOp",
    "ScatterNDOp",
    "ShapeOp",
    "ShrinkOp",
    "SigmoidOp",
    "SignOp",
    "SinOp",
    "SinhOp",
    "SizeOp",
    "SliceOp",
    "SoftmaxCrossEntropyLossOp",
    "SoftmaxOp",
    "SoftplusOp",
    "SoftsignOp",
    "SpaceToDepthOp",
    "SplitOp",
    "SqrtOp",
    "SqueezeOp",
    "SubOp",
    "SumOp",
    "SwiGLUOp",
    "SwishOp",
    "TanOp",
    "TanhOp",
    "TensorScatterOp",
    "TfIdfVectorizerOp",
    "ThresholdedReluOp",
    "TileOp",
    "TopKOp",
    "TransposeOp",
    "TreeEnsembleOp",
    "TriluOp",
    "UnsqueezeOp",
    "WhereOp",
    "XorOp",
    "YieldOp",
    "constant_data",
    "constant_value_of",
    "dense_constant",
    "describe_constant",
    "op_classes",
]
