"""`ember compile -o DIR` of a model with symbolic dims: one library runs at
every size from a C program (matching onnxruntime), and its C entry check
rejects shapes that do not fit with an error code and a message naming the
input, the axis and the symbol."""

from __future__ import annotations

import ctypes
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from ember.dialects.graph.dims import parse_dim
from tests.support.models import run_onnxruntime, transformer_encoder

HIDDEN = 32

C_PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "encoder.h"

static void *read_file(const char *path, size_t bytes) {
    void *data = aligned_alloc(64, (bytes + 63) / 64 * 64 + 64);
    FILE *f = fopen(path, "rb");
    if (!f || fread(data, 1, bytes, f) != bytes) { fprintf(stderr, "cannot read %s\n", path); exit(20); }
    fclose(f);
    return data;
}

/* usage: main WEIGHTS N S HIDDEN.bin MASK.bin OUT.bin [mask-seq | hidden-width | arena] */
int main(int argc, char **argv) {
    int64_t n = atoll(argv[2]), s = atoll(argv[3]);
    const char *fault = argc > 7 ? argv[7] : "";
    encoder_shapes shapes = {.hidden = {n, s, 32}, .mask = {n, s}};
    if (!strcmp(fault, "mask-seq")) shapes.mask[1] = s + 1;
    if (!strcmp(fault, "hidden-width")) shapes.hidden[2] = 31;
    size_t arena_bytes = 0;
    int code = encoder_prepare(&shapes, &arena_bytes);
    if (code != ENCODER_OK) { fprintf(stderr, "prepare %d: %s\n", code, encoder_error()); return code; }
    printf("arena %zu\n", arena_bytes);
    if (shapes.output[0] != n || shapes.output[1] != s || shapes.output[2] != 32) return 21;
    void *weights = read_file(argv[1], ENCODER_WEIGHTS_BYTES);
    float *hidden = read_file(argv[4], (size_t)(n * s * 32) * sizeof(float));
    int64_t *mask = read_file(argv[5], (size_t)(n * s) * sizeof(int64_t));
    float *output = malloc((size_t)(n * s * 32) * sizeof(float));
    void *arena = aligned_alloc(64, (arena_bytes + 63) / 64 * 64);
    if (!strcmp(fault, "arena")) arena_bytes -= 1;
    encoder_buffers buffers = {hidden, mask, output};
    code = encoder_run(&buffers, &shapes, weights, arena, arena_bytes);
    if (code != ENCODER_OK) { fprintf(stderr, "run %d: %s\n", code, encoder_error()); return code; }
    FILE *f = fopen(argv[6], "wb");
    fwrite(output, sizeof(float), (size_t)(n * s * 32), f);
    fclose(f);
    return 0;
}
"""


def _build(folder: Path, model: onnx.ModelProto, name: str, program: str, *flags: str) -> Path:
    """`model` compiled by the CLI into `folder/out` as `name`, and `program`
    built against it as `folder/main`; returns the folder."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("needs a C compiler")
    (folder / f"{name}.onnx").write_bytes(model.SerializeToString())
    out = folder / "out"
    result = subprocess.run([sys.executable, "-m", "ember.cli", "compile", str(folder / f"{name}.onnx"),
                             "-o", str(out), "--name", name, *flags],
                            capture_output=True, text=True)  # fmt: skip
    assert result.returncode == 0, result.stderr
    (folder / "main.c").write_text(program)
    subprocess.run([compiler, "-std=c11", "-Wall", "-Werror", "-O2", "-o", str(folder / "main"),
                    str(folder / "main.c"), f"-I{out}", f"-L{out}", f"-l{name}",
                    f"-Wl,-rpath,{out}"], check=True)  # fmt: skip
    return folder


def _encoder() -> onnx.ModelProto:
    return transformer_encoder(seq="S", batch="N", hidden=HIDDEN, heads=2, ffn=64)


@pytest.fixture(scope="module")
def deployed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The encoder (symbols N and S, S in 1..64), generic only."""
    return _build(tmp_path_factory.mktemp("symbolic"), _encoder(), "encoder", C_PROGRAM,
                  "--dim", "S=1..64")  # fmt: skip


@pytest.fixture(scope="module")
def versioned(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The encoder with static versions for N=2 and S in {5, 7} besides the generic one."""
    return _build(tmp_path_factory.mktemp("versioned"), _encoder(), "encoder", C_PROGRAM,
                  "--specialize", "N=2", "--specialize", "S=5,7")  # fmt: skip


