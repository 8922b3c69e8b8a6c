"""benchmarks/gpu_models.py without a GPU: its guard when the cuda target is
missing, the dry run's table (the deploy writer stubbed with a hand-written
program's PTX where the target is missing; the real one where it exists),
and the GPU table's code path with the CPU target standing in for the
GPU (every GPU-only column then says why it is empty)."""

from __future__ import annotations

import argparse
import json
import shutil
import time
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest

from benchmarks import gpu_models
from ember.targets.cuda import runtime
from ember.targets.registry import target_names
from tests.support.cuda_programs import model_parts
from tests.support.models import mlp

HAS_CUDA_TARGET = "cuda" in target_names()
needs_ptxas = pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas is not on PATH")


def tiny_mlp() -> onnx.ModelProto:
    return mlp(batch=2, sizes=(16, 8, 4))


@pytest.mark.skipif(HAS_CUDA_TARGET, reason="the cuda target exists")
def test_without_the_cuda_target_it_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    assert gpu_models.main(["--dry-run"]) == 2
    out = capsys.readouterr().out
    assert out.startswith("error: this build of Ember has no 'cuda' target")


def test_the_sgemm_model_is_one_valid_matmul() -> None:
    model = gpu_models.sgemm_model(8)
    onnx.checker.check_model(model, full_check=True)
    assert [node.op_type for node in model.graph.node] == ["MatMul"]


def test_launches_are_found_under_any_key_of_a_manifest(tmp_path: Path) -> None:
    manifest = tmp_path / "m.json"
    manifest.write_text(json.dumps({"model": {"plan": {"launches": [{"kernel": "k"}] * 3}}}))
    assert len(gpu_models._launches(manifest)) == 3
    manifest.write_text("not json")
    assert gpu_models._launches(manifest) == []


@needs_ptxas
def test_the_dry_run_table_from_a_stubbed_deploy_writer(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ptx, plan = model_parts()

    def deploy(model: Any, out_dir: Path, name: str, target: str) -> None:
        assert target == "cuda"
        (out_dir / f"{name}.ptx").write_text(ptx)
        (out_dir / f"{name}.json").write_text(json.dumps({"launch_plan": plan.to_json()}))

    import ember.deploy

    monkeypatch.setattr(ember.deploy, "compile_to_directory", deploy)
    monkeypatch.setattr(gpu_models, "require_cuda_target", lambda: None)
    monkeypatch.setattr(gpu_models, "MODELS", {"tiny_mlp": tiny_mlp})
    assert gpu_models.main(["--dry-run", "-k", "tiny", "--no-sgemm"]) == 0
    header, row = capsys.readouterr().out.splitlines()
    assert header.split()[:3] == ["model", "compile", "s"]
    name, _, launches, kernels, registers, shared, spills = row.split()
    assert (name, launches, kernels, shared, spills) == ("tiny_mlp", "2", "2", "0", "0")
    assert int(registers) > 0


@needs_ptxas
@pytest.mark.skipif(not HAS_CUDA_TARGET, reason="the cuda target is not in this build")
def test_the_dry_run_of_the_real_target_on_a_tiny_mlp(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(gpu_models, "MODELS", {"tiny_mlp": tiny_mlp})
    assert gpu_models.main(["--dry-run", "-k", "tiny", "--no-sgemm"]) == 0
    row = capsys.readouterr().out.splitlines()[1].split()
    assert row[0] == "tiny_mlp" and int(row[2]) > 0 and int(row[3]) > 0


def stand_in_for_the_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CPU target compiles, no GPU is asked for."""
    monkeypatch.setattr(gpu_models, "TARGET", "cpu")
    monkeypatch.setattr(gpu_models, "require_cuda_target", lambda: None)
    monkeypatch.setattr(runtime, "cuda_available", lambda: None)
    monkeypatch.setattr(gpu_models, "has_ort_cuda", lambda: False)
    monkeypatch.setattr(gpu_models, "torch_cuda", lambda: None)


def test_the_gpu_table_with_the_cpu_standing_in(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    stand_in_for_the_gpu(monkeypatch)
    monkeypatch.setattr(gpu_models, "MODELS", {"tiny_mlp": tiny_mlp, "other": pytest.fail})
    assert gpu_models.main(["-k", "tiny", "--no-sgemm", "--runs", "2", "--warmup", "0"]) == 0
    header, row = capsys.readouterr().out.splitlines()
    assert header == gpu_models.HEADER
    assert row.split()[0] == "tiny_mlp" and " ok  " in row
    assert "no launch_times" in row and "no CUDAExecutionProvider" in row
    assert "torch: no CUDA build or no GPU" in row


class TimedOnTheHost:
    """A compiled model with `launch_times` measured on the host clock."""

    def __init__(self, model: Any):
        self.model = model
        self.inputs = model.inputs

    def __call__(self, *arrays: np.ndarray) -> list[np.ndarray]:
        return self.model(*arrays)

    def launch_times(self, arrays: list[np.ndarray], repeat: int) -> list[float]:
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            self.model(*arrays)
            times.append(time.perf_counter() - start)
        return times


def test_the_sgemm_lines_against_numpy_without_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    stand_in_for_the_gpu(monkeypatch)
    compile_for_cpu = gpu_models.ember.compile
    monkeypatch.setattr(gpu_models, "SGEMM_SIZE", 64)
    monkeypatch.setattr(
        gpu_models.ember, "compile", lambda m, target: TimedOnTheHost(compile_for_cpu(m, target))
    )
    text, ok = gpu_models.sgemm(argparse.Namespace(runs=2, warmup=0))
    lines = text.splitlines()
    assert ok, text
    assert lines[0].startswith("sgemm 64^3: compile ") and lines[0].endswith(" GFLOP/s")
    assert "no CUDA build of torch" in lines[1]
    assert lines[2].endswith(" ok")
