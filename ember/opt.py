"""`ember-opt`: the `xdsl-opt`-style driver with Ember's dialects and passes.

    ember-opt model.mlir -p graph-infer-shapes --print-between-passes
    ember-opt --list-passes                # every pass, one line each, Ember's first
    ember-opt --help-pass graph-layout     # one pass: options, defaults, documentation

Everything `xdsl-opt` offers works (`-p`, `--split-input-file`,
`--verify-diagnostics`, `-o`, `-t`, ...); xDSL's own dialects and passes stay
available next to Ember's. On top of xDSL's driver:

- `--help` and `--list-passes` show Ember's passes first, each with what it
  does (its docstring's summary) and its options with their defaults;
- `--elide-large-constants[=N]` prints constant data of more than N elements
  as `dense_resource<__elided__>`, in the output and in every dump;
- `--print-between-passes` prints the IR after every pass, the last
  included, each headed `IR after PASS:`, on stderr as mlir-opt does;
- `--time-passes` reports on stderr too, so stdout stays parseable IR;
- an NPU binary (`.npu`, `.npuhex`) with no passes is printed as it is
  disassembled, line by line, without building its IR (a program of
  400,000 instructions in seconds);
- `-o FILE` is written whole or not at all: a failing run leaves no
  empty or partial file (`ember.output_files`);
- a pass that needs a constant's data the IR elided
  (`dense_resource<__elided__>`) says so, naming itself and the constant.

Every mistake in the input or on the command line is one line on stderr,
`file:line:col: error: message` (parse errors), `file: error: message`
(verification, pass and I/O errors) or `ember-opt: error: message` (command
line), with exit status 1: never a traceback.
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import os
import shutil
import sys
import textwrap
import time
from collections.abc import Callable, Iterable, Sequence
from contextlib import ExitStack
from io import BytesIO
from types import NoneType, UnionType
from typing import IO, Any, NoReturn, Union, get_args, get_origin, get_type_hints

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
from xdsl.utils.arg_spec import ArgSpec, ArgSpecParseError, parse_pipeline, parse_spec
from xdsl.utils.exceptions import DiagnosticException, ParseError
from xdsl.utils.hints import isa, type_repr
from xdsl.xdsl_opt_main import xDSLOptMain

from ember.dialects.graph import Graph
from ember.dialects.graph.types import ElidedConstantError
from ember.dialects.npu.machine import NpuProgramError
from ember.errors import EmberError, first_line
from ember.output_files import written
from ember.pass_catalogue import describe_pass, pass_line, pass_options
from ember.printing import DEFAULT_ELISION_LIMIT, make_printer

TOOL = "ember-opt"


class OptError(EmberError):
    """A one-line `ember-opt` diagnostic about `where`: a file, a
    `file:line:col`, or `ember-opt` itself for the command line."""

    def __init__(self, where: str, message: str):
        super().__init__(message)
        self.where = where


def _accepts(values: tuple[Any, ...], field_type: Any) -> bool:
    """Whether `-p` option values convert to the field's type, by the rules of
    xDSL's `ArgSpecConvertible.from_spec` (which says only `Incompatible types`)."""
    optional = get_origin(field_type) in (Union, UnionType) and NoneType in get_args(field_type)
    if not values:
        return optional
    return (len(values) == 1 and isa(values[0], field_type)) or isa(values, field_type)


