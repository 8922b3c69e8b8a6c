"""`ember run|compile|bench --target npu`, in process (`ember.cli.main`)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest

import ember
from ember.cli import main
from ember.dialects.npu.machine import NpuParams
from ember.targets.npu.assembler import assemble, disassemble
from ember.targets.npu.simulator.functional import run_program
from tests.support.models import mlp


@pytest.fixture
def model(tmp_path: Path) -> str:
    path = tmp_path / "mlp.onnx"
    onnx.save(mlp(batch=4, sizes=(20, 24, 10)), path)
    return str(path)


def test_run_checks_against_onnxruntime_and_the_reference(model: str, capsys) -> None:
    assert main(["run", model, "--target", "npu", "--check", "-q"]) == 0
    out = capsys.readouterr().out
    assert "output(s) from npu" in out
    assert "check probs: max abs error" in out and "against reference" in out
    assert "MISMATCH" not in out


def test_compile_writes_programs_images_and_a_manifest(model: str, tmp_path: Path,
                                                       capsys) -> None:  # fmt: skip
    """The binary disassembles to a program that assembles to the same bytes;
    run on its DRAM image with the input written where the manifest says,
    it computes what `ember run --target npu` does before the host's Softmax."""
    out = tmp_path / "out"
    assert main(["compile", model, "--target", "npu", "-o", str(out), "-q"]) == 0
    printed = capsys.readouterr().out.split()
    assert [Path(p).name for p in printed] == ["model.npu0.npu", "model.npu0.dram",
                                               "model.npu.json"]  # fmt: skip
    manifest = json.loads((out / "model.npu.json").read_text())
    assert manifest["host_ops"] == ["graph.softmax"]
    assert NpuParams(**manifest["params"]) == NpuParams()
    (segment,) = manifest["segments"]
    binary = (out / segment["program"]).read_bytes()
    assert assemble(disassemble(binary)) == binary
    dram = np.frombuffer((out / segment["dram_image"]).read_bytes(), np.uint8).copy()
    x = np.random.default_rng(0).standard_normal((4, 20)).astype(np.float32)
    (given,), (result,) = segment["inputs"], segment["outputs"]
    dram[given["address"] : given["address"] + x.nbytes] = x.view(np.uint8).ravel()
    run_program(binary, dram)
    logits = (
        dram[result["address"] : result["address"] + 4 * 10 * 4].view(np.float32).reshape(4, 10)
    )
    with_logits = onnx.load(model)
    softmax = with_logits.graph.node[-1]
    with_logits.graph.output.append(
        onnx.helper.make_tensor_value_info(softmax.input[0], onnx.TensorProto.FLOAT, None)
    )
    want = ember.reference.run(ember.import_onnx(with_logits), [x])[1]
    np.testing.assert_allclose(logits, want, rtol=1e-5, atol=1e-6)


def test_bench_prints_cycles_per_layer(model: str, capsys) -> None:
    assert main(["bench", model, "--target", "npu", "-q"]) == 0
    out = capsys.readouterr().out
    assert "cycles in all" in out
    assert (
        "fc0 (graph.gemm), relu0 (graph.relu)" in out
        and "on the host: probs (graph.softmax)" in out
    )


def test_bench_plots_the_cycles(model: str, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    plot = tmp_path / "cycles.png"
    assert main(["bench", model, "--target", "npu", "-q", "--plot", str(plot)]) == 0
    assert plot.read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize(("argv", "message"), [
    (["compile", "--target", "npu", "-o", "out", "--specialize", "N=1"], "--specialize applies"),
    (["bench", "--target", "npu", "--profile"], "--profile times CPU kernels"),
])  # fmt: skip
def test_options_the_npu_does_not_take_are_errors(model: str, argv: list[str], message: str,
                                                  capsys) -> None:  # fmt: skip
    assert main([argv[0], model, *argv[1:], "-q"]) == 1
    assert message in capsys.readouterr().err


def test_each_stage_line_names_one_piece_of_work(tmp_path: Path, capsys) -> None:
    """MatMul, Sigmoid (on the host), MatMul: two NPU programs and a host
    part, each with its own stage line."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    weights = [numpy_helper.from_array(rng.standard_normal((16, 16)).astype(np.float32), name)
               for name in ("w1", "w2")]  # fmt: skip
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w1"], ["h"]), helper.make_node("Sigmoid", ["h"], ["s"]),
         helper.make_node("MatMul", ["s", "w2"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [8, 16])], weights,
    )  # fmt: skip
    path = tmp_path / "two.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    assert main(["run", str(path), "--target", "npu"]) == 0
    stages = [line.split()[1:-1] for line in capsys.readouterr().err.splitlines()
              if line.startswith("ember: ")]  # fmt: skip
    names = [" ".join(words) for words in stages]
    assert names == ["import", "graph", "partition", "npu npu0", "host 1", "npu npu1", "cycles",
                     "run"]  # fmt: skip
