"""QDQ models as onnxruntime's own tool makes them: `quantize_static`
(QDQ format, int8 activations and weights) with a few seeded random
inputs for calibration."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx


class _Calibration:
    """quantize_static's calibration data: a few seeded random inputs."""

    def __init__(self, name: str, shape: list[int], count: int = 8):
        rng = np.random.default_rng(0)
        self.batches = iter([{name: rng.standard_normal(shape).astype(np.float32)}
                             for _ in range(count)])  # fmt: skip

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
    given = model.graph.input[0]
    shape = [d.dim_value for d in given.type.tensor_type.shape.dim]
    reader = _Calibration(given.name, shape)
    quantize_static(str(source), str(target), reader, quant_format=QuantFormat.QDQ,  # type: ignore[arg-type]
                    per_channel=per_channel, activation_type=QuantType.QInt8,
                    weight_type=QuantType.QInt8)  # fmt: skip
    return target