def spec_problem(error: ArgSpecParseError) -> str:
    """`column N: message` from xDSL's five-line report (`pass-pipeline:1:N`,
    the spec, a caret, the message)."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    column = lines[1].rpartition(":")[2] if len(lines) > 1 else "?"
    return f"column {column}: {lines[-1]}"


# ------------------------------------------------------------------- driver


class EmberOptMain(xDSLOptMain):
    version_format = "ember-opt (xDSL {xdsl_version})"

    ember_pass_names: list[str]
    running_pass: str | None = None
    """The pass being applied, named in an internal error's report."""
    _output_stream: IO[str]
    """Where xDSL's `run` writes the output (`prepare_output`)."""

    def __init__(self, args: Sequence[str] | None = None):
        super().__init__(description="Ember modular optimizer driver", args=args)

    # -- what is registered

    def register_all_dialects(self) -> None:
        super().register_all_dialects()
        for name, factory in ember_dialects().items():
            self.ctx.register_dialect(name, factory)  # raises if it would shadow xDSL's

    def register_all_passes(self) -> None:
        super().register_all_passes()
        from ember.registry import pass_loaders

        loaders = pass_loaders()  # each pass imported when a pipeline names it
        self.ember_pass_names = list(loaders)
        for name, load in loaders.items():
            self.register_pass(name, load)

    def register_all_targets(self) -> None:
        super().register_all_targets()
        self.available_targets["npu-hex"] = _write_npu_hex

    def register_all_frontends(self) -> None:
        super().register_all_frontends()
        self.available_frontends["npu"] = lambda stream: _read_npu(stream.read(), binary=True)
        self.available_frontends["npuhex"] = lambda stream: _read_npu(stream.read(), binary=False)

    def xdsl_pass_names(self) -> list[str]:
        ours = set(self.ember_pass_names)
        return sorted(name for name in self.available_passes if name not in ours)

    # -- the command line

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        super().register_all_arguments(arg_parser)
        # xDSL builds the parser itself; its usage errors (and its own checks
        # of -t and -f) become one-line diagnostics with exit status 1.
        arg_parser.error = _usage_error  # type: ignore[method-assign]
        arg_parser.formatter_class = _HelpFormatter
        # The epilog lists every pass with its summary, which imports them
        # all: written when help is printed, not for every run.
        print_help = arg_parser.format_help

        def format_help() -> str:
            arg_parser.epilog = self.help_epilog()
            return print_help()

        arg_parser.format_help = format_help  # type: ignore[method-assign]
        _replace_help(arg_parser, "passes",
                      "comma-separated pipeline, e.g. 'graph-infer-shapes,graph-layout{layout=NHWC "
                      "block=8}' (passes listed below, and by --list-passes)")  # fmt: skip
        _replace_help(arg_parser, "target",
                      "output format (default mlir): " + ", ".join(self.available_targets))  # fmt: skip
        arg_parser.add_argument(
            "--elide-large-constants", nargs="?", type=_elision_limit, const=DEFAULT_ELISION_LIMIT,
            default=None, metavar="N",
            help=f"print constant data of more than N elements (default {DEFAULT_ELISION_LIMIT}) "
                 "as dense_resource<__elided__>, in the output and between passes",
        )  # fmt: skip
        arg_parser.add_argument(
            "--list-passes", action=_ListPassesAction, tool=self,
            help="list every pass with what it does and its options, and exit",
        )  # fmt: skip
        arg_parser.add_argument(
            "--help-pass", action=_HelpPassAction, tool=self, metavar="PASS",
            help="show one pass's options, defaults and documentation, and exit",
        )  # fmt: skip
        arg_parser.add_argument(
            "--traceback", action="store_true",
            help="on an internal error (a bug), show the Python traceback",
        )  # fmt: skip

    def help_epilog(self) -> str:
        from ember.registry import all_passes

        ember_passes = all_passes()
        width = max(len(name) for name in ember_passes)
        columns = max(shutil.get_terminal_size((100, 24)).columns - 2, 40)
        xdsl = textwrap.fill(", ".join(self.xdsl_pass_names()), width=columns,
                             initial_indent="  ", subsequent_indent="  ",
                             break_long_words=False, break_on_hyphens=False)  # fmt: skip
        return "\n".join([
            "Ember passes (-p 'NAME{option=value ...},NAME'; --help-pass NAME for details):",
            *(pass_line(name, cls, width) for name, cls in ember_passes.items()),
            "",
            "xDSL passes (--list-passes describes them):",
            xdsl,
        ])  # fmt: skip

    def list_passes(self) -> str:
        from ember.registry import all_passes

        ember_passes = all_passes()
        ember_width = max(len(name) for name in ember_passes)
        xdsl_names = self.xdsl_pass_names()
        xdsl_width = max((len(name) for name in xdsl_names), default=0)
        lines = ["Ember passes:"]
        lines += [pass_line(name, cls, ember_width) for name, cls in ember_passes.items()]
        lines += ["", "xDSL passes:"]
        lines += [pass_line(name, self.available_passes[name](), xdsl_width) for name in xdsl_names]
        return "\n".join(lines)

    def pass_class(self, name: str) -> type[ModulePass]:
        if name not in self.available_passes:
            close = difflib.get_close_matches(name, self.available_passes, n=3, cutoff=0.75)
            hint = f" (did you mean {', '.join(close)}?)" if close else " (see --list-passes)"
            raise OptError(TOOL, f"unknown pass '{name}'{hint}")
        return self.available_passes[name]()

    # -- the pipeline

    def setup_pipeline(self) -> None:
        """Builds the pipeline from `-p` with one-line errors for unknown passes,
        options and values, expands named pipelines (`graph-optimize`) into their
        passes so `--print-between-passes` and `--time-passes` show each one, and
        installs the callback that verifies, prints and times between passes."""
        from ember.passes.graph.optimize import GraphOptimizePass

        passes: list[ModulePass] = []
        for compiler_pass in self.parse_passes(self.args.passes):
            if isinstance(compiler_pass, GraphOptimizePass):
                passes.extend(compiler_pass.passes())
            else:
                passes.append(compiler_pass)
        self._timer = time.perf_counter()
        self.pipeline = PassPipeline(tuple(passes), self.between_passes)

    def parse_passes(self, text: str) -> Iterable[ModulePass]:
        try:
            specs = list(parse_pipeline(text))
        except ArgSpecParseError as error:
            raise OptError(TOOL, f"-p '{text}': {spec_problem(error)}") from None
        return [self.instantiate(spec) for spec in specs]

    def instantiate(self, spec: ArgSpec) -> ModulePass:
        pass_class = self.pass_class(spec.name)
        hints = get_type_hints(pass_class)
        fields = {f.name for f in dataclasses.fields(pass_class) if f.init}
        names = ", ".join(o.name for o in pass_options(pass_class)) or "none"
        for option, values in spec.parameters.items():
            field = option.replace("-", "_")
            if field not in fields:
                raise OptError(TOOL, f"{spec.name}: unknown option '{option}' (options: {names})")
            if not _accepts(values, hints[field]):
                given = ",".join(str(v) for v in values) or "nothing"
                raise OptError(TOOL, f"{spec.name}: option {option} expects "
                                     f"{type_repr(hints[field])}, got {given}")  # fmt: skip
        try:
            return pass_class.from_spec(spec)
        except (ValueError, TypeError, DiagnosticException, EmberError) as error:
            message = first_line(error)
            # Passes that check their options name themselves in the message.
            prefixed = message if message.startswith(f"{spec.name}:") else f"{spec.name}: {message}"
            raise OptError(TOOL, prefixed) from None

    def between_passes(
        self, previous: ModulePass | None, module: ModuleOp, upcoming: ModulePass | None
    ) -> None:
        if self.args.time_passes and previous is not None:
            seconds = time.perf_counter() - self._timer
            print(f"Pass {previous.name} took {seconds:.6f} seconds", file=sys.stderr)
        if not self.args.disable_verify:
            module.verify()
        if self.args.print_between_passes and previous is not None:
            # On stderr, as mlir-opt's dumps: stdout is the output alone.
            sys.stderr.write(f"IR after {previous.name}:\n")
            self.print_ir(module, sys.stderr)
            sys.stderr.write("\n\n")
            sys.stderr.flush()
        self.running_pass = upcoming.name if upcoming is not None else None
        self._timer = time.perf_counter()

    # -- input and output

    def run(self) -> None:
        """As xDSL's, but an output file (`-o`) is written whole or not at all
        (`ember.output_files`), and a binary NPU program printed as it is
        disassembled (`streams_disassembly`)."""
        if self.args.output_file is None:
            self.write_output(sys.stdout)
            return
        with ExitStack() as opened:
            try:
                stream = opened.enter_context(written(self.args.output_file))
            except OSError as error:
                raise OptError(self.args.output_file, f"cannot write: {error.strerror}") from None
            self.write_output(stream)

    def write_output(self, stream: IO[str]) -> None:
        if self.streams_disassembly():
            self.print_disassembly(stream)
            return
        self._output_stream = stream
        super().run()

    def prepare_output(self) -> IO[str]:
        return self._output_stream

    def streams_disassembly(self) -> bool:
        """Whether the run only prints an NPU binary or hex file as IR (no
        passes, the default printing), which `print_disassembly` does line by
        line without building the IR."""
        args = self.args
        kind = args.frontend or os.path.splitext(args.input_file or "")[1].lstrip(".")
        return (kind in ("npu", "npuhex") and not args.passes and args.target == "mlir"
                and not (args.split_input_file or args.verify_diagnostics
                         or args.print_between_passes or args.print_op_generic
                         or args.print_debuginfo or args.syntax_highlight))  # fmt: skip

    def print_disassembly(self, output: IO[str]) -> None:
        from ember.targets.npu.assembler import disassembly_lines
        from ember.targets.npu.hexfile import from_hex
        from ember.targets.npu.isa import NpuBinaryError

        stream, extension = self.get_input_stream()
        input_name = self.get_input_name()
        data = stream.read()
        try:
            if (self.args.frontend or extension) == "npu":
                name = os.path.basename(input_name).rsplit(".", 1)[0] or "program"
                programs = [(name, data)]
            else:
                programs = from_hex(data.decode())
            batch: list[str] = []
            for line in disassembly_lines(programs):
                batch.append(line)
                if len(batch) == 256:  # a block of lines at a time: the reader sees them early
                    output.write("\n".join(batch) + "\n")
                    batch.clear()
            output.write("\n".join(batch) + "\n\n")
        except UnicodeDecodeError:
            raise OptError(input_name, "an .npuhex file is text") from None
        except (NpuBinaryError, NpuProgramError) as error:
            output.flush()
            raise OptError(input_name, str(error)) from None
        output.flush()

    def get_input_stream(self) -> tuple[IO[bytes], str]:
        stream, extension = super().get_input_stream()
        # No extension (`<(ember import m.onnx)`, /dev/stdin) reads as MLIR text.
        return stream, extension or "mlir"

    def prepare_input(self) -> tuple[list[tuple[IO[bytes], int]], str]:
        name = self.get_input_name()
        if not self.args.frontend and name.lower().endswith((".onnx", ".pt2")):
            raise OptError(name, "ember-opt reads IR, not a model: import it first, "
                                 f"ember import {name} -o model.mlir (or | ember-opt ...)")  # fmt: skip
        try:
            return super().prepare_input()
        except ValueError as error:  # e.g. an unknown file extension
            raise OptError(self.get_input_name(), str(error)) from None

    def parse_chunk(
        self, chunk: IO[bytes], file_extension: str, start_offset: int = 0
    ) -> ModuleOp | None:
        """As xDSL's, but text that is not UTF-8 is a located error, not a
        `UnicodeDecodeError` from deep in the lexer; an NPU binary (`.npu`) is
        bytes, disassembled."""
        kind = self.args.frontend or file_extension
        if kind in ("npu", "npuhex"):
            return self._npu_input(chunk, binary=kind == "npu")
        data = chunk.read()
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as error:
            line = start_offset + data.count(b"\n", 0, error.start) + 1
            column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
            where = f"{self.get_input_name()}:{line}:{column}"
            raise OptError(
                where, f"input is not UTF-8 text (byte 0x{data[error.start]:02x})"
            ) from None
        try:
            return super().parse_chunk(BytesIO(data), file_extension, start_offset)
        except (ValueError, OverflowError) as error:
            # Python's limits met while parsing: a 5,000-digit integer literal,
            # a dimension beyond 64 bits. Python's advice on them is no help here.
            reason = first_line(error).split(";")[0]
            raise OptError(self.get_input_name(), f"cannot parse the input: {reason}") from None

    def _npu_input(self, chunk: IO[bytes], binary: bool) -> ModuleOp:
        from ember.targets.npu.isa import NpuBinaryError

        name = os.path.basename(self.get_input_name()).rsplit(".", 1)[0] or "program"
        try:
            return _read_npu(chunk.read(), binary, name)
        except UnicodeDecodeError:
            raise OptError(self.get_input_name(), "an .npuhex file is text") from None
        except (NpuBinaryError, NpuProgramError) as error:
            raise OptError(self.get_input_name(), str(error)) from None

    def print_ir(self, module: ModuleOp, stream: IO[str]) -> None:
        printer = make_printer(
            stream,
            elide_limit=self.args.elide_large_constants,
            syntax_highlight=self.args.syntax_highlight,
            print_generic_format=self.args.print_op_generic,
            print_properties_as_attributes=self.args.print_no_properties,
            print_debuginfo=self.args.print_debuginfo,
        )
        printer.print_op(module)
        printer.print_metadata(self.ctx.loaded_dialects)

    def output_resulting_program(self, prog: ModuleOp) -> str:
        target = parse_spec(self.args.target).name
        if target == "mlir" and self.args.elide_large_constants is not None:
            from io import StringIO

            output = StringIO()
            self.print_ir(prog, output)
            output.write("\n\n")
            return output.getvalue()
        try:
            return super().output_resulting_program(prog)
        except (NotImplementedError, ValueError, TypeError) as error:
            hint = _TARGET_HINTS.get(target, "")
            raise OptError(
                self.get_input_name(), f"-t {target}: {first_line(error)}{hint}"
            ) from None


