"""benchmarks/suite.py on a tiny selection: the table, the machine's
limits above it and the JSON file (the real models take minutes)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import suite
from tests.support.models import gpt_block, mlp


def test_suite_on_tiny_models(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(suite, "MODELS", {
        "tiny_mlp": lambda: mlp(batch=2, sizes=(16, 8, 4)),
        "tiny_gpt_block": lambda: gpt_block(seq=8, hidden=32, heads=2, ffn=64),
        "not_selected": lambda: pytest.fail("-k must not build this model"),
    })  # fmt: skip
    out = tmp_path / "suite.json"
    code = suite.main(["-k", "tiny", "--runs", "1", "--threads", "1,2", "--matmul-size", "32",
                       "--json", str(out)])  # fmt: skip
    assert code == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("machine: ")
    assert "NumPy sgemm 1024^3" in lines[1]
    assert lines[2].startswith("  Ember matmul 32^3: ")
    assert lines[3].split() == ["model", "compile", "s", "ember", "ms@1", "ort", "ms@1",
                                "ratio@1", "ember", "ms@2", "ort", "ms@2", "ratio@2",
                                "speed-up", "1->2"]  # fmt: skip
    assert [line.split()[0] for line in lines[4:6]] == ["tiny_mlp", "tiny_gpt_block"]
    assert all(len(line.split()) == 9 for line in lines[4:6])
    assert lines[6].startswith("geometric mean of the ratios (Ember / onnxruntime): @1: ")
    result = json.loads(out.read_text())
    assert [m["name"] for m in result["models"]] == ["tiny_mlp", "tiny_gpt_block"]
    assert set(result["geomean_ratio"]) == {"1", "2"}
    assert result["machine"]["limits"]["peak_gflops"] > 0
    for model in result["models"]:
        assert model["max_abs_error"] < 1e-3


def test_half_precision_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """--dtype adds a row per half type with its difference from float32;
    onnxruntime has no bfloat16 Gemm/MatMul on the CPU: that row is Ember's alone."""
    monkeypatch.setattr(suite, "MODELS", {"tiny_mlp": lambda: mlp(batch=2, sizes=(16, 8, 4))})
    out = tmp_path / "suite.json"
    code = suite.main(["--runs", "1", "--threads", "1", "--matmul-size", "32",
                       "--dtype", "fp32,fp16,bf16", "--json", str(out)])  # fmt: skip
    assert code == 0
    lines = capsys.readouterr().out.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("model "))
    assert lines[head].split()[-2:] == ["vs", "fp32"]
    rows = [line.split() for line in lines[head + 1 :] if line.startswith("tiny_mlp ")]
    assert [row[1] if row[1] in ("fp16", "bf16") else "fp32" for row in rows] == [
        "fp32", "fp16", "bf16"
    ]  # fmt: skip
    assert rows[2][4:6] == ["n/a", "n/a"]  # onnxruntime's columns of the bf16 row
    result = json.loads(out.read_text())
    by_name = {m["name"]: m for m in result["models"]}
    assert by_name["tiny_mlp"]["error_to_fp32"] is None
    assert 0 < by_name["tiny_mlp fp16"]["error_to_fp32"] < 3e-3
    assert 0 < by_name["tiny_mlp bf16"]["error_to_fp32"] < 3e-2
    assert by_name["tiny_mlp bf16"]["ort_ms"] == {}  # onnxruntime cannot load it
    assert set(result["geomean_ratio_by_dtype"]) == {"fp32", "fp16", "bf16"}


def test_thread_counts_are_checked() -> None:
    assert suite.thread_counts("1,2,4") == [1, 2, 4]
    for text in ("0", "1,x", ""):
        with pytest.raises(Exception, match="thread counts|expected counts"):
            suite.thread_counts(text)


@pytest.mark.slow
def test_tuning_records_timed_against_the_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """--records times the model with the records' schedules next to the
    default's: a table of both and their ratio's geometric mean."""
    from ember.frontends.onnx import import_onnx
    from ember.options import Options
    from ember.targets.cpu.schedule.tasks import model_tasks
    from ember.targets.tuning_records import Records
    from ember.tuning.runner import InProcessRunner
    from ember.tuning.search import Settings, tune

    model = lambda: mlp(batch=2, sizes=(16, 8, 4))  # noqa: E731
    records = Records(tmp_path / "records.sqlite")
    tune(model_tasks(import_onnx(model()), Options()), records, InProcessRunner(),
         Settings(trials=2, batch=1))  # fmt: skip
    monkeypatch.setattr(suite, "MODELS", {"tiny_mlp": model})
    out = tmp_path / "suite.json"
    code = suite.main(["--runs", "2", "--threads", "1", "--matmul-size", "32",
                       "--records", str(records.path), "--json", str(out)])  # fmt: skip
    assert code == 0
    lines = capsys.readouterr().out.splitlines()
    head = lines.index(next(x for x in lines if x.startswith("model (tuning records)")))
    assert lines[head].split()[-3:] == ["default@1", "tuned@1", "ratio@1"]
    assert lines[head + 1].split()[0] == "tiny_mlp" and len(lines[head + 1].split()) == 4
    assert lines[head + 2].startswith("geometric mean of tuned / default: @1: ")
    assert json.loads(out.read_text())["geomean_tuned_over_default"]["1"] > 0
