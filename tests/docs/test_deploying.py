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


def _run_example(
    factory: pytest.TempPathFactory, name: str, sources: dict[str, tuple[str, str]]
) -> tuple[Path, str]:
    """Writes each source file (the doc's block of that language holding
    that text), runs the shell block that compiles `--name name` in a
    scratch folder; returns it and the last step's output."""
    if shutil.which("cc") is None:
        pytest.skip("needs a C compiler")
    folder = factory.mktemp(name)
    for file, (language, containing) in sources.items():
        (folder / file).write_text(_block(language, containing))
    return folder, _run_steps(folder, _block("sh", f"--name {name}"))


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The doc's steps, run in a scratch folder; returns it and ./main's output."""
    return _run_example(tmp_path_factory, "classifier", {
        "make_classifier.py": ("python", '"classifier.onnx"'),
        "main.c": ("c", "classifier_run(&buffers")})  # fmt: skip


def _run_steps(folder: Path, steps: str) -> str:
    """Runs the shell block's lines in `folder`; returns the last one's output."""
    tools = {"python3": sys.executable, "ember": f"{sys.executable} -m ember.cli"}
    stdout = ""
    for line in steps.splitlines():
        program, _, rest = line.partition(" ")
        command = f"{tools.get(program, program)} {rest}"
        result = subprocess.run(["bash", "-c", command], cwd=folder, capture_output=True, text=True)
        assert result.returncode == 0, f"{line}: {result.stderr}"
        stdout = result.stdout
    return stdout


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
    assert _block("c", "typedef struct classifier_buffers") in header
    for macro in re.findall(r"`(CLASSIFIER_\w+)`", DOC.read_text()):
        assert f"#define {macro} " in header


@pytest.mark.parametrize(("script", "marker"), [("run_with_ctypes.py", "ctypes.CDLL"),
                                               ("load_back.py", "ember.load(")])  # fmt: skip
def test_the_python_scripts_print_the_same(example: tuple[Path, str], script: str,
                                           marker: str) -> None:  # fmt: skip
    folder, stdout = example
    (folder / script).write_text(_block("python", marker))
    result = subprocess.run([sys.executable, script], cwd=folder,
                            capture_output=True, text=True, check=True)  # fmt: skip
    assert result.stdout == stdout


def test_the_build_command_is_warning_free(example: tuple[Path, str]) -> None:
    folder, _ = example
    build = next(
        line for line in _block("sh", "-lclassifier").splitlines() if line.startswith("cc ")
    )
    build = build.replace('"$PWD/out"', str(folder / "out")).replace("-o main ", "-o strict ")
    strict = [*shlex.split(build), "-Wextra", "-pedantic", "-Werror"]
    subprocess.run(strict, cwd=folder, check=True)


def test_the_doc_is_linked_from_the_readme() -> None:
    readme = (DOC.parents[1] / "README.md").read_text()
    assert "docs/deploying.md" in readme


@pytest.fixture(scope="module")
def symbolic_example(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The symbolic-dims section's steps; returns the folder and ./score's output."""
    return _run_example(tmp_path_factory, "scorer", {
        "make_scorer.py": ("python", '"scorer.onnx"'),
        "score.c": ("c", "scorer_prepare(&shapes")})  # fmt: skip


def _scores(folder: Path, rows: int) -> np.ndarray:
    x = np.fromfile(folder / "x5.bin", dtype=np.float32).reshape(5, 4)[:rows]
    (scores,) = run_onnxruntime(onnx.load(folder / "scorer.onnx"), {"x": x})
    return scores


@pytest.mark.slow
def test_the_symbolic_example_runs_at_any_batch(symbolic_example: tuple[Path, str]) -> None:
    folder, stdout = symbolic_example
    _assert_matches(_printed(stdout), {"scores": _scores(folder, 5)})
    one = subprocess.run(["./score", "out/scorer.weights", "x5.bin", "1"], cwd=folder,
                         capture_output=True, text=True, check=True)  # fmt: skip
    _assert_matches(_printed(one.stdout), {"scores": _scores(folder, 1)})
    manifest = (folder / "out" / "scorer.json").read_text()
    assert '"sizes": {\n        "N": 1\n      }' in manifest  # the batch of one is a static version


def test_the_symbolic_example_error_is_the_one_the_doc_shows(
    symbolic_example: tuple[Path, str],
) -> None:
    folder, _ = symbolic_example
    result = subprocess.run(["./score", "out/scorer.weights", "x5.bin", "65"], cwd=folder,
                            capture_output=True, text=True)  # fmt: skip
    assert result.returncode == 1
    shown = re.search(r"prints `(error: [^`]*)`", " ".join(DOC.read_text().split()))
    assert shown is not None and result.stderr.strip() == shown.group(1)


def test_the_symbolic_api_in_the_doc_is_what_the_header_declares(
    symbolic_example: tuple[Path, str],
) -> None:
    folder, _ = symbolic_example
    header = " ".join((folder / "out" / "scorer.h").read_text().split())
    for declaration in _block("c", "int NAME_prepare").split(";")[:-1]:
        expected = " ".join(declaration.replace("NAME", "scorer").split()) + ";"
        assert expected in header
    for code in re.findall(r"`NAME_(ERROR_\w+|OK)`", DOC.read_text()):
        assert f"#define SCORER_{code} " in header
