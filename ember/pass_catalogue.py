"""The pass catalogue: what `ember-opt --help`, `--list-passes` and
`--help-pass` say about a pass, read from the pass class itself (its
docstring and its dataclass fields), so the listing cannot drift from the code.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
from typing import get_type_hints

from xdsl.passes import ModulePass
from xdsl.utils.hints import type_repr

# Summaries end where the docstring points at the source; on the command line
# `--help-pass` prints the module docstring instead.
_SOURCE_POINTER = re.compile(
    r"\s*\((?:see )?[^()]*\bmodule docstring\)|[;,]\s*see the module docstring"
)


def own_docstring(pass_class: type[ModulePass]) -> str | None:
    """The class's own docstring, not one inherited from `ModulePass`."""
    doc = pass_class.__dict__.get("__doc__")
    # A dataclass without a docstring gets `Name(field: type, ...)` as one.
    if not doc or doc.startswith(f"{pass_class.__name__}("):
        return None
    return inspect.cleandoc(doc)


def pass_summary(pass_class: type[ModulePass]) -> str:
    """The first sentence of the pass class's own docstring, on one line."""
    doc = own_docstring(pass_class)
    if doc is None:
        return "(undocumented)"
    paragraph = " ".join(doc.split("\n\n")[0].split())
    sentence = re.split(r"(?<=[a-z)`]\.) (?=[A-Z`])", paragraph)[0]
    return _SOURCE_POINTER.sub("", sentence)


@dataclasses.dataclass(frozen=True)
class PassOption:
    """One option of a pass as the command line spells it."""

    name: str  # `max-elements`, the field `max_elements`
    type: str  # `int`, `tuple[str, ...]`
    default: str  # as it would be written in `-p`, or `(none)`


def _spec_text(value: object) -> str:
    """A default value as `-p` would spell it."""
    match value:
        case bool():
            return "true" if value else "false"
        case tuple() | list():
            values = [_spec_text(v) for v in value]  # pyright: ignore[reportUnknownVariableType]
            return ",".join(values) if values else "(none)"
        case None:
            return "(none)"
        case _:
            return str(value)


def pass_options(pass_class: type[ModulePass]) -> list[PassOption]:
    hints = get_type_hints(pass_class)
    options: list[PassOption] = []
    for field in dataclasses.fields(pass_class):
        if not field.init:
            continue
        if field.default is not dataclasses.MISSING:
            default = _spec_text(field.default)
        elif field.default_factory is not dataclasses.MISSING:
            default = _spec_text(field.default_factory())
        else:
            default = "(required)"
        options.append(PassOption(field.name.replace("_", "-"), type_repr(hints[field.name]),
                                  default))  # fmt: skip
    return options


def pass_line(name: str, pass_class: type[ModulePass], width: int) -> str:
    """`  name   summary [option=default ...]`: one line per pass."""
    options = " ".join(f"{o.name}={o.default}" for o in pass_options(pass_class))
    text = pass_summary(pass_class) + (f" [{options}]" if options else "")
    return f"  {name:<{width}}  {text}"


def describe_pass(name: str, pass_class: type[ModulePass]) -> str:
    """What `--help-pass NAME` prints: usage, options and documentation."""
    options = pass_options(pass_class)
    # Options without a default are left out of the example; required ones show their type.
    spelled = " ".join(
        f"{o.name}=<{o.type}>" if o.default == "(required)" else f"{o.name}={o.default}"
        for o in options
        if o.default != "(none)"
    )
    lines = [f"{name} ({pass_class.__module__}.{pass_class.__qualname__})",
             f"  -p '{name}{{{spelled}}}'" if spelled else f"  -p {name}", ""]  # fmt: skip
    if options:
        lines.append("options:")
        lines += [f"  {o.name}: {o.type} = {o.default}" for o in options]
        lines.append("")
    own_doc = own_docstring(pass_class)
    if own_doc:
        lines += [own_doc, ""]
    module = inspect.getmodule(pass_class)
    module_doc = module.__doc__ if module is not None else None
    if module_doc:
        lines += [inspect.cleandoc(module_doc), ""]
    return "\n".join(lines)


__all__ = [
    "PassOption",
    "describe_pass",
    "own_docstring",
    "pass_line",
    "pass_options",
    "pass_summary",
]
