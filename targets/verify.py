"""Verification between a target's stages: the module is verified before
the first stage and after the ones a target names, so a rule that only an
op's verifier checks (a slice in bounds, a reshape keeping the element
count) holds in compiled code as it does in `ember-opt`."""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import VerifyException

from ember.errors import CompileError, first_line


def verify_stage(module: ModuleOp, when: str) -> None:
    """Runs xDSL's verifier on every op of `module`; the first op that breaks
    a rule is a `CompileError` naming the op, `when` ("after the tensor
    stage") and the rule."""
    for op in module.walk():
        try:
            op.verify(verify_nested_ops=False)
        except VerifyException as error:
            reason = first_line(error).removeprefix(f"{op.name}: ")
            raise CompileError(f"invalid IR {when}: {op.name}: {reason}") from error


__all__ = ["verify_stage"]