def _read_npu(data: bytes | str, binary: bool, name: str = "program") -> ModuleOp:
    """A module of the programs in an NPU binary (one program, called `name`)
    or hex file (targets/npu/hexfile.py), disassembled."""
    from ember.targets.npu.assembler import disassemble
    from ember.targets.npu.hexfile import from_hex

    if binary:
        assert isinstance(data, bytes)
        programs = [(name, data)]
    else:
        text = data.decode() if isinstance(data, bytes) else data
        programs = from_hex(text)
    return ModuleOp([disassemble(code, name) for name, code in programs])


def _write_npu_hex(module: ModuleOp, stream: IO[str]) -> None:
    """-t npu-hex: every `npu.program` of the module assembled, as hex lines."""
    from ember.dialects.npu.ops import ProgramOp
    from ember.targets.npu.assembler import assemble
    from ember.targets.npu.hexfile import to_hex

    programs = [op for op in module.walk() if isinstance(op, ProgramOp)]
    if not programs:
        raise ValueError("the module has no npu.program (lower it first: -p "
                         "graph-partition-npu,convert-graph-to-npu)")  # fmt: skip
    try:
        stream.write(to_hex([(p.sym_name.data, assemble(p)) for p in programs]))
    except NpuProgramError as error:
        raise ValueError(str(error)) from None


