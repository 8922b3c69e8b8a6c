"""Adversarial input for `ember-opt`: whatever the file or the command line
holds, the answer is one line on stderr (`file: error: ...`,
`file:line:col: error: ...` or `ember-opt: error: ...`) and exit status 1,
never a Python traceback."""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
from pathlib import Path
from typing import ClassVar

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from ember.opt import main


def run_opt(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line_error(code: int, err: str, where: str, fragment: str) -> None:
    """`where` is a regular expression for what comes before `: error: `."""
    assert code == 1, err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert re.match(f"{where}: error: ", lines[0]), err
    assert fragment in lines[0], err


def nested(opening: str, middle: str, closing: str, depth: int) -> str:
    return opening * depth + middle + closing * depth


# (name, file contents, extra arguments, where the error is, what it says)
BAD_FILES: list[tuple[str, bytes, list[str], str, str]] = [
    ("png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", [], ":1:1", "not UTF-8"),
    ("latin1", b"builtin.module {\n  func.func @caf\xe9() {\n", [], ":2:17", "not UTF-8"),
    ("nul", b"\x00\x00\x00\x00", [], ":1:1", "Unexpected character"),
    ("empty", b"", [], r":1:1", "error"),
    ("truncated", b"func.func @f(", [], r":1:14", "Expected argument or type"),
    ("unterminated-string", b'"test.op"() {a = "no end} : () -> ()\n', [], r":1:\d+",
     "closing string literal"),
    ("nested-modules", nested("builtin.module {", "", "}", 3000).encode(), [], "",
     "nested too deeply"),
    ("nested-regions", nested('"test.op"() ({', "", "}) : () -> ()\n", 3000).encode(),
     ["--allow-unregistered-dialect"], "", "nested too deeply"),
    ("nested-types", ('"test.op"() {a = ' + nested("tuple<", "i32", ">", 3000)
                      + "} : () -> ()").encode(),
     ["--allow-unregistered-dialect"], "", "nested too deeply"),
    ("nested-arrays", ('"test.op"() {a = ' + nested("[", "", "]", 3000)
                       + "} : () -> ()").encode(),
     ["--allow-unregistered-dialect"], "", "nested too deeply"),
    ("nested-parentheses", ('"test.op"() : () -> ' + "(" * 100_000).encode(),
     ["--allow-unregistered-dialect"], "", "error"),
    ("long-integer", b"%c = arith.constant " + b"7" * 10_000 + b" : i64\n", [], "",
     "cannot parse the input"),
    ("dimension-past-64-bits", b"%c = graph.constant dense<0.0> : tensor<" + b"9" * 30
     + b"xf32>\n", [], "", "cannot parse the input"),
    ("unregistered-op", b'"foo.bar"() : () -> ()\n', [], r":1:\d+", "not registered"),
    ("type-mismatch", b"%c = arith.constant 1 : i32\n%d = arith.addi %c, %c : i64\n", [], r":2:17",
     "previously used or defined with type i32"),
]  # fmt: skip


@pytest.mark.parametrize(
    "name, data, args, where, fragment", BAD_FILES, ids=[c[0] for c in BAD_FILES]
)
def test_bad_input_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path,
    name: str, data: bytes, args: list[str], where: str, fragment: str,
) -> None:  # fmt: skip
    path = tmp_path / f"{name}.mlir"
    path.write_bytes(data)
    code, _, err = run_opt(capsys, str(path), *args)
    assert_one_line_error(code, err, re.escape(str(path)) + where, fragment)


def test_non_utf8_in_a_later_chunk_names_its_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "split.mlir"
    path.write_bytes(b"builtin.module {}\n// -----\nbuiltin.module {}\n  \xff\n")
    code, _, err = run_opt(capsys, str(path), "--split-input-file")
    assert_one_line_error(code, err, re.escape(f"{path}:4:3"), "not UTF-8 text (byte 0xff)")


def test_huge_attribute_and_long_line_are_fine(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "huge.mlir"
    blob = "x" * 2_000_000
    path.write_text(
        f'"test.op"() {{a = "{blob}"}} : () -> ()\nbuiltin.module {{{" " * 1_000_000}}}\n'
    )
    code, out, err = run_opt(capsys, str(path), "--allow-unregistered-dialect")
    assert code == 0, err
    assert blob in out


# (command line after the input file, what the one line says)
BAD_COMMAND_LINES: list[tuple[list[str], str]] = [
    (["-p", "no-such-pass"], "unknown pass 'no-such-pass'"),
    (["-p", "graph-fuse,graph-fusee"], "did you mean graph-fuse, graph-fuse-qdq?"),
    (["-p", "graph-layout{no-such-option=1}"], "graph-layout: unknown option 'no-such-option'"),
    (["-p", "graph-layout{block=eight}"], "option block expects int, got eight"),
    (["-p", "graph-simplify{max-rounds}"], "option max-rounds expects int, got nothing"),
    (["-p", "graph-layout{"], "column 14"),
    (["-p", "graph-layout{layout=\"NHWC}"], "-p 'graph-layout{layout=\"NHWC}'"),
    (["-p", ",,"], "column 1: Expected pass name here"),
    (["-p", "graph-optimize{level=7}"], "graph-optimize: level must be 0, 1 or 2, got 7"),
    (["-t", "no-such-target"], "invalid choice: 'no-such-target'"),
    (["-t", "llvm{"], "-t or -f: column 6"),
    (["-f", "no-such-frontend"], "invalid choice: 'no-such-frontend'"),
    (["--no-such-flag"], "unrecognized arguments: --no-such-flag"),
    (["--elide-large-constants=-1"], "--elide-large-constants expects a number"),
    (["--elide-large-constants=lots"], "--elide-large-constants expects a number"),
    (["--help-pass", "no-such-pass"], "unknown pass 'no-such-pass'"),
]  # fmt: skip


@pytest.mark.parametrize(
    "args, fragment", BAD_COMMAND_LINES, ids=[" ".join(a) for a, _ in BAD_COMMAND_LINES]
)
def test_bad_command_line_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, args: list[str], fragment: str
) -> None:  # fmt: skip
    path = tmp_path / "ok.mlir"
    path.write_text("builtin.module {}\n")
    code, _, err = run_opt(capsys, str(path), *args)
    assert_one_line_error(code, err, "ember-opt", fragment)


