"""The `ember` and `ember-opt` commands, run as users run them."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest


def run(tool: str, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    module = {"ember": "ember.cli", "ember-opt": "ember.opt"}[tool]
    return subprocess.run([sys.executable, "-m", module, *args], input=stdin,
                          capture_output=True, text=True, timeout=300)  # fmt: skip


ROOT = Path(__file__).resolve().parents[2]
PROGRESS_LINE = re.compile(r"ember: \S+ +\d+\.\d+s")
"""A compile stage's time, which `ember` reports on stderr unless --quiet."""


def diagnostics(stderr: str) -> list[str]:
    """The lines of stderr that are not progress reports."""
    return [line for line in stderr.strip().splitlines() if not PROGRESS_LINE.fullmatch(line)]


def assert_one_line_error(result: subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    lines = diagnostics(result.stderr)
    assert len(lines) == 1, result.stderr
    for fragment in fragments:
        assert fragment in lines[0]


@pytest.mark.parametrize("command", [[], ["import"], ["run"], ["compile"], ["bench"]])
def test_every_help_prints(command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    from ember.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main([*command, "--help"])
    assert exit_info.value.code == 0
    assert "usage: ember" in capsys.readouterr().out


def test_import_prints_graph_ir() -> None:
    result = run("ember", "import", "light:squeezenet", "--elide-large-constants")
    assert result.returncode == 0, result.stderr
    assert "graph.conv" in result.stdout
    assert "dense_resource<__elided__>" in result.stdout


def test_import_then_opt_pipeline() -> None:
    imported = run("ember", "import", "light:shufflenet")
    optimized = run("ember-opt", "-p", "graph-infer-shapes", stdin=imported.stdout)
    assert optimized.returncode == 0, optimized.stderr
    assert optimized.stdout.count("graph.conv") == imported.stdout.count("graph.conv")


def test_run_on_the_reference_interpreter() -> None:
    result = run("ember", "run", "light:shufflenet", "--target", "reference", "--check")
    assert result.returncode == 0, result.stderr
    assert "from reference" in result.stdout and "-> ok" in result.stdout


def _small_mlp(folder: Path) -> Path:
    """An MLP (4 x 64 -> 128 -> 10, Softmax) as an ONNX file: for the command
    behaviours a light model would only make slower."""
    import onnx

    from tests.support.models import mlp

    path = folder / "mlp.onnx"
    onnx.save(mlp(batch=4, sizes=(64, 128, 10)), path)
    return path


def test_run_with_check_and_given_input(tmp_path: Path) -> None:
    data = np.random.default_rng(0).standard_normal((4, 64)).astype(np.float32)
    np.save(tmp_path / "x.npy", data)
    result = run(
        "ember", "run", str(_small_mlp(tmp_path)), "--input", f"input={tmp_path / 'x.npy'}",
        "--check",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "-> ok" in result.stdout


def test_time_passes_prints_each_pass_after_compiling(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ember.cli import main

    assert main(["run", str(_small_mlp(tmp_path)), "--quiet", "--time-passes"]) == 0
    err = capsys.readouterr().err
    table = err[err.index("pass ") :].splitlines()
    assert table[0].split() == ["pass", "wall", "s", "cpu", "s", "share"]
    rows = {line.split()[0]: line.split()[1:] for line in table[1:]}
    assert {"graph-simplify", "loop-generate", "convert-loop-to-llvm", "llvm-codegen"} <= set(rows)
    assert rows["llvm-codegen"][1] == "-"  # run by the codegen workers: wall time only
    walls = [float(rows[name][0]) for name in rows if name != "total"]
    assert walls == sorted(walls, reverse=True)
    assert float(rows["total"][0]) == pytest.approx(sum(walls), abs=0.01 * len(walls))


SQUEEZENET = ("light:squeezenet", "--random-weights", "0")
"""SqueezeNet with random weights: its shipped weights make logits near 1e10,
whose Softmax ties classes as the summation order of each engine rounds."""


@pytest.mark.slow
@pytest.mark.parametrize("level", ["-O0", "-O1"])
def test_run_at_the_lower_levels(level: str) -> None:
    result = run("ember", "run", *SQUEEZENET, level, "--check", "--quiet")
    assert result.returncode == 0, result.stderr
    assert "-> ok" in result.stdout and not result.stderr


@pytest.mark.slow  # a model compiled at -O1 and -O2 and run: 11 s
def test_run_with_the_fusion_report() -> None:
    result = run("ember", "run", *SQUEEZENET, "-O2", "--check", "--fusion-report")
    assert result.returncode == 0, result.stderr
    assert "-> ok" in result.stdout
    report = result.stdout.splitlines()[0]
    assert "fusion groups: conv 26 (52 ops)" in report
    unfused = re.search(r"kernels (\d+) without fusion, 38 with$", report)  # NHWC: + 2 conversions
    assert unfused is not None and int(unfused.group(1)) > 38, report

    # The doc's example, but for the count without fusion, which depends on
    # the CPU's vector registers (whether the blocks cover a convolution's fill).
    def any_count(text: str) -> str:
        return re.sub(r"kernels \d+ without", "kernels N without", text)

    assert any_count(report) in any_count((ROOT / "docs" / "graph-optimizer.md").read_text())
    stages = [PROGRESS_LINE.fullmatch(line) for line in result.stderr.splitlines()]
    assert all(stages) and len(stages) >= 6, result.stderr  # import, graph, ..., llvm-jit, run


def _spread(summary: str) -> float:
    """std / mean of the first output in an `ember run` summary."""
    match = re.search(r"mean=(\S+) std=(\S+)", summary)
    assert match, summary
    return float(match[2]) / float(match[1])


@pytest.mark.slow  # models compiled and checked through the command line: 10 s
def test_random_weights_make_outputs_that_differ_and_check_against_onnxruntime() -> None:
    # With the shipped 0.02 weights every class scores the same in exact
    # arithmetic; whether the float sums tie exactly depends on the summation
    # order of the BLAS and CPU (SqueezeNet's logits reach 1e10), so only a
    # spread at rounding level is asserted.
    shipped = run("ember", "run", "light:shufflenet", "--target", "reference", "-q")
    assert shipped.returncode == 0, shipped.stderr
    assert _spread(shipped.stdout) < 1e-4
    random = run("ember", "run", "light:squeezenet", "--random-weights", "0", "--check", "-q")
    assert random.returncode == 0, random.stderr
    assert "-> ok" in random.stdout and "values equal" not in random.stdout
    assert _spread(random.stdout) > 0.5  # 1.75 with seed 0


def test_the_summary_says_when_every_value_is_equal() -> None:
    from ember.cli import describe_array

    assert describe_array(np.full(1000, 0.001, np.float32)).endswith("(all 1000 values equal)")
    assert "values equal" not in describe_array(np.array([0.001, 0.0010001], np.float32))


def test_input_file_fixes_a_dynamic_dimension(tmp_path: Path) -> None:
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 3])],
    )  # fmt: skip
    path = tmp_path / "dynamic.onnx"
    path.write_bytes(helper.make_model(graph).SerializeToString())
    data = np.arange(-6, 9, dtype=np.float32).reshape(5, 3)
    np.save(tmp_path / "x.npy", data)
    for target in ("cpu", "reference"):
        result = run("ember", "run", str(path), "--input", f"x={tmp_path / 'x.npy'}",
                     "--target", target, "--check", "-q")  # fmt: skip
        assert result.returncode == 0, result.stderr
        assert "y: float32[5, 3]" in result.stdout and "-> ok" in result.stdout
    for target in ("cpu", "reference"):  # no size for the batch: say how to give one
        result = run("ember", "run", str(path), "--target", target)
        assert_one_line_error(
            result, "input 'x' float32[batch, 3]", "--dim batch=SIZE", "--input-shape x="
        )


