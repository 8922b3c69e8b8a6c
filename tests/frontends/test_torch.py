"""PyTorch models through `ember.frontends.torch`: an `nn.Module` with example
inputs, `torch.export.Dim`s as symbols with their ranges, `.pt2` files from
Python and the command line, and the legacy exporter's ops (Trilu). Every
result is compared with PyTorch itself. Skipped without torch
(`pip install -e '.[torch]'`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import ember
from ember.compiler import InputError
from ember.errors import EmberError
from ember.targets.cpu.generic import GenericModel

torch = pytest.importorskip("torch")
pytest.importorskip("onnxscript")
Dim = torch.export.Dim


class _Block(torch.nn.Module):
    """A MobileNetV2-style block: ReLU6, Hardswish, SiLU, a depthwise conv."""

    def __init__(self) -> None:
        super().__init__()
        self.expand = torch.nn.Conv2d(4, 16, 1)
        self.depthwise = torch.nn.Conv2d(16, 16, 3, padding=1, groups=16)
        self.project = torch.nn.Conv2d(16, 4, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.nn.functional.relu6(self.expand(x))
        y = torch.nn.functional.hardswish(self.depthwise(y))
        return x + torch.nn.functional.silu(self.project(y))


class _Attention(torch.nn.Module):
    """nn.MultiheadAttention with a key-padding mask and a causal mask (triu)."""

    def __init__(self) -> None:
        super().__init__()
        self.attention = torch.nn.MultiheadAttention(32, 4, batch_first=True)

    def forward(self, x: torch.Tensor, padding: torch.Tensor) -> torch.Tensor:
        seq = x.shape[1]
        causal = torch.triu(torch.ones(seq, seq, dtype=torch.bool), diagonal=1)
        out, _ = self.attention(x, x, x, key_padding_mask=padding, attn_mask=causal,
                                need_weights=False)  # fmt: skip
        return out


def _same(got: np.ndarray, expected: torch.Tensor) -> None:
    np.testing.assert_allclose(got, expected.detach().numpy(), rtol=1e-4, atol=1e-5)


def test_a_module_with_example_inputs() -> None:
    torch.manual_seed(0)
    block, x = _Block().eval(), torch.randn(2, 4, 9, 9)
    compiled = ember.compile(block, (x,))
    (got,) = compiled(x.numpy())
    _same(got, block(x))
    (from_tensor,) = compiled(x.requires_grad_())  # a torch.Tensor is taken as its array
    np.testing.assert_array_equal(from_tensor, got)


def test_the_export_prints_nothing(capfd: pytest.CaptureFixture[str]) -> None:
    """`verbose=False` keeps the exporter's progress lines off stdout, which the
    frontend does not redirect (another thread's prints would vanish)."""
    from ember.frontends.torch import onnx_from_torch

    onnx_from_torch(torch.nn.ReLU(), (torch.randn(2, 3),))
    assert capfd.readouterr().out == ""


def test_dims_become_symbols_with_their_ranges() -> None:
    torch.manual_seed(1)
    block = _Block().eval()
    batch = Dim("batch", min=1, max=16)
    compiled = ember.compile(block, example_inputs=(torch.randn(2, 4, 8, 8),),
                             dynamic_shapes={"x": {0: batch}})  # fmt: skip
    assert isinstance(compiled, GenericModel)
    assert [str(d) for d in compiled.inputs[0].dims] == ["batch", "4", "8", "8"]
    for n in (1, 3, 16):
        x = torch.randn(n, 4, 8, 8)
        (got,) = compiled(x.numpy())
        _same(got, block(x))
    with pytest.raises(InputError, match="batch = 17 is outside its range 1..16"):
        compiled(np.zeros((17, 4, 8, 8), np.float32))


@pytest.mark.slow
def test_attention_with_padding_and_causal_masks_at_every_length() -> None:
    torch.manual_seed(2)
    attention = _Attention().eval()
    seq = Dim("seq", min=2, max=64)
    example = (torch.randn(2, 5, 32), torch.zeros(2, 5, dtype=torch.bool))
    compiled = ember.compile(attention, example,
                             dynamic_shapes={"x": {1: seq}, "padding": {1: seq}})  # fmt: skip
    for length in (2, 7, 33):
        x = torch.randn(2, length, 32)
        padding = torch.zeros(2, length, dtype=torch.bool)
        padding[1, length // 2 :] = True
        (got,) = compiled(x.numpy(), padding.numpy())
        _same(got, attention(x, padding))


def test_the_legacy_exporter_trilu(tmp_path: Path) -> None:
    """The legacy exporter (opset 17) writes a causal mask as Trilu."""
    torch.manual_seed(3)
    attention = _Attention().eval()
    x, padding = torch.randn(1, 6, 32), torch.zeros(1, 6, dtype=torch.bool)
    path = tmp_path / "legacy.onnx"
    torch.onnx.export(attention, (x, padding), str(path), dynamo=False, opset_version=17,
                      input_names=["x", "padding"])  # fmt: skip
    assert "Trilu" in {node.op_type for node in __import__("onnx").load(str(path)).graph.node}
    (got,) = ember.compile(str(path))(x.numpy(), padding.numpy())
    _same(got, attention(x, padding))


@pytest.mark.slow  # an export, a file and the command line: 15 s
def test_a_pt2_file_from_python_and_the_command_line(tmp_path: Path) -> None:
    torch.manual_seed(4)
    block = _Block().eval()
    program = torch.export.export(block, (torch.randn(2, 4, 8, 8),),
                                  dynamic_shapes={"x": {0: Dim("batch", min=1, max=8)}})  # fmt: skip
    path = tmp_path / "block.pt2"
    torch.export.save(program, str(path))
    compiled = ember.compile(str(path))
    assert isinstance(compiled, GenericModel)
    symbol = str(compiled.inputs[0].dims[0])
    x = torch.randn(3, 4, 8, 8)
    (got,) = compiled(x.numpy())
    _same(got, block(x))
    run = subprocess.run([sys.executable, "-m", "ember.cli", "run", str(path), "--dim",
                          f"{symbol}=3", "--check"], capture_output=True, text=True)  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "-> ok" in run.stdout


def test_mistakes_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(EmberError, match="needs example_inputs"):
        ember.compile(_Block())
    with pytest.raises(EmberError, match="example_inputs and dynamic_shapes are for PyTorch"):
        ember.compile(b"not a module", example_inputs=(1,))
    bad = tmp_path / "bad.pt2"
    bad.write_bytes(b"not an archive")
    with pytest.raises(EmberError, match="bad.pt2: not a torch.export archive"):
        ember.compile(str(bad))


class _Indexing(torch.nn.Module):
    """torch.gather, scatter, scatter_add and index assignment."""

    def forward(
        self, x: torch.Tensor, i: torch.Tensor, u: torch.Tensor
    ) -> tuple[torch.Tensor, ...]:
        rows = x.clone()
        rows[i[:, 0]] = 7.0
        return torch.gather(x, 1, i), x.scatter(1, i, u), x.scatter_add(0, i, u), rows


@pytest.mark.parametrize("dynamo", [True, False])
def test_gathers_and_scatters_from_both_exporters(tmp_path: Path, dynamo: bool) -> None:
    module = _Indexing()
    x, u = torch.randn(4, 5), torch.randn(4, 2)
    i = torch.tensor([[0, 1], [2, 3], [3, 0], [1, 1]])
    if dynamo:
        compiled = ember.compile(module, (x, i, u))
    else:
        path = tmp_path / "indexing.onnx"
        torch.onnx.export(module, (x, i, u), str(path), dynamo=False, opset_version=17)
        compiled = ember.compile(str(path))
    for got, expected in zip(compiled(x.numpy(), i.numpy(), u.numpy()), module(x, i, u),
                             strict=True):  # fmt: skip
        np.testing.assert_array_equal(got, expected.numpy())


class _Decoder(torch.nn.Module):
    """A decoder head: upsampling by every interpolation PyTorch offers, a
    transposed convolution and a skip connection."""

    def __init__(self, mode: str, align_corners: bool | None) -> None:
        super().__init__()
        self.mode, self.align_corners = mode, align_corners
        self.up = torch.nn.ConvTranspose2d(4, 4, 2, stride=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scaled = torch.nn.functional.interpolate(x, scale_factor=2, mode=self.mode,
                                                 align_corners=self.align_corners)  # fmt: skip
        sized = torch.nn.functional.interpolate(x, size=(5, 11), mode=self.mode,
                                                align_corners=self.align_corners)  # fmt: skip
        return torch.relu(self.up(x) + scaled), sized


@pytest.mark.parametrize("mode, align_corners", [("nearest", None), ("bilinear", False),
                                                  ("bilinear", True), ("bicubic", False)])  # fmt: skip
@pytest.mark.parametrize("dynamo", [True, False])
def test_upsampling_from_both_exporters(tmp_path: Path, mode: str, align_corners: bool | None,
                                        dynamo: bool) -> None:  # fmt: skip
    torch.manual_seed(5)
    module, x = _Decoder(mode, align_corners).eval(), torch.randn(2, 4, 6, 7)
    if dynamo:
        compiled = ember.compile(module, (x,), dynamic_shapes={"x": {0: Dim("batch", max=8)}})
        inputs = [x, torch.randn(3, 4, 6, 7)]
    else:
        path = tmp_path / "decoder.onnx"
        torch.onnx.export(module, (x,), str(path), dynamo=False, opset_version=17)
        compiled, inputs = ember.compile(str(path)), [x]
    for sample in inputs:
        for got, expected in zip(compiled(sample.numpy()), module(sample), strict=True):
            _same(got, expected)


@pytest.mark.parametrize("layer", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize(
    "dynamo", [pytest.param(True, marks=pytest.mark.slow), False]
)  # torch.export of a recurrent layer takes 7 to 9 s: with the slow tests
def test_recurrent_layers_from_both_exporters(tmp_path: Path, layer: str, dynamo: bool) -> None:
    """Two bidirectional layers, batch first, matching PyTorch (and, from the
    legacy exporter's file, onnxruntime); from dynamo with a symbolic batch
    and sequence length (one loop over the steps, run at each; dynamo
    unrolls nn.RNN into per-step MatMul and Tanh, its length fixed)."""
    torch.manual_seed(6)
    module = getattr(torch.nn, layer)(4, 6, num_layers=2, batch_first=True, bidirectional=True)
    module.eval()
    x = torch.randn(3, 5, 4)
    if dynamo:
        unrolled = layer == "RNN"
        dims = {0: Dim("batch", max=8), **({} if unrolled else {1: Dim("steps", max=32)})}
        compiled = ember.compile(module, (x,), dynamic_shapes={"input": dims})
        inputs = [x, torch.randn(1, 5, 4)] if unrolled else [x, torch.randn(1, 9, 4),
                                                              torch.randn(4, 1, 4)]  # fmt: skip
    else:
        path = tmp_path / "recurrent.onnx"
        torch.onnx.export(module, (x,), str(path), dynamo=False, opset_version=17)
        compiled, inputs = ember.compile(str(path)), [x]
        import onnxruntime as ort

        session = ort.InferenceSession(str(path))
        want = session.run(None, {session.get_inputs()[0].name: x.numpy()})
        for got, expected in zip(compiled(x.numpy()), want, strict=True):
            np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)
    for sample in inputs:
        got = compiled(sample.numpy())
        y, state = module(sample)
        _same(got[0], y)
        _same(got[1], state[0] if layer == "LSTM" else state)


def test_ops_are_named_by_their_module_path() -> None:
    """Each op's location is the PyTorch module it ran in (torch's name for
    an op of the top module): `ember.dialects.source_names`."""
    from ember.dialects.graph import ConstantOp
    from ember.dialects.source_names import source_names
    from ember.frontends.torch import onnx_from_torch

    proto, _ = onnx_from_torch(_Block(), (torch.randn(2, 4, 9, 9),))
    module = ember.import_onnx(proto)
    names = {name for op in module.walk() if op.name.startswith("graph.")
             and not isinstance(op, ConstantOp) for name in source_names(op)}  # fmt: skip
    assert {"expand", "depthwise", "project"} <= names
    assert all(names), names
