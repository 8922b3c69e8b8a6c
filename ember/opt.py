"""`ember-opt`: the `xdsl-opt`-style driver with Ember's dialects and passes.

    ember-opt model.mlir -p graph-infer-shapes --print-between-passes

Everything `xdsl-opt` offers works (`-p`, `--split-input-file`,
`--verify-diagnostics`, `--time-passes`, `-o`, `-t`); xDSL's own dialects and
passes stay available next to Ember's. Errors in the input are reported as
`file:line:col: error: message` (parse errors) or `file: error: message`
(verification and pass errors) with exit status 1, never a traceback.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from xdsl.passes import PassPipeline
from xdsl.utils.exceptions import (
    ArgSpecParseError,
    DiagnosticException,
    ParseError,
    PassFailedException,
)
from xdsl.xdsl_opt_main import xDSLOptMain

from ember.dialects.graph import Graph
from ember.errors import EmberError


class EmberOptMain(xDSLOptMain):
    version_format = "ember-opt (xDSL {xdsl_version})"

    def __init__(self, args: Sequence[str] | None = None):
        super().__init__(description="Ember modular optimizer driver", args=args)

    def register_all_dialects(self) -> None:
        super().register_all_dialects()
        for name, factory in ember_dialects().items():
            if name in self.ctx.registered_dialect_names:
                self.ctx._registered_dialects.pop(name)  # pyright: ignore[reportPrivateUsage]
            self.ctx.register_dialect(name, factory)

    def prepare_input(self):  # type: ignore[no-untyped-def]
        try:
            return super().prepare_input()
        except ValueError as error:  # e.g. an unknown file extension
            raise EmberError(str(error)) from None

    def register_all_passes(self) -> None:
        super().register_all_passes()
        from ember.passes import all_passes

        for name, pass_class in all_passes().items():
            self.register_pass(name, lambda pass_class=pass_class: pass_class)

    def setup_pipeline(self) -> None:
        """As xDSL's, with named pipelines (`graph-optimize`) expanded into their
        passes, so `--print-between-passes` and `--time-passes` show each one."""
        super().setup_pipeline()
        from ember.passes.graph.optimize import GraphOptimizePass

        expanded = []
        for compiler_pass in self.pipeline.passes:
            if isinstance(compiler_pass, GraphOptimizePass):
                expanded.extend(compiler_pass.passes())
            else:
                expanded.append(compiler_pass)
        self.pipeline = PassPipeline(tuple(expanded), self.pipeline.callback)


def ember_dialects() -> dict[str, object]:
    """Ember's dialects by name; they replace xDSL dialects of the same name."""
    from ember.dialects.loop import Loop
    from ember.dialects.tensor import Tensor

    return {"graph": lambda: Graph, "tensor": lambda: Tensor, "loop": lambda: Loop}


def _report(where: str, message: str) -> None:
    print(f"{where}: error: {message}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    try:
        tool = EmberOptMain(args=argv)
    except (ValueError, ArgSpecParseError, DiagnosticException) as error:
        # Unknown passes or bad pass options: a usage error, not a crash.
        print(f"ember-opt: error: {_diagnostic_text(error)}", file=sys.stderr)
        return 1
    where = tool.get_input_name()
    try:
        tool.run()
    except ParseError as error:
        location = error.span.get_location()
        print(f"{location}: error: {error.msg}", file=sys.stderr)
        return 1
    except (DiagnosticException, PassFailedException, EmberError) as error:
        _report(where, _diagnostic_text(error))
        return 1
    except OSError as error:
        print(f"{where}: error: {error.strerror}", file=sys.stderr)
        return 1
    return 0


def _diagnostic_text(error: Exception) -> str:
    """The first line of a verifier or pass error: the message, not the IR after it."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return lines[0] if lines else type(error).__name__


if __name__ == "__main__":
    sys.exit(main())
