"""Errors that Ember reports to users as one-line diagnostics.

Anything raised as `EmberError` is a user-facing problem (a bad model, an
unsupported op, bad IR, a wrong input): the CLI prints `error: <message>`
and exits non-zero, without a Python traceback. Other exceptions are bugs.
"""

from __future__ import annotations

from xdsl.utils.exceptions import DiagnosticException

_CONTROL_CHARACTERS = {code: f"\\x{code:02x}" for code in (*range(0x20), 0x7F)}


def one_line(text: str) -> str:
    """`text` with control characters (newlines included) written as `\\xNN`
    escapes: names taken from a model may hold any of them."""
    return text.translate(_CONTROL_CHARACTERS)


def first_line(error: BaseException) -> str:
    """The first non-blank line of an exception's message (a verifier or pass
    error goes on with the IR; another tool's error with its context), or
    the exception's type name when there is none."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return lines[0] if lines else type(error).__name__


class EmberError(Exception):
    """A problem with the user's input, with a message that names where.
    The message is one line whatever names it quotes (see `one_line`)."""

    def __init__(self, message: str = "", *args: object):
        super().__init__(one_line(str(message)), *args)


class ModelLoadError(EmberError):
    """The model file is missing, unreadable or not a valid ONNX protobuf."""


class InvalidModelError(ModelLoadError):
    """The model breaks ONNX's own rules: a value written twice, an attribute of
    the wrong kind, tensor data that does not match its shape, a name that is
    not UTF-8, ... (what `onnx.checker` or Ember's own checks reject)."""


class UnsupportedModelError(EmberError):
    """The model uses ops, opsets or types that Ember does not support."""


class ModelShapeError(EmberError):
    """Shapes or types in the model are inconsistent."""


class TensorTooLargeError(ModelShapeError):
    """A tensor would exceed Ember's per-tensor size limit
    (`ember.dialects.graph.types.MAX_TENSOR_BYTES`); refused before allocating."""


class CompileError(EmberError):
    """A pass could not handle the model (an op without a lowering, ...)."""


class InputDependentError(CompileError):
    """The model's shapes, or parameters the compiled code needs as constants
    (Slice starts, Reduce axes, Pad widths, ...), depend on its inputs: they
    are unknown until the inputs are. Fixing the input shapes (or baking small
    integer inputs in as constants, as the ONNX backend does) can resolve it."""


class InputDependentDiagnostic(DiagnosticException):
    """What a pass raises for an input-dependent shape or parameter; the
    compiler reports it as `InputDependentError`."""