def test_input_files_that_disagree_get_the_entry_check_error(tmp_path: Path) -> None:
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Add", ["a", "b"], ["y"])], "g",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, ["N", 3]),
         helper.make_tensor_value_info("b", TensorProto.FLOAT, ["N", 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3])],
    )  # fmt: skip
    path = tmp_path / "add.onnx"
    path.write_bytes(helper.make_model(graph).SerializeToString())
    np.save(tmp_path / "a.npy", np.ones((4, 3), np.float32))
    np.save(tmp_path / "b.npy", np.ones((5, 3), np.float32))
    a, b = f"a={tmp_path / 'a.npy'}", f"b={tmp_path / 'b.npy'}"
    assert_one_line_error(run("ember", "run", str(path), "--input", a, "--input", b),
                          "input 'b' axis 0 is 5, but N is 4 from input 'a' axis 0")  # fmt: skip
    assert_one_line_error(run("ember", "run", str(path), "--input", a, "--dim", "N=1..3"),
                          "input 'a' axis 0: N = 4 is outside its range 1..3")  # fmt: skip
    result = run("ember", "run", str(path), "--input", a, "--check", "-q")  # b drawn at N = 4
    assert result.returncode == 0, result.stderr
    assert "y: float32[4, 3]" in result.stdout and "-> ok" in result.stdout
    out = str(tmp_path / "out")
    assert_one_line_error(run("ember", "compile", str(path), "-o", out, "--specialize", "N=1,x"),
                          "--specialize expects NAME=SIZE,SIZE,...")  # fmt: skip
    assert_one_line_error(run("ember", "compile", str(path), "-o", out, "--specialize", "M=1"),
                          "specialize names unknown symbol(s) M; the model's symbols are N")  # fmt: skip
    assert_one_line_error(run("ember", "compile", "light:squeezenet", "-o", out, "--specialize",
                              "N=1"), "--specialize: the model has no symbolic dims")  # fmt: skip
    result = run("ember", "compile", str(path), "-o", out, "--specialize", "N=1,8", "-q")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[-1].endswith("model_entry.c")


