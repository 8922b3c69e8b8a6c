"""Adversarial models for the ABI and the C header: names that are C or C++
keywords, reserved identifiers, the header's own macros or that sanitise to
the same identifier, and more inputs and outputs than a foreign-function
interface takes as arguments (ctypes stops at 1,024)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import ember
from ember.targets.cpu.c_names import is_c_identifier, is_reserved
from tests.support.models import run_onnxruntime

HOSTILE_NAMES = [
    "int", "return", "class", "new", "and", "MODEL_ARENA_BYTES", "MODEL_NUM_INPUTS",
    "EMBER_MODEL_H", "model_run", "model_buffers", "weights", "arena", "buffers", "__x", "_Y",
    "a.b", "a-b", "a_b", "errno", "linux", "INT8_MAX", "int8_t", "NULL", "1x", "", "é", "a*/b??/",
]  # fmt: skip

C_COMPILERS = [
    pytest.param("cc", ["-x", "c", "-std=c11"], id="c"),
    pytest.param("cc", ["-x", "c", "-std=gnu17"], id="gnu-c"),  # predefines linux, unix
    pytest.param("c++", ["-x", "c++", "-std=c++17"], id="c++"),
]


def _values(name: str, n: int) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, [n])


def hostile_model() -> onnx.ModelProto:
    """Each hostile name is an input; output k is input k + input k+1 (the
    last one times a weight), under the hostile names reversed with a `!`
    so they differ from the inputs' but sanitise alike; one input is also
    an output under its own name."""
    names = [n or "empty" for n in HOSTILE_NAMES]
    outputs = [f"{n}!" for n in reversed(names)]
    nodes = [helper.make_node("Add", [a, b], [o]) for a, b, o in zip(names, names[1:], outputs)]
    nodes.append(helper.make_node("Mul", [names[-1], "w"], [outputs[-1]]))
    weight = numpy_helper.from_array(np.arange(1, 4, dtype=np.float32), "w")
    graph = helper.make_graph(nodes, "hostile", [_values(n, 3) for n in names],
                              [*(_values(o, 3) for o in outputs), _values("int", 3)],
                              [weight])  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def many_buffers_model(count: int) -> onnx.ModelProto:
    """`count` inputs x0.. and `count` outputs, y_i = x_i + x_(i+1 mod count)."""
    nodes = [helper.make_node("Add", [f"x{i}", f"x{(i + 1) % count}"], [f"y{i}"])
             for i in range(count)]  # fmt: skip
    graph = helper.make_graph(nodes, "many", [_values(f"x{i}", 2) for i in range(count)],
                              [_values(f"y{i}", 2) for i in range(count)])  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _compile_to(model: onnx.ModelProto, out: Path) -> dict:
    path = out.parent / "model.onnx"
    path.write_bytes(model.SerializeToString())
    result = subprocess.run([sys.executable, "-m", "ember.cli", "compile", str(path), "-o", str(out)],
                            capture_output=True, text=True)  # fmt: skip
    assert result.returncode == 0, result.stderr
    return json.loads((out / "model.json").read_text())


def _c_program(manifest: dict, feeds: dict[str, np.ndarray]) -> str:
    """A C (and C++) program that sets every member by its JSON `c_name`,
    runs the model on `feeds` and prints every output element."""
    arrays, assignments, prints = [], [], []
    for k, entry in enumerate(manifest["inputs"]):
        values = ", ".join(f"{v!r}f" for v in feeds[entry["name"]].ravel().tolist())
        arrays.append(f"static const float in{k}[] = {{{values}}};")
        assignments.append(f"b.{entry['c_name']} = in{k};")
    for k, entry in enumerate(manifest["outputs"]):
        size = int(np.prod(entry["shape"]))
        arrays.append(f"static float out{k}[{size}];")
        assignments.append(f"b.{entry['c_name']} = out{k};")
        prints.append(f'for (i = 0; i < {size}; ++i) printf("%.9g\\n", (double)out{k}[i]);')
    newline = "\n    "
    return rf"""#include <stdio.h>
