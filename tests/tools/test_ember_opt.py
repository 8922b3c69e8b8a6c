"""`ember-opt`'s pass catalogue (help, --list-passes, --help-pass), its
printing between passes and its elision of large constants."""

from __future__ import annotations

import dataclasses
from io import StringIO
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects.arith import Arith
from xdsl.dialects.builtin import Builtin, DenseIntOrFPElementsAttr, ModuleOp
from xdsl.dialects.func import Func
from xdsl.parser import Parser
from xdsl.passes import ModulePass

from ember.dialects.graph import Graph
from ember.opt import EmberOptMain, main
from ember.pass_catalogue import pass_options, pass_summary
from ember.printing import make_printer
from ember.registry import all_passes


def run_opt(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@dataclasses.dataclass(frozen=True)
class _DocumentedPass(ModulePass):
    """Rewrites the things it
    rewrites (see the module docstring). Leaves the rest.

    More detail that the summary leaves out.
    """

    name: ClassVar[str] = "test-documented"
    tile_sizes: tuple[int, ...] = (64, 64)
    keep_going: bool = False
    limit: int | None = None

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        pass


@dataclasses.dataclass(frozen=True)
class _UndocumentedPass(ModulePass):
    name: ClassVar[str] = "test-undocumented"
    depth: int = 3

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        pass


def test_summary_is_the_first_sentence_without_pointers_into_the_source() -> None:
    assert pass_summary(_DocumentedPass) == "Rewrites the things it rewrites."
    # A dataclass without a docstring has an invented one (`Name(depth: int = 3)`).
    assert pass_summary(_UndocumentedPass) == "(undocumented)"


def test_options_are_spelled_as_on_the_command_line() -> None:
    spelled = [(o.name, o.type, o.default) for o in pass_options(_DocumentedPass)]
    assert spelled == [
        ("tile-sizes", "tuple[int, ...]", "64,64"),
        ("keep-going", "bool", "false"),
        ("limit", "int|None", "(none)"),
    ]


def test_help_lists_every_ember_pass_first_with_its_summary_and_options(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--help"])
    assert exit_.value.code == 0
    help_text = capsys.readouterr().out
    ember_section, _, xdsl_section = help_text.partition("xDSL passes")
    for name, pass_class in all_passes().items():
        lines = [line for line in ember_section.splitlines() if line.split()[:1] == [name]]
        assert len(lines) == 1, name
        assert pass_summary(pass_class) in lines[0]
        for option in pass_options(pass_class):
            assert f"{option.name}={option.default}" in lines[0]
        assert f" {name}," not in xdsl_section
    assert "cse," in xdsl_section and "dce," in xdsl_section


def test_the_registry_names_each_pass_by_its_own_name() -> None:
    for name, pass_class in all_passes().items():
        assert pass_class.name == name, (name, pass_class)


def test_a_pipeline_imports_only_the_passes_it_names() -> None:
    """`ember-opt -p graph-infer-shapes` loads no lowering (a third of its start)."""
    import subprocess
    import sys

    code = ("import sys; from ember.opt import main\n"
            "try:\n    main(['-p', 'graph-infer-shapes', '/dev/stdin'])\n"
            "except SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.startswith('ember.lowering.')))")  # fmt: skip
    result = subprocess.run([sys.executable, "-c", code], input="builtin.module {}\n",
                            capture_output=True, text=True, check=True)  # fmt: skip
    assert result.stdout.strip().splitlines()[-1] == "[]", result.stdout


def test_list_passes_has_one_line_per_registered_pass(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--list-passes"])
    listed = [line.split()[0] for line in capsys.readouterr().out.splitlines() if line[:2] == "  "]
    registered = EmberOptMain(args=[]).available_passes
    assert sorted(listed) == sorted(registered)
    assert listed[: len(all_passes())] == list(all_passes())


def test_help_pass_shows_the_module_documentation(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help-pass", "graph-fold-constants"])
    text = capsys.readouterr().out
    assert text.startswith("graph-fold-constants (ember.passes.graph.fold_constants.")
    assert "  max-elements: int = " in text
    from ember.passes.graph import fold_constants

    assert (fold_constants.__doc__ or "").strip().splitlines()[0] in text


WEIGHTS_HEX = np.arange(32, dtype="<f4").tobytes().hex().upper()
GRAPH_IR = """
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %w = graph.constant dense<"0xWEIGHTS"> : tensor<4x8xf32>
  %s = graph.constant dense<2.0> : tensor<4x8xf32>
  %y = graph.mul %x, %w : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %z = graph.mul %y, %s : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %z : tensor<4x8xf32>
}
""".replace("WEIGHTS", WEIGHTS_HEX)


def parse(text: str) -> ModuleOp:
    ctx = Context()
    for dialect in (Builtin, Func, Arith, Graph):
        ctx.load_dialect(dialect)
    return Parser(ctx, text).parse_module()


def printed(module: ModuleOp, limit: int | None) -> str:
    stream = StringIO()
    make_printer(stream, elide_limit=limit).print_op(module)
    return stream.getvalue()


def test_the_eliding_printer_keeps_the_module_and_splats() -> None:
    module = parse(GRAPH_IR)
    before = printed(module, None)
    text = printed(module, 16)
    assert "%w = graph.constant dense_resource<__elided__> : tensor<4x8xf32>" in text
    assert "%s = graph.constant dense<2.000000e+00> : tensor<4x8xf32>" in text
    assert printed(module, None) == before  # the data is still there
    assert "dense_resource" not in printed(module, 32)  # 32 elements: not more than 32
    assert "dense_resource" in printed(module, 31)
    # The elided text parses again: the IR is readable and still valid.
    reparsed = parse(text)
    reparsed.verify()


def test_attributes_printed_by_xdsl_are_elided_too() -> None:
    module = parse(
        "%c = arith.constant dense<[1, 2, 3, 4, 5, 6, 7, 8]> : tensor<8xi32>\n"
        "%d = arith.constant dense<[1, 2]> : tensor<2xi32>\n"
    )
    text = printed(module, 4)
    assert "arith.constant dense_resource<__elided__> : tensor<8xi32>" in text
    assert "arith.constant dense<[1, 2]> : tensor<2xi32>" in text
    constants = [op for op in module.walk() if "value" in op.properties]
    assert all(isinstance(op.properties["value"], DenseIntOrFPElementsAttr) for op in constants)


def test_print_between_passes_heads_every_pass_of_an_expanded_pipeline(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "model.mlir"
    path.write_text(GRAPH_IR)
    code, out, err = run_opt(capsys, str(path), "-p", "graph-optimize{level=2}",
                             "--print-between-passes", "--time-passes", "--elide-large-constants")  # fmt: skip
    assert code == 0, err
    from ember.passes.graph.optimize import GraphOptimizePass

    names = [p.name for p in GraphOptimizePass(level=2).passes()]
    headers = [line for line in err.splitlines() if line.startswith("IR after ")]
    assert headers == [f"IR after {name}:" for name in names]
    # One dump per pass on stderr, as mlir-opt's; stdout is the output alone.
    assert err.count("builtin.module {") == len(names)
    assert out.count("builtin.module {") == 1 and "IR after" not in out
    assert "0x" not in out + err  # no hex weights anywhere
    timings = [line.split()[1] for line in err.splitlines() if line.startswith("Pass ")]
    assert timings == names and "took" not in out