# What to do when a target cannot print the IR it was given.
_TARGET_HINTS = {
    "llvm": " (-t llvm translates the llvm dialect: lower to it first, e.g. -p convert-loop-to-llvm)",
}


class _ToolAction(argparse.Action):
    """An option that prints something about the registered passes and exits."""

    def __init__(self, *args: Any, tool: EmberOptMain, nargs: int | str | None = 0, **kwargs: Any):
        super().__init__(*args, nargs=nargs, **kwargs)
        self.tool = tool


class _ListPassesAction(_ToolAction):
    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:  # fmt: skip
        print(self.tool.list_passes())
        parser.exit()


class _HelpPassAction(_ToolAction):
    def __init__(self, *args: Any, tool: EmberOptMain, **kwargs: Any):
        super().__init__(*args, tool=tool, nargs=None, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:  # fmt: skip
        print(describe_pass(values, self.tool.pass_class(values)), end="")
        parser.exit()


class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Keeps the epilog's layout, and never breaks a pass name at a hyphen."""

    def _split_lines(self, text: str, width: int) -> list[str]:
        return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False)


def _replace_help(parser: argparse.ArgumentParser, dest: str, text: str) -> None:
    """xDSL's help for -p and -t lists every name, comma-joined without spaces,
    which argparse then breaks mid-word: Ember's help lists them itself."""
    for action in parser._actions:  # pyright: ignore[reportPrivateUsage]
        if action.dest == dest:
            action.help = text


