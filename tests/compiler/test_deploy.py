"""`ember compile -o DIR` output runs without Python: a C program built with
the system compiler loads the library and the weights and matches Python."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import ember
from tests.support.models import mlp

C_PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
#include "model.h"

static void *read_file(const char *path, size_t bytes) {
    void *data = aligned_alloc(64, (bytes + 63) / 64 * 64);
    FILE *f = fopen(path, "rb");
    if (!f || fread(data, 1, bytes, f) != bytes) { fprintf(stderr, "cannot read %s\n", path); exit(2); }
    fclose(f);
    return data;
}

int main(int argc, char **argv) {
    size_t in_count = strtoul(argv[3], 0, 10), out_count = strtoul(argv[5], 0, 10);
    void *weights = read_file(argv[1], MODEL_WEIGHTS_BYTES);
    void *arena = aligned_alloc(64, MODEL_ARENA_BYTES);
    float *input = read_file(argv[2], in_count * sizeof(float));
    float *output = malloc(out_count * sizeof(float));
    model_buffers buffers = {input, output};
    model_run(&buffers, weights, arena);
    FILE *f = fopen(argv[4], "wb");
    fwrite(output, sizeof(float), out_count, f);
    fclose(f);
    return 0;
}
"""


@pytest.mark.skipif(
    shutil.which("cc") is None and shutil.which("gcc") is None, reason="needs a C compiler"
)
def test_c_program_matches_python(tmp_path: Path) -> None:
    model = mlp(batch=4, sizes=(32, 64, 10))
    model_path = tmp_path / "mlp.onnx"
    model_path.write_bytes(model.SerializeToString())
    out = tmp_path / "out"
    result = subprocess.run([sys.executable, "-m", "ember.cli", "compile", str(model_path), "-o", str(out)],
                            capture_output=True, text=True)  # fmt: skip
    assert result.returncode == 0, result.stderr
    manifest = json.loads((out / "model.json").read_text())
    assert manifest["inputs"] == [
        {"name": "input", "c_name": "input", "shape": [4, 32], "dtype": "float32"}
    ]
    header = (out / "model.h").read_text()
    assert (
        "void model_run(const model_buffers *buffers, const void *weights, void *arena);" in header
    )
    assert '    const float *input;  /* input "input": float32[4, 32] */' in header
    assert '    float *probs;  /* output "probs": float32[4, 10] */' in header
    (tmp_path / "main.c").write_text(C_PROGRAM)
    compiler = shutil.which("cc") or shutil.which("gcc")
    subprocess.run([compiler, "-O2", "-o", str(tmp_path / "main"), str(tmp_path / "main.c"), f"-I{out}",
                    f"-L{out}", "-lmodel", f"-Wl,-rpath,{out}"], check=True)  # fmt: skip
    x = np.random.default_rng(0).standard_normal((4, 32)).astype(np.float32)
    (tmp_path / "x.bin").write_bytes(x.tobytes())
    subprocess.run([str(tmp_path / "main"), str(out / "model.weights"), str(tmp_path / "x.bin"), str(x.size),
                    str(tmp_path / "y.bin"), "40"], check=True)  # fmt: skip
    from_c = np.frombuffer((tmp_path / "y.bin").read_bytes(), dtype=np.float32).reshape(4, 10)
    (from_python,) = ember.compile(model)(x)
    np.testing.assert_array_equal(from_c, from_python)


def test_unwritable_output_directory(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    result = subprocess.run([sys.executable, "-m", "ember.cli", "compile", "light:squeezenet", "-o",
                             str(blocker / "out")], capture_output=True, text=True)  # fmt: skip
    assert result.returncode == 1
    assert "cannot write the output directory" in result.stderr
    assert "Traceback" not in result.stderr
