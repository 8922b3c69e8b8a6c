"""Load-back (`ember.load`, `ember run|bench DIR`) and the persistent
compile cache (`ember/cache.py`): hits, a miss for every input of the key,
concurrent writers, corrupted entries, a read-only directory, eviction.

The suite runs with the cache off (`tests/conftest.py`); each test here
turns it on in a directory of its own. Compiling into the cache links a
library, so the tests share what they can: one model compiled once
(`stored`), its entry copied where a test changes it."""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import warnings
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import ember
from ember.cache import CacheRequest, CacheWarning, CompileCache, parse_size
from ember.cli import main
from ember.load_back import CorruptedModelError, IncompatibleBuildError
from ember.options import Options
from ember.report import CompileReport


def _scorer(batch: int | str, seed: int = 0) -> onnx.ModelProto:
    rng = np.random.default_rng(seed)
    weight = numpy_helper.from_array(rng.standard_normal((4, 3)).astype(np.float32), "W")
    bias = numpy_helper.from_array(rng.standard_normal(3).astype(np.float32), "B")
    graph = helper.make_graph(
        [helper.make_node("Gemm", ["x", "W", "B"], ["logits"]),
         helper.make_node("Softmax", ["logits"], ["scores"], axis=1)],
        "scorer", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 4])],
        [helper.make_tensor_value_info("scores", TensorProto.FLOAT, [batch, 3])], [weight, bias],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


X = np.random.default_rng(1).standard_normal((2, 4)).astype(np.float32)


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("EMBER_CACHE", "1")
    monkeypatch.setenv("EMBER_CACHE_DIR", str(folder))
    monkeypatch.delenv("EMBER_CACHE_SIZE", raising=False)
    return folder


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """(the model file, a cache holding its entry, the key), compiled once."""
    folder = tmp_path_factory.mktemp("stored")
    path = folder / "scorer.onnx"
    onnx.save(_scorer(2), path)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EMBER_CACHE", "1")
        patch.setenv("EMBER_CACHE_DIR", str(folder / "cache"))
        report = CompileReport()
        ember.compile(path, threads=2, report=report)
    assert not report.cache_hit and report.cache_key
    return path, folder / "cache", report.cache_key


def _copy_cache(stored: tuple[Path, Path, str], cache_dir: Path) -> Path:
    """The stored entry, copied into this test's cache; returns its folder."""
    _, template, key = stored
    shutil.copytree(template, cache_dir)
    return cache_dir / "v1" / "entries" / key


def test_a_second_compile_is_a_hit_with_bit_identical_outputs(
    stored: tuple[Path, Path, str], cache_dir: Path
) -> None:
    path, _, key = stored
    _copy_cache(stored, cache_dir)
    report = CompileReport()
    model = ember.compile(path, threads=2, report=report)
    assert report.cache_hit and report.cache_key == key
    assert list(report.seconds) == [f"cache hit {key[:16]}"]
    (expected,) = ember.compile(path, threads=2, cache=False)(X)
    (got,) = model(X)
    assert np.array_equal(got, expected)
    assert isinstance(model, ember.CompiledModel)


def test_every_input_of_the_key_changes_it(monkeypatch: pytest.MonkeyPatch) -> None:
    model = _scorer(2).SerializeToString()
    base = CacheRequest(model, Options(threads=2), None, None, "none")
    variants = [
        CacheRequest(_scorer(2, seed=1).SerializeToString(), Options(threads=2)),
        CacheRequest(model, Options(opt_level=1, threads=2)),
        CacheRequest(model, Options(layout="none", threads=2)),
        CacheRequest(model, Options(disabled=("loop-fuse",), threads=2)),
        CacheRequest(model, Options(threads=1)),
        CacheRequest(model, Options(threads=2), {"x": [2, 4]}),
        CacheRequest(model, Options(threads=2), None, {"N": (1, 8)}),
        CacheRequest(model, Options(threads=2), None, None, "auto"),
        CacheRequest(model, Options(threads=2), extra={"sizes": {"N": 3}}),
    ]
    keys = [request.key() for request in (base, *variants)]
    assert len(set(keys)) == len(keys)
    assert CacheRequest(model, Options(threads=2)).key() == keys[0]  # the same: a hit
    from ember import cache, load_back

    for field in load_back.BUILD_FIELDS:  # another Ember, LLVM or CPU
        other = {**load_back.build_identity(), field: "other"}
        monkeypatch.setattr(cache, "build_identity", lambda other=other: other)
        assert base.key() not in keys


def _compile_in_process(path: str, folder: str) -> str:
    os.environ["EMBER_CACHE"] = "1"
    os.environ["EMBER_CACHE_DIR"] = folder
    report = CompileReport()
    (out,) = ember.compile(path, threads=1, report=report)(X)
    return f"{report.cache_hit} {out.sum():.6f}"