def _run(folder: Path, batch: int, seq: int, *fault: str) -> tuple[subprocess.CompletedProcess[str], dict[str, np.ndarray]]:  # fmt: skip
    rng = np.random.default_rng(batch * 100 + seq)
    feeds = {"hidden": rng.standard_normal((batch, seq, HIDDEN)).astype(np.float32),
             "mask": (rng.random((batch, seq)) > 0.2).astype(np.int64)}  # fmt: skip
    feeds["hidden"].tofile(folder / "hidden.bin")
    feeds["mask"].tofile(folder / "mask.bin")
    result = subprocess.run([str(folder / "main"), str(folder / "out" / "encoder.weights"), str(batch),
                             str(seq), str(folder / "hidden.bin"), str(folder / "mask.bin"),
                             str(folder / "y.bin"), *fault], capture_output=True, text=True)  # fmt: skip
    return result, feeds


def _assert_matches_onnxruntime(folder: Path, batch: int, seq: int) -> int:
    """Runs the program at these sizes, checks its output; returns its arena."""
    result, feeds = _run(folder, batch, seq)
    assert result.returncode == 0, result.stderr
    got = np.fromfile(folder / "y.bin", dtype=np.float32).reshape(batch, seq, HIDDEN)
    (expected,) = run_onnxruntime(onnx.load(folder / "encoder.onnx"), feeds)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
    return int(result.stdout.split()[-1])


@pytest.mark.parametrize(("batch", "seq"), [(1, 1), (1, 7), (3, 5), (2, 64)])
def test_one_library_runs_at_every_size(deployed: Path, batch: int, seq: int) -> None:
    _assert_matches_onnxruntime(deployed, batch, seq)


@pytest.mark.parametrize(("batch", "seq", "static"), [pytest.param(2, 5, True, marks=pytest.mark.slow),
                                                      (2, 7, True), (1, 5, False), (3, 9, False)])  # fmt: skip
def test_specialised_versions_run_where_the_sizes_match(
    versioned: Path, batch: int, seq: int, static: bool
) -> None:
    arena = _assert_matches_onnxruntime(versioned, batch, seq)
    manifest = json.loads((versioned / "out" / "encoder.json").read_text())
    versions = {(v["sizes"]["N"], v["sizes"]["S"]): v["arena_bytes"] for v in manifest["versions"]}
    assert sorted(versions) == [(2, 5), (2, 7)]
    generic = max(parse_dim(manifest["arena_formula"]).evaluate({"N": batch, "S": seq}), 64)
    assert arena == (versions[batch, seq] if static else generic)


@pytest.mark.parametrize(("seq", "fault", "code", "message"), [
    (7, "mask-seq", 1, "prepare 1: input 'mask' axis 1 is 8, but S is 7 from input 'hidden' axis 1"),
    (65, "", 2, "prepare 2: input 'hidden' axis 1: S = 65 is outside its range 1..64"),
    (7, "hidden-width", 1, "prepare 1: input 'hidden' [N, S, 32] axis 2 is 31, not 32"),
    (7, "arena", 3, "run 3: arena_bytes is "),
])  # fmt: skip
def test_the_entry_check_rejects_shapes_that_do_not_fit(
    deployed: Path, seq: int, fault: str, code: int, message: str
) -> None:
    result, _ = _run(deployed, 2, seq, *([fault] if fault else []))
    assert result.returncode == code, result.stderr
    assert result.stderr.startswith(message), result.stderr


def test_by_default_a_static_version_runs_at_the_low_end_of_the_ranges(deployed: Path) -> None:
    manifest = json.loads((deployed / "out" / "encoder.json").read_text())
    ((sizes, arena),) = [(v["sizes"], v["arena_bytes"]) for v in manifest["versions"]]
    assert sizes == {"N": 1, "S": 1}
    assert _assert_matches_onnxruntime(deployed, 1, 1) == arena
    generic = parse_dim(manifest["arena_formula"]).evaluate({"N": 1, "S": 2})
    assert _assert_matches_onnxruntime(deployed, 1, 2) == max(generic, 64)


