"""docs/deploying.md's example, run as written: the Python that builds the
model, the shell steps (ember compile, cc, ./main), the C program and the
ctypes script, with the printed numbers checked against onnxruntime."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest

from tests.support.models import run_onnxruntime

DOC = Path(__file__).resolve().parents[2] / "docs" / "deploying.md"


def _blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```$", DOC.read_text(), re.MULTILINE | re.DOTALL)


def _block(language: str, containing: str) -> str:
    (block,) = [b for b in _blocks(language) if containing in b]
    return block


def _printed(stdout: str) -> dict[str, np.ndarray]:
    """`name[row]: v v v` lines as one array per name."""
    rows: dict[str, list[list[float]]] = {}
    for line in stdout.splitlines():
        name, _, values = line.partition(":")
        rows.setdefault(name.split("[")[0], []).append([float(v) for v in values.split()])
    return {name: np.array(values, dtype=np.float32) for name, values in rows.items()}


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The doc's steps, run in a scratch folder; returns it and ./main's output."""
    if shutil.which("cc") is None:
        pytest.skip("needs a C compiler")
    folder = tmp_path_factory.mktemp("deploying")
    (folder / "make_classifier.py").write_text(_block("python", "make_graph"))
    (folder / "main.c").write_text(_block("c", "int main"))
    tools = {"python3": sys.executable, "ember": f"{sys.executable} -m ember.cli"}
    stdout = ""
    for line in _block("sh", "ember compile").splitlines():
        program, _, rest = line.partition(" ")
        command = f"{tools.get(program, program)} {rest}"
        result = subprocess.run(["bash", "-c", command], cwd=folder, capture_output=True, text=True)
        assert result.returncode == 0, f"{line}: {result.stderr}"
        stdout = result.stdout
    return folder, stdout


def _expected(folder: Path) -> dict[str, np.ndarray]:
    model = onnx.load(folder / "classifier.onnx")
    x = np.fromfile(folder / "x.bin", dtype=np.float32).reshape(2, 4)
    logits, probabilities = run_onnxruntime(model, {"x": x})
    return {"logits": logits, "class": probabilities}


def _assert_matches(printed: dict[str, np.ndarray], expected: dict[str, np.ndarray]) -> None:
    assert printed.keys() == expected.keys()
    for name, want in expected.items():  # Gemm's sums may be ordered differently
        np.testing.assert_allclose(printed[name], want, rtol=1e-5, atol=1e-6, err_msg=name)


def test_the_c_program_prints_what_onnxruntime_computes(example: tuple[Path, str]) -> None:
    folder, stdout = example
    _assert_matches(_printed(stdout), _expected(folder))


def test_the_header_excerpt_is_what_ember_writes(example: tuple[Path, str]) -> None:
    folder, _ = example
    header = (folder / "out" / "classifier.h").read_text()
    assert _block("c", "typedef struct") in header
    for macro in re.findall(r"`(CLASSIFIER_\w+)`", DOC.read_text()):
        assert f"#define {macro} " in header


def test_the_ctypes_script_prints_the_same(example: tuple[Path, str]) -> None:
    folder, stdout = example
    (folder / "run_with_ctypes.py").write_text(_block("python", "ctypes.CDLL"))
    result = subprocess.run([sys.executable, "run_with_ctypes.py"], cwd=folder,
                            capture_output=True, text=True, check=True)  # fmt: skip
    assert result.stdout == stdout


def test_the_build_command_is_warning_free(example: tuple[Path, str]) -> None:
    folder, _ = example
    build = next(line for line in _block("sh", "cc ").splitlines() if line.startswith("cc "))
    build = build.replace('"$PWD/out"', str(folder / "out")).replace("-o main ", "-o strict ")
    strict = [*shlex.split(build), "-Wextra", "-pedantic", "-Werror"]
    subprocess.run(strict, cwd=folder, check=True)


def test_the_doc_is_linked_from_the_readme() -> None:
    readme = (DOC.parents[1] / "README.md").read_text()
    assert "docs/deploying.md" in readme