@pytest.mark.slow  # two fresh processes import Ember and compile: about 8 s on 2 cores
def test_two_processes_compiling_at_once_both_succeed_and_store_one_entry(
    tmp_path: Path,
) -> None:
    path = tmp_path / "scorer.onnx"
    onnx.save(_scorer(2, seed=3), path)
    folder = tmp_path / "cache"
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        results = pool.starmap(_compile_in_process, [(str(path), str(folder))] * 2)
    assert len({r.split()[1] for r in results}) == 1  # the same outputs
    assert sorted(r.split()[0] for r in results) in (["False", "True"], ["False", "False"])
    assert len(list((folder / "v1" / "entries").iterdir())) == 1
    assert list((folder / "v1" / "tmp").iterdir()) == []


def _flip(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    _replace(path, bytes(data))


def _truncate(path: Path) -> None:
    _replace(path, path.read_bytes()[: path.stat().st_size // 2])


def _replace(path: Path, data: bytes) -> None:
    """Writes a new file (a library or weights this process mapped keep their pages)."""
    scratch = path.with_suffix(".new")
    scratch.write_bytes(data)
    os.replace(scratch, path)


@pytest.mark.parametrize("name", ["libmodel.so", "model.weights"])
@pytest.mark.parametrize("damage", [_flip, _truncate])
def test_a_corrupted_entry_is_detected_and_removed(
    stored: tuple[Path, Path, str], cache_dir: Path, name: str, damage: object
) -> None:
    _, _, key = stored
    entry = _copy_cache(stored, cache_dir)
    damage(entry / name)  # type: ignore[operator]
    with pytest.raises(CorruptedModelError, match=f"{name}: .*the manifest says"):
        ember.load(entry)
    with pytest.warns(CacheWarning, match=f"corrupted compile cache entry {key}: .*{name}"):
        assert CompileCache()._load(key, CompileReport()) is None
    assert not entry.exists()


def test_an_unreadable_manifest_is_a_corrupted_entry(
    stored: tuple[Path, Path, str], cache_dir: Path
) -> None:
    _, _, key = stored
    entry = _copy_cache(stored, cache_dir)
    _truncate(entry / "model.json")
    with pytest.raises(CorruptedModelError, match="model.json: cannot read the manifest"):
        ember.load(entry)
    with pytest.warns(CacheWarning, match=f"corrupted compile cache entry {key}: .*manifest"):
        assert CompileCache()._load(key, CompileReport()) is None
    assert not entry.exists()


def test_a_corrupted_entry_is_rebuilt(stored: tuple[Path, Path, str], cache_dir: Path) -> None:
    path, _, key = stored
    entry = _copy_cache(stored, cache_dir)
    _flip(entry / "model.weights")
    report = CompileReport()
    with pytest.warns(CacheWarning, match="corrupted"):
        model = ember.compile(path, threads=2, report=report)
    assert not report.cache_hit and f"cache store {key[:16]}" in report.seconds
    assert np.array_equal(model(X)[0], ember.compile(path, threads=2, cache=False)(X)[0])
    assert ember.compile(path, threads=2, report=(hit := CompileReport())) and hit.cache_hit


def test_a_read_only_cache_compiles_without_it_with_one_warning(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "scorer.onnx"
    onnx.save(_scorer(2), path)
    cache_dir.mkdir()
    cache_dir.chmod(0o500)
    if hasattr(os, "geteuid") and os.geteuid() == 0:  # root writes anyway: refuse as the OS would

        def refuse(*args: object, **kwargs: object) -> None:
            raise PermissionError(13, "Permission denied")

        monkeypatch.setattr(Path, "mkdir", refuse)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model = ember.compile(path, threads=1)
            ember.compile(path, threads=1)
    finally:
        cache_dir.chmod(0o700)
    assert [str(w.message).split(" (")[0] for w in caught] == [
        f"the compile cache at {cache_dir} cannot be written"
    ]
    assert type(model) is ember.CompiledModel  # compiled in process, as without a cache


def test_a_cache_that_cannot_be_created_compiles_without_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("EMBER_CACHE", "1")
    monkeypatch.setenv("EMBER_CACHE_DIR", str(blocker / "cache"))  # under a file: ENOTDIR
    with pytest.warns(CacheWarning, match="cannot be written"):
        model = ember.compile(_scorer(2), threads=1)
    assert type(model) is ember.CompiledModel


def test_eviction_removes_the_least_recently_used_entries(cache_dir: Path) -> None:
    entries = cache_dir / "v1" / "entries"
    for age, key in enumerate(["c", "b", "a"]):  # a is the oldest
        (entries / key).mkdir(parents=True)
        (entries / key / "model.weights").write_bytes(bytes(1000))
        (entries / key / "used").touch()
        os.utime(entries / key / "used", (1000 - age * 100, 1000 - age * 100))
    cache = CompileCache(limit=2500)
    assert [e.key for e in cache.listing()] == ["a", "b", "c"]
    assert cache.evict(keep="a") == ["b"]  # a was just stored: kept
    assert cache.evict() == []
    assert CompileCache(limit=1000).evict() == ["a"]
    assert CompileCache().clear() == 1 and CompileCache().listing() == []


def test_cache_size_text() -> None:
    assert parse_size("500M") == 500 * 2**20
    assert parse_size("2G") == 2 * 2**30
    assert parse_size("1000") == 1000
    with pytest.raises(ember.EmberError, match="EMBER_CACHE_SIZE"):
        parse_size("lots")


def _compiled_dir(tmp_path: Path, batch: int | str, *flags: str) -> Path:
    path = tmp_path / "scorer.onnx"
    onnx.save(_scorer(batch), path)
    out = tmp_path / "out"
    assert main(["compile", str(path), "-o", str(out), "-q", "--threads", "2", *flags]) == 0
    return out


def test_load_back_runs_as_ember_compile_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _compiled_dir(tmp_path, 2)
    model = ember.load(out, threads=1)
    (expected,) = ember.compile(tmp_path / "scorer.onnx", threads=2, cache=False)(X)
    assert np.array_equal(model(X)[0], expected)
    assert np.array_equal(model.run({"x": X})[0], expected)
    model.set_threads(0)
    with pytest.raises(ember.EmberError, match=r"got shape \[3, 4\]"):
        model(np.zeros((3, 4), np.float32))
    capsys.readouterr()
    assert main(["run", str(out), "-q"]) == 0
    assert "scores: float32[2, 3]" in capsys.readouterr().out
    assert main(["bench", str(out), "-q", "--runs", "2"]) == 0
    assert "ember" in capsys.readouterr().out
    assert main(["run", str(out), "-O1"]) == 1
    assert "-O applies to compiling" in capsys.readouterr().err


def test_load_back_of_a_symbolic_model_with_versions(tmp_path: Path) -> None:
    out = _compiled_dir(tmp_path, "N", "--dim", "N=1..64", "--specialize", "N=1")
    model = ember.load(out)
    compiled = ember.compile(tmp_path / "scorer.onnx", dims={"N": (1, 64)}, cache=False)
    for batch in (1, 5):
        x = np.random.default_rng(batch).standard_normal((batch, 4)).astype(np.float32)
        assert np.allclose(model(x)[0], compiled(x)[0], rtol=1e-6, atol=1e-7)
    with pytest.raises(ember.EmberError, match="N = 65 is outside its range 1..64"):
        model(np.zeros((65, 4), np.float32))


def test_load_back_refuses_another_build_naming_what_differs(tmp_path: Path) -> None:
    out = _compiled_dir(tmp_path, 2)
    for field, shown in [
        ("cpu", "compiled for the CPU other, this is"),
        ("ember", "compiled by Ember other, this is"),
        ("ember_source", "compiled by Ember with source hash other, this is"),
        ("llvm", "compiled with LLVM other, this is"),
        ("llvmlite", "compiled with llvmlite other, this is"),
        ("cpu_features", "compiled for other CPU features than this CPU's (differing: "),
    ]:
        manifest = json.loads((out / "model.json").read_text())
        original = manifest["build"][field]
        manifest["build"][field] = "other"
        (out / "model.json").write_text(json.dumps(manifest))
        with pytest.raises(IncompatibleBuildError) as error:
            ember.load(out)
        assert shown in str(error.value) and "\n" not in str(error.value)
        manifest["build"][field] = original
        (out / "model.json").write_text(json.dumps(manifest))
    assert ember.load(out)(X)[0].shape == (2, 3)


def test_ember_run_and_bench_hit_what_ember_compile_stored(
    stored: tuple[Path, Path, str], cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, _, key = stored
    _copy_cache(stored, cache_dir)
    assert main(["run", str(path), "--threads", "2"]) == 0
    assert f"cache hit {key[:16]}" in capsys.readouterr().err
    assert main(["bench", str(path), "--threads", "2", "--runs", "1"]) == 0
    assert f"cache hit {key[:16]}" in capsys.readouterr().err
    assert main(["run", str(path), "--threads", "2", "--no-cache"]) == 0
    assert "cache" not in capsys.readouterr().err


def test_the_onnx_backend_reuses_a_compiled_model(cache_dir: Path) -> None:
    from ember.onnx_backend import EmberBackend

    model = _scorer(2, seed=5)
    first = EmberBackend.prepare(model)
    second = EmberBackend.prepare(model)
    assert not first.compiled.report.cache_hit and second.compiled.report.cache_hit
    assert np.array_equal(first.run([X])[0], second.run([X])[0])


def test_ember_cache_info_and_clear(
    stored: tuple[Path, Path, str], cache_dir: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    path, _, key = stored
    _copy_cache(stored, cache_dir)
    monkeypatch.setenv("EMBER_CACHE_SIZE", "100M")
    assert main(["cache", "info"]) == 0
    shown = capsys.readouterr().out
    assert f"{cache_dir}: 1 entries" in shown and "of 100 MiB" in shown
    assert key in shown and str(path) in shown
    assert main(["cache", "clear"]) == 0
    assert capsys.readouterr().out == f"{cache_dir}: removed 1 entries\n"
    assert CompileCache().listing() == []


def test_without_a_c_compiler_the_model_compiles_without_the_cache(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CC", "")
    monkeypatch.setenv("PATH", str(cache_dir))  # no cc, gcc or clang on it
    with pytest.warns(CacheWarning, match="needs a C compiler"):
        model = ember.compile(_scorer(2, seed=7), threads=1)
    assert type(model) is ember.CompiledModel
