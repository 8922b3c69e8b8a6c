"""Signal kernels: DFT and STFT (NumPy's FFT), the cosine-sum windows and
MelWeightMatrix. Complex tensors are real ones with a trailing dim of 2."""

from __future__ import annotations

import numpy as np
from onnx.helper import tensor_dtype_to_np_dtype

from ember.dialects.graph.ops_signal import COSINE_SUMS

from ._registry import Attrs, Inputs, arg, norm_axis, register


def _complex(x: np.ndarray) -> np.ndarray:
    """[..., 1 or 2] as complex128 [...]."""
    x = x.astype(np.float64)
    return x[..., 0] + 1j * x[..., 1] if x.shape[-1] == 2 else x[..., 0].astype(np.complex128)


def _pairs(z: np.ndarray) -> np.ndarray:
    return np.stack([z.real, z.imag], axis=-1)


def _scalar(value: np.ndarray | None) -> int | None:
    return None if value is None else int(np.asarray(value).reshape(-1)[0])


@register("DFT")
def dft(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    x = inputs[0]
    assert x is not None
    axis_value = _scalar(arg(inputs, 2))
    axis = norm_axis(-2 if axis_value is None else axis_value, x.ndim)
    length = _scalar(arg(inputs, 1))
    z = _complex(x)
    inverse, onesided = bool(attrs["inverse"]), bool(attrs["onesided"])
    if inverse and onesided:
        n = 2 * (x.shape[axis] - 1) if length is None else length
        return [np.fft.irfft(z, n=n, axis=axis)[..., None].astype(x.dtype)]
    n = x.shape[axis] if length is None else length
    y = (np.fft.ifft if inverse else np.fft.fft)(z, n=n, axis=axis)
    if onesided:
        y = np.take(y, np.arange(n // 2 + 1), axis=axis)
    return [_pairs(y).astype(x.dtype)]


@register("STFT")
def stft(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    x, step, window, length = inputs[0], arg(inputs, 1), arg(inputs, 2), arg(inputs, 3)
    assert x is not None
    hop = _scalar(step)
    assert hop is not None
    size = _scalar(length) or (x.shape[1] if window is None else window.shape[0])
    w = np.ones(size) if window is None else window.astype(np.float64)
    count = 1 + (x.shape[1] - size) // hop
    starts = np.arange(count)[:, None] * hop + np.arange(size)[None, :]
    frames = _complex(x)[:, starts] * w  # [batch, frames, size]
    y = np.fft.fft(frames, axis=-1)
    if attrs["onesided"]:
        y = y[..., : size // 2 + 1]
    return [_pairs(y).astype(x.dtype)]


def _cosine_sum(name: str, inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    size = _scalar(inputs[0])
    assert size is not None
    a0, a1, a2 = COSINE_SUMS[name]
    period = size if attrs["periodic"] else size - 1
    angle = 2 * np.pi * np.arange(size) / period
    w = a0 - a1 * np.cos(angle) + a2 * np.cos(2 * angle)
    return [w.astype(tensor_dtype_to_np_dtype(int(attrs["output_datatype"])))]


@register("HannWindow")
def hann_window(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    return _cosine_sum("HannWindow", inputs, attrs)


@register("HammingWindow")
def hamming_window(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    return _cosine_sum("HammingWindow", inputs, attrs)


@register("BlackmanWindow")
def blackman_window(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    return _cosine_sum("BlackmanWindow", inputs, attrs)


def _hertz_to_mel(hertz: float) -> float:
    return 2595 * np.log10(1 + hertz / 700)


@register("MelWeightMatrix")
def mel_weight_matrix(inputs: Inputs, attrs: Attrs) -> list[np.ndarray]:
    """ONNX's triangles: num_mel_bins + 2 edges evenly spaced in mel from the
    lower to the upper edge (a step of the range / (bins + 2), as ONNX's
    reference has it), each mapped to the spectrum bin floor((dft_length +
    1) * hertz / sample_rate); filter i rises from edge i to edge i + 1 and
    falls to edge i + 2."""
    bins, length, rate = (_scalar(v) for v in inputs[:3])
    assert bins is not None and length is not None and rate is not None
    low, high = (float(np.asarray(v).reshape(-1)[0]) for v in inputs[3:5])  # type: ignore[union-attr]
    low_mel, high_mel = _hertz_to_mel(low), _hertz_to_mel(high)
    mels = np.arange(bins + 2) * ((high_mel - low_mel) / (bins + 2)) + low_mel
    hertz = 700 * (10 ** (mels / 2595) - 1)
    edges = (((length + 1) * hertz) // rate).astype(int)
    out = np.zeros((length // 2 + 1, bins))
    for i in range(bins):
        left, center, right = edges[i : i + 3]
        if center == left:
            out[center, i] = 1
        else:
            out[left : center + 1, i] = (np.arange(left, center + 1) - left) / (center - left)
        if right > center:
            out[center:right, i] = (right - np.arange(center, right)) / (right - center)
    return [out.astype(tensor_dtype_to_np_dtype(int(attrs["output_datatype"])))]
