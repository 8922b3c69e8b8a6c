"""Errors that Ember reports to users as one-line diagnostics.

Anything raised as `EmberError` is a user-facing problem (a bad model, an
unsupported op, bad IR, a wrong input): the CLI prints `error: <message>`
and exits non-zero, without a Python traceback. Other exceptions are bugs.
"""

from __future__ import annotations


class EmberError(Exception):
    """A problem with the user's input, with a message that names where."""


class ModelLoadError(EmberError):
    """The model file is missing, unreadable or not a valid ONNX protobuf."""


class UnsupportedModelError(EmberError):
    """The model uses ops, opsets or types that Ember does not support."""


class ModelShapeError(EmberError):
    """Shapes or types in the model are inconsistent."""