@pytest.mark.parametrize(
    "args, fragments",
    [(["import", "/no/such/model.onnx"], ["error:", "/no/such/model.onnx: no such file"]),
     (["import", "light:nosuch"], ["error:", "no such light model"]),
     (["import", "light:squeezenet", "--input-shape", "bogus"], ["--input-shape expects NAME=DIMS"]),
     (["import", "light:squeezenet", "--input-shape", "nope=1x2"], ["unknown input(s) nope"]),
     (["import", "light:squeezenet", "-o", "/proc/nope/out.mlir"], ["cannot write"]),
     (["run", "light:squeezenet", "--input", "data_0=/no/file.npy"], ["cannot load"]),
     (["run", "light:squeezenet", "--seed", "-1"], ["--seed", "must be 0 or more"]),
     (["bench", "light:squeezenet", "--runs", "0"], ["--runs", "must be 1 or more"]),
     (["bench", "light:squeezenet", "--threads", "0"], ["--threads", "must be an integer from 1 to 1024"]),
     (["run", "light:squeezenet", "-O1", "--layout", "NCHWc"], ["--layout applies at -O2"]),
     (["compile", "light:squeezenet", "-o", "/tmp/x", "-O1", "--fusion-report"],
      ["--fusion-report", "needs -O2"]),
     (["import", "light:squeezenet", "--input-shape", "data_0=1x-3x2x2"], ["negative"]),
     (["bench", "light:squeezenet", "--input-shape", "data_0=?x3x224x224"],
      ["dynamic shape", "--input-shape NAME=DIMS"]),
     (["run", "light:squeezenet", "--bogus"], ["unrecognized arguments: --bogus"]),
     ([], ["required: command"])],
)  # fmt: skip
def test_ember_user_errors(args: list[str], fragments: list[str]) -> None:
    assert_one_line_error(run("ember", *args), *fragments)


def test_ember_garbage_model(tmp_path: Path) -> None:
    path = tmp_path / "bad.onnx"
    path.write_bytes(b"definitely not onnx")
    assert_one_line_error(run("ember", "import", str(path)), str(path), "not a valid ONNX")


def test_ember_opt_parse_error_has_file_line_col(tmp_path: Path) -> None:
    path = tmp_path / "bad.mlir"
    path.write_text("func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
                    "  %y = graph.relu %x, %x : (tensor<2xf32>) -> tensor<2xf32>\n"
                    "  func.return %y : tensor<2xf32>\n}\n")  # fmt: skip
    assert_one_line_error(run("ember-opt", str(path)), f"{path}:2:", "error:")


def test_ember_opt_verify_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.mlir"
    path.write_text("func.func @f(%x: tensor<2xf32>, %y: tensor<3xf32>) -> tensor<2xf32> {\n"
                    "  %z = graph.add %x, %y : (tensor<2xf32>, tensor<3xf32>) -> tensor<2xf32>\n"
                    "  func.return %z : tensor<2xf32>\n}\n")  # fmt: skip
    assert_one_line_error(run("ember-opt", str(path)), "graph.add", "not broadcast-compatible")


def test_compile_reports_an_op_without_a_lowering(tmp_path: Path) -> None:
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Pow", ["x", "y"], ["z"], name="upow")], "g",
        [helper.make_tensor_value_info("x", TensorProto.UINT8, [4]),
         helper.make_tensor_value_info("y", TensorProto.UINT8, [4])],
        [helper.make_tensor_value_info("z", TensorProto.UINT8, [4])],
    )  # fmt: skip
    path = tmp_path / "upow.onnx"
    path.write_bytes(
        helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
    )
    result = run("ember", "compile", str(path), "-o", str(tmp_path / "out"))
    assert_one_line_error(result, "convert-graph-to-tensor", "graph.pow", "unsigned")


def test_bench_prints_both_engines_and_the_ratio(tmp_path: Path) -> None:
    result = run("ember", "bench", str(_small_mlp(tmp_path)), "--runs", "2")
    assert result.returncode == 0, result.stderr
    assert "ember" in result.stdout and "onnxruntime" in result.stdout and "ratio" in result.stdout


def test_run_saves_the_outputs_by_name_and_the_check_says_its_tolerance(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import onnxruntime

    from ember.cli import main

    model = _small_mlp(tmp_path)
    data = np.random.default_rng(1).standard_normal((4, 64)).astype(np.float32)
    np.save(tmp_path / "x.npy", data)
    out = tmp_path / "out.npz"
    argv = ["run", str(model), "--input", f"input={tmp_path / 'x.npy'}", "--check", "--quiet"]
    assert main([*argv, "--output", str(out)]) == 0
    printed = capsys.readouterr().out
    assert re.search(r"check \w+: max abs error \S+, max rel error \S+ \(tolerance: "
                     r"\|error\| <= 0\.0001 \+ 0\.001 x \|expected\|\) -> ok", printed), printed  # fmt: skip
    session = onnxruntime.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    expected = session.run(None, {"input": data})
    with np.load(out) as saved:
        assert sorted(saved.files) == sorted(names)
        for name, want in zip(names, expected):
            np.testing.assert_allclose(saved[name], want, rtol=1e-3, atol=1e-5)
    assert f"outputs saved: {out}" in printed
    assert main([*argv, "--output", str(tmp_path / "missing" / "out.npz")]) == 1
    assert "--output" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mlp.onnx", "out.npz", "x.npy"]
