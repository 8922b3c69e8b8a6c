"""The error the CPU back end reports when LLVM IR cannot become native code."""

from __future__ import annotations

from ember.errors import EmberError


class CodegenError(EmberError):
    """Invalid LLVM IR, an unresolved external symbol, or a failed link.

    It is an `EmberError` so the CLI prints it as a one-line diagnostic: the
    IR comes from the user's model, and a missing system compiler is a
    problem of the user's machine, not a bug in Ember.
    """