#include <stdlib.h>
#include "model.h"
{newline.join(arrays)}
int main(int argc, char **argv) {{
    size_t i;
    void *weights = aligned_alloc(64, (MODEL_WEIGHTS_BYTES + 64) / 64 * 64);
    void *arena = aligned_alloc(64, (MODEL_ARENA_BYTES + 63) / 64 * 64);
    FILE *file = fopen(argv[1], "rb");
    model_buffers b;
    if (argc != 2 || !file || fread(weights, 1, MODEL_WEIGHTS_BYTES, file) != MODEL_WEIGHTS_BYTES)
        return 2;
    fclose(file);
    {newline.join(assignments)}
    model_run(&b, weights, arena);
    {newline.join(prints)}
    free(weights);
    free(arena);
    return 0;
}}
"""


def _run_c(out: Path, source: str, compiler: str, flags: list[str]) -> np.ndarray:
    if shutil.which(compiler) is None:
        pytest.skip(f"needs {compiler}")
    (out / "main.c").write_text(source)
    exe = out / f"main-{compiler}"
    subprocess.run([compiler, *flags, "-Wall", "-Wextra", "-pedantic", "-Werror", "-o", str(exe),
                    str(out / "main.c"), f"-I{out}", f"-L{out}", "-lmodel", f"-Wl,-rpath,{out}"],
                   check=True)  # fmt: skip
    run = subprocess.run([str(exe), str(out / "model.weights")], capture_output=True, text=True,
                         check=True)  # fmt: skip
    return np.array(run.stdout.split(), dtype=np.float32)


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("hostile") / "out"
    return out, _compile_to(hostile_model(), out)


def test_hostile_names_become_distinct_legal_members(hostile: tuple[Path, dict]) -> None:
    out, manifest = hostile
    entries = [*manifest["inputs"], *manifest["outputs"]]
    model = hostile_model()
    assert [e["name"] for e in entries] == [
        *(i.name for i in model.graph.input),
        *(o.name for o in model.graph.output),
    ]
    c_names = [e["c_name"] for e in entries]
    assert len(set(c_names)) == len(c_names)
    assert all(is_c_identifier(c) and not is_reserved(c) for c in c_names)
    header = (out / "model.h").read_text()
    own = {"MODEL_ARENA_BYTES", "MODEL_WEIGHTS_BYTES", "MODEL_NUM_INPUTS", "MODEL_NUM_OUTPUTS",
           "EMBER_MODEL_H", "model_run", "model_buffers"}  # fmt: skip
    assert own.isdisjoint(c_names)
    for entry in entries:  # the ONNX name stays in the member's comment, as a JSON string
        assert f"*{entry['c_name']};  /* " in header
        assert json.dumps(entry["name"]) in header.replace("* /", "*/").replace("?\\?", "??")
    assert '"a*/b??/"' not in header  # neither ends the comment nor splices a line


@pytest.mark.parametrize(("compiler", "flags"), C_COMPILERS)
def test_hostile_names_compile_and_compute(
    hostile: tuple[Path, dict], compiler: str, flags: list[str]
) -> None:
    out, manifest = hostile
    model = hostile_model()
    rng = np.random.default_rng(0)
    feeds = {i.name: rng.standard_normal(3).astype(np.float32) for i in model.graph.input}
    printed = _run_c(out, _c_program(manifest, feeds), compiler, flags)
    expected = np.concatenate([a.ravel() for a in run_onnxruntime(model, feeds)])
    np.testing.assert_array_equal(printed, expected)  # Add and Mul are exact


def _check_many_buffers(count: int, out: Path) -> None:
    model = many_buffers_model(count)
    xs = [np.array([i, -0.5 * i], dtype=np.float32) for i in range(count)]
    expected = [xs[i] + xs[(i + 1) % count] for i in range(count)]
    compiled = ember.compile(model)
    for got, want in zip(compiled(*xs), expected, strict=True):
        np.testing.assert_array_equal(got, want)
    manifest = _compile_to(model, out)
    assert [e["c_name"] for e in manifest["outputs"][:2]] == ["y0", "y1"]
    feeds = {f"x{i}": x for i, x in enumerate(xs)}
    printed = _run_c(out, _c_program(manifest, feeds), "cc", ["-std=c11"])
    np.testing.assert_array_equal(printed, np.concatenate(expected))


@pytest.mark.slow
def test_more_inputs_and_outputs_than_ctypes_takes_arguments(tmp_path: Path) -> None:
    _check_many_buffers(1100, tmp_path / "out")  # 1,100 of each: 2,200 buffers


@pytest.mark.slow
def test_thousands_of_inputs_and_outputs(tmp_path: Path) -> None:
    _check_many_buffers(5000, tmp_path / "out")


@pytest.mark.parametrize("name", ["__x", "_Model", "int", "a-b", "x__y"])
def test_reserved_or_invalid_name_option_is_refused(tmp_path: Path, name: str) -> None:
    path = tmp_path / "m.onnx"
    path.write_bytes(many_buffers_model(2).SerializeToString())
    result = subprocess.run([sys.executable, "-m", "ember.cli", "compile", str(path), "-o",
                             str(tmp_path / "out"), "--name", name], capture_output=True, text=True)  # fmt: skip
    assert result.returncode == 1
    assert result.stderr.startswith(f"error: --name '{name}' must be a C identifier")
    assert "Traceback" not in result.stderr


def test_model_without_outputs_is_refused(tmp_path: Path) -> None:
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["t"])], "empty", [_values("x", 2)], []
    )
    path = tmp_path / "m.onnx"
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    path.write_bytes(model.SerializeToString())
    result = subprocess.run([sys.executable, "-m", "ember.cli", "compile", str(path), "-o",
                             str(tmp_path / "out"), "--quiet"], capture_output=True, text=True)  # fmt: skip
    assert result.returncode == 1
    assert result.stderr == "error: the model has no outputs, so there is nothing to deploy\n"
    assert "Traceback" not in result.stderr