@pytest.mark.slow
def test_specialize_none_is_the_generic_version_alone(tmp_path: Path) -> None:
    out = tmp_path / "out"
    model = tmp_path / "encoder.onnx"
    model.write_bytes(_encoder().SerializeToString())
    result = subprocess.run([sys.executable, "-m", "ember.cli", "compile", str(model), "-o", str(out),
                             "--specialize", "none", "-q"], capture_output=True, text=True)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert json.loads((out / "model.json").read_text())["versions"] == []
    assert "One generic version runs at every size" in (out / "model.h").read_text()


def test_header_and_manifest_list_the_symbols(deployed: Path) -> None:
    out = deployed / "out"
    manifest = json.loads((out / "encoder.json").read_text())
    assert manifest["symbols"] == [{"name": "N", "range": [1, None]},
                                   {"name": "S", "range": [1, 64]}]  # fmt: skip
    assert manifest["inputs"][0]["shape"] == ["N", "S", HIDDEN]
    assert manifest["prepare"] == "encoder_prepare"
    assert "arena_bytes" not in manifest and "S" in manifest["arena_formula"]
    header = (out / "encoder.h").read_text()
    assert "int encoder_prepare(encoder_shapes *shapes, size_t *arena_bytes);" in header
    assert '    int64_t mask[2];  /* input "mask" */' in header
    assert " *   S        1..64\n" in header
    assert "#define ENCODER_ERROR_RANGE 2\n" in header
    library = ctypes.CDLL(str(out / "libencoder.so"))
    for exported in ("encoder_prepare", "encoder_run", "encoder_error", "encoder_set_threads"):
        assert hasattr(library, exported)
    assert not hasattr(library, "encoder_kernel")  # only the entry check calls the kernel


POOL_PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
#include "tail.h"

/* usage: main WEIGHTS N: runs x = 0, 1, 2, ... of shape [1, 1, N, 4] and prints y */
int main(int argc, char **argv) {
    int64_t n = atoll(argv[2]);
    tail_shapes shapes = {.x = {1, 1, n, 4}};
    size_t arena_bytes = 0;
    int code = tail_prepare(&shapes, &arena_bytes);
    if (code != TAIL_OK) { fprintf(stderr, "prepare %d: %s\n", code, tail_error()); return code; }
    float *x = malloc((size_t)(n * 4) * sizeof(float)), *y = malloc((size_t)(n * 4) * sizeof(float));
    for (int64_t i = 0; i < n * 4; ++i) x[i] = (float)i;
    void *weights = aligned_alloc(64, 64), *arena = aligned_alloc(64, (arena_bytes + 63) / 64 * 64);
    tail_buffers buffers = {x, y};
    code = tail_run(&buffers, &shapes, weights, arena, arena_bytes);
    if (code != TAIL_OK) { fprintf(stderr, "run %d: %s\n", code, tail_error()); return code; }
    printf("%lld", (long long)shapes.y[2]);
    for (int64_t i = 0; i < shapes.y[2] * 4; ++i) printf(" %g", y[i]);
    printf("\n");
    return 0;
}
"""


def _pool_model() -> onnx.ModelProto:
    """A 2 x 1 max-pool down a symbolic image height N: windows over
    symbolic image sizes do not lower in the generic version yet, so only
    specialised versions exist."""
    node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 1])
    graph = helper.make_graph([node], "tail",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, "N", 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, "M", 4])])  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_without_a_generic_version_other_sizes_are_an_error(tmp_path: Path) -> None:
    folder = _build(tmp_path, _pool_model(), "tail", POOL_PROGRAM, "--specialize", "N=2,3")
    weights = str(folder / "out" / "tail.weights")
    done = subprocess.run([str(folder / "main"), weights, "3"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["2", *(str(v) for v in range(4, 12))]
    other = subprocess.run([str(folder / "main"), weights, "4"], capture_output=True, text=True)
    assert other.returncode == 5
    assert (
        other.stderr == "prepare 5: no version of the model for N=4: it was compiled for N=2; N=3\n"
    )
    assert (
        "(its ops do not all lower with symbolic sizes yet)"
        in (folder / "out" / "tail.h").read_text()
    )