def _usage_error(message: str) -> NoReturn:
    raise OptError(TOOL, f"{message}; see ember-opt --help")


def _elision_limit(text: str) -> int:
    try:
        limit = int(text)
    except ValueError:
        limit = -1
    if limit < 0:
        raise OptError(TOOL, f"--elide-large-constants expects a number of elements, got '{text}'")
    return limit


def ember_dialects() -> dict[str, Callable[[], Any]]:
    """Ember's dialects by name. None has the name of an xDSL dialect, so every
    upstream op (the tensor level's `linalg` and `tensor` included) still parses."""
    from ember.dialects.ember_gpu import EmberGpu
    from ember.dialects.ember_linalg import EmberLinalg
    from ember.dialects.loop import Loop
    from ember.dialects.npu.ops import Npu

    return {
        "graph": lambda: Graph,
        "ember_linalg": lambda: EmberLinalg,
        "loop": lambda: Loop,
        "ember_gpu": lambda: EmberGpu,
        "npu": lambda: Npu,
    }


def _diagnose(error: BaseException, input_name: str) -> str | None:
    """`where: error: message` for an exception the user's input or command
    line can cause; None for a bug."""
    match error:
        case OptError():
            return f"{error.where}: error: {error}"
        case ArgSpecParseError():  # a bad `-t`/`-f` spec
            return f"{TOOL}: error: -t or -f: {spec_problem(error)}"
        case ParseError():
            return f"{error.span.get_location()}: error: {error.msg}"
        case DiagnosticException() | EmberError():
            return f"{input_name}: error: {first_line(error)}"
        case OSError():
            return f"{error.filename or input_name}: error: {error.strerror or error}"
        case RecursionError():
            return f"{input_name}: error: IR nested too deeply (Python's recursion limit)"
        case MemoryError():
            return f"{input_name}: error: out of memory"
    return None


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    tool: EmberOptMain | None = None
    try:
        tool = EmberOptMain(args=arguments)
        tool.run()
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader (`| head`) has gone; say nothing more on the closed pipe.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (Exception, ArgSpecParseError) as error:  # xDSL's ArgSpecParseError is no Exception
        input_name = tool.get_input_name() if tool is not None else TOOL
        line = _diagnose(error, input_name)
        if isinstance(error, ElidedConstantError) and tool is not None and tool.running_pass:
            line = f"{input_name}: error: {tool.running_pass}: {first_line(error)}"
        if line is None:
            if "--traceback" in arguments:
                raise
            in_pass = f" in {tool.running_pass}" if tool is not None and tool.running_pass else ""
            line = (f"{input_name}: error: internal error{in_pass}: {type(error).__name__}: "
                    f"{first_line(error)} (--traceback shows where)")  # fmt: skip
        print(line, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
