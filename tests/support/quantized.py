"""QDQ models as onnxruntime's own tool makes them: `quantize_static`
(QDQ format, int8 activations and weights) with a few seeded random
inputs for calibration."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx

from tests.support.models import random_inputs


class _Calibration:
    """quantize_static's calibration data: a few seeded random inputs."""

    def __init__(self, model: onnx.ModelProto, count: int = 8):
        self.batches = iter([random_inputs(model, seed) for seed in range(count)])

    def get_next(self) -> dict[str, np.ndarray] | None:
        return next(self.batches, None)


def quantized(model: onnx.ModelProto, folder: Path, per_channel: bool,
              preprocess: bool = False) -> Path:  # fmt: skip
    """`model` quantised to a QDQ file in `folder` (with `preprocess`, after
    onnxruntime's `quant_pre_process`, which folds BatchNormalization into
    the convolutions as its documentation advises)."""
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_static
    from onnxruntime.quantization.shape_inference import quant_pre_process

    model = onnx.ModelProto.FromString(model.SerializeToString())
    model.ir_version = max(model.ir_version, 7)  # initializers need not be inputs
    source, target = folder / "float.onnx", folder / "qdq.onnx"
    onnx.save(model, source)
    if preprocess:
        quant_pre_process(str(source), str(folder / "prepared.onnx"), skip_symbolic_shape=True)
        source = folder / "prepared.onnx"
    reader = _Calibration(model)
    quantize_static(str(source), str(target), reader, quant_format=QuantFormat.QDQ,  # type: ignore[arg-type]
                    per_channel=per_channel, activation_type=QuantType.QInt8,
                    weight_type=QuantType.QInt8)  # fmt: skip
    return target