def test_bad_files_on_the_command_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    ok = tmp_path / "ok.mlir"
    ok.write_text("func.func @f() {\n  func.return\n}\n")
    cases = [
        ([str(tmp_path / "missing.mlir")], str(tmp_path / "missing.mlir"), "No such file"),
        ([str(tmp_path)], str(tmp_path), "Is a directory"),
        ([str(ok), "-o", str(tmp_path)], str(tmp_path), "cannot write: Is a directory"),
        ([str(ok), "-o", str(tmp_path / "no" / "out.mlir")], str(tmp_path / "no" / "out.mlir"),
         "cannot write: No such file"),
        ([str(ok), "-t", "llvm"], str(ok), "-t llvm: Conversion not implemented for op: func.func"),
        ([str(ok), "-t", "llvm{bogus=1}"], str(ok), "-t llvm:"),
    ]  # fmt: skip
    for args, where, fragment in cases:
        code, _, err = run_opt(capsys, *args)
        assert_one_line_error(code, err, re.escape(where), fragment)
    text = tmp_path / "ok.txt"
    text.write_text("builtin.module {}\n")
    code, _, err = run_opt(capsys, str(text))
    assert_one_line_error(code, err, re.escape(str(text)), "Unrecognized file extension 'txt'")
    model = tmp_path / "model.onnx"
    model.write_bytes(b"\x08\x07")
    code, _, err = run_opt(capsys, str(model), "-p", "graph-fuse")
    assert_one_line_error(
        code,
        err,
        re.escape(str(model)),
        f"ember-opt reads IR, not a model: import it first, ember import {model} -o model.mlir",
    )


def run_cli(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "ember.opt", *args], input=stdin,
                          capture_output=True, timeout=300)  # fmt: skip


def test_the_real_command_on_binary_stdin_and_deep_nesting() -> None:
    """The same, through the interpreter's own entry point and stdin."""
    # Bytes 0-127 are ASCII (one newline among them); 0x80 is the first that is not UTF-8.
    binary = run_cli(stdin=bytes(range(256)) * 4)
    assert binary.returncode == 1
    assert (
        binary.stderr.decode().strip() == "stdin:2:118: error: input is not UTF-8 text (byte 0x80)"
    )
    deep = run_cli(stdin=nested("builtin.module {", "", "}", 3000).encode())
    assert deep.returncode == 1
    assert deep.stderr.decode().strip() == (
        "stdin: error: IR nested too deeply (Python's recursion limit)"
    )


def test_a_reader_that_stops_early_is_no_error(tmp_path: Path) -> None:
    """`ember-opt big.mlir | head -1`: no BrokenPipeError, no traceback."""
    path = tmp_path / "many.mlir"
    # 5,000 lines, some 200 KB: several times what a pipe holds.
    body = "".join(f"  %c{i} = arith.constant {i} : i32\n" for i in range(5_000))
    path.write_text(f"func.func @f() {{\n{body}  func.return\n}}\n")
    process = subprocess.Popen([sys.executable, "-m", "ember.opt", str(path)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    assert process.stdout is not None and process.stderr is not None
    assert process.stdout.readline().startswith(b"builtin.module")
    process.stdout.close()
    err = process.stderr.read().decode()
    assert process.wait(timeout=300) == 0, err
    assert err == ""


@dataclasses.dataclass(frozen=True)
class _BuggyPass(ModulePass):
    """Fails as a bug in a pass would."""

    name: ClassVar[str] = "test-buggy"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        raise KeyError("no such thing")


def test_a_bug_in_a_pass_is_one_line_naming_the_pass_unless_traceback_is_asked(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ember.registry

    registry = ember.registry.pass_loaders()
    monkeypatch.setattr(
        ember.registry, "pass_loaders", lambda: {**registry, "test-buggy": lambda: _BuggyPass}
    )
    path = tmp_path / "ok.mlir"
    path.write_text("builtin.module {}\n")
    code, _, err = run_opt(capsys, str(path), "-p", "dce,test-buggy")
    assert_one_line_error(code, err, re.escape(str(path)),
                          "internal error in test-buggy: KeyError: 'no such thing'")  # fmt: skip
    with pytest.raises(KeyError):
        main([str(path), "-p", "test-buggy", "--traceback"])
