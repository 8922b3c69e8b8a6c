"""Running a target's pipeline stage by stage: each pass timed in the
report, its diagnostics made `CompileError`s (or `InputDependentError`s
where sizes known only at run time stop it), and the module verified before
the first stage and after the ones a target names (those whose IR the
compiler generates itself only where `EMBER_VERIFY=all` asks), so a rule
that only an op's verifier checks (a slice in bounds, a reshape keeping the
element count) holds in compiled code as it does in `ember-opt`."""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Iterator
from contextlib import contextmanager

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException, VerifyException

from ember.dialects.source_names import describe_names, source_names
from ember.errors import (
    CompileError,
    InputDependentDiagnostic,
    InputDependentError,
    first_line,
)
from ember.report import CompileReport

VERIFY_ENV = "EMBER_VERIFY"
"""`EMBER_VERIFY=all` verifies after every stage a target names, the
generated ones too (`verifies_after`); the test suite sets it."""


def verifies_after(stage: str, generated: Collection[str]) -> bool:
    """Whether to verify after `stage`: always, unless `stage` is among the
    `generated` ones, whose IR only the compiler's own generators made (the
    CPU's loop nests): a rule broken there is a bug in a pass, not in the
    model, so they are verified where `EMBER_VERIFY=all` asks (the test
    suite does) and not on every user's compile, where verifying
    ResNet-50's loop nests took a tenth of the compile."""
    return stage not in generated or os.environ.get(VERIFY_ENV) == "all"


def verify_stage(module: ModuleOp, when: str) -> None:
    """Runs xDSL's verifier on every op of `module`; the first op that breaks
    a rule is a `CompileError` naming the op (and the model's nodes it came
    from), `when` ("after the tensor stage") and the rule."""
    for op in module.walk():
        try:
            op.verify(verify_nested_ops=False)
        except VerifyException as error:
            reason = first_line(error).removeprefix(f"{op.name}: ")
            names = source_names(op)
            what = op.name
            if names:
                what += f" (node{'s' if len(names) > 1 else ''} {describe_names(names)})"
            raise CompileError(f"invalid IR {when}: {what}: {reason}") from error


def apply_passes(module: ModuleOp, passes: Iterable[ModulePass], report: CompileReport,
                 context: Context) -> None:  # fmt: skip
    """Applies `passes` to `module` in order, each timed in `report`; a
    pass's diagnostic is a `CompileError` (an `InputDependentError` where
    it says sizes known only at run time stop it) whose message is the
    diagnostic's first line, with nothing chained: a diagnostic is the
    whole story, not a traceback. The report's `observer`, if any, sees the
    module before and after each pass."""
    for compiler_pass in passes:
        if report.observer is not None:
            report.observer.before(compiler_pass.name, module)
        with report.timed_pass(compiler_pass.name), diagnostics_as_errors():
            compiler_pass.apply(context, module)
        if report.observer is not None:
            report.observer.after(compiler_pass.name, module)


@contextmanager
def diagnostics_as_errors() -> Iterator[None]:
    """A diagnostic raised in the `with` block as a `CompileError` (an
    `InputDependentError` where sizes known only at run time stop it),
    its message the diagnostic's first line, nothing chained."""
    try:
        yield
    except InputDependentDiagnostic as error:
        raise InputDependentError(first_line(error)) from None
    except DiagnosticException as error:
        raise CompileError(first_line(error)) from None


__all__ = ["VERIFY_ENV", "apply_passes", "diagnostics_as_errors", "verifies_after", "verify_stage"]
