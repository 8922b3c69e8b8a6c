"""A lowered model's LLVM module split into parts that LLVM compiles separately.

LLVM optimises and generates code for each function on its own once the
kernels are out of line (`ember.kernel`: internal and `noinline`), so the
module's functions can be compiled as several modules, on several cores
(`parallel_codegen.py`), and their objects linked into one program. A part
holds whole units:

- the rest: every function that C can call (the entry function,
  `ember_run`, ...) and whatever they reach but the kernels, always in part 0;
- a kernel with the internal functions it reaches but other kernels (the
  parallel tasks `loop-parallelize` outlined from it).

An internal function that two units reach joins them into one, so it is
defined once, next to every call of it. Units go to parts by the size of
their text, the largest first, each to the part with the least text so far;
calls between parts reach the kernels, which become external and hidden
(a library exports what its C header declares and nothing else; they are
named after the entry function, so each model's are its own). Every part
declares the functions of other parts it may call (not their internal
ones) and carries the module's loop metadata.

A module with global variables, named metadata or identified struct types
(none of which the lowering makes) stays in one part. The JIT links the
parts' objects into one library (`jit.py`), `ember compile` into one
shared library with the thread pool's (`aot.py`).
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Collection

from llvmlite import ir

from ember.targets.cpu.parallel_codegen import worker_count

_REFERENCE = re.compile(r'@("(?:[^"\\]|\\.)*"|[-\w$.]+)')
"""A global's name as LLVM IR text writes a reference to it."""

_HIDDEN = ("internal", "private")

MIN_PART_INSTRUCTIONS = 2000
"""The least work worth a part of its own, in LLVM instructions: a part
costs a round trip to a worker and a module of LLVM's own (milliseconds),
and 2,000 instructions of kernels take about 0.2 s to optimise and emit
(ResNet-50's 18,500 took 1.8 s on a Zen 4 core)."""

PARTS_PER_CORE = 4
"""Parts per core compiling them (the workers and this thread), so a core
that finishes early, or a worker that starts late, evens out."""


def part_count(module: ir.Module) -> int:
    """How many parts to split `module` into: one per `MIN_PART_INSTRUCTIONS`,
    at most `PARTS_PER_CORE` per core the codegen workers and this thread
    have."""
    workers = worker_count()
    if workers == 0:
        return 1
    size = sum(len(block.instructions) for value in module.globals.values()
               if isinstance(value, ir.Function) for block in value.blocks)  # fmt: skip
    return max(1, min(size // MIN_PART_INSTRUCTIONS, PARTS_PER_CORE * (workers + 1)))


def split_module(module: ir.Module, count: int, hidden: Collection[str] = ()) -> list[str]:
    """The IR text of `module` in at most `count` parts (fewer where it has
    fewer units), the functions named in `hidden` defined with hidden
    visibility (a library does not export them); kernels that become
    external are changed in `module` too."""
    functions = [value for value in module.globals.values() if isinstance(value, ir.Function)]
    whole = len(functions) < len(module.globals) or module.namedmetadata
    if whole or module.get_identified_types():
        return [hide(str(module), hidden)]
    defined = {function.name: function for function in functions if function.blocks}
    kernels = {name for name, f in defined.items() if _is_kernel(f)} if count > 1 else set()
    for name in kernels:
        defined[name].linkage = ""  # called from other parts
    texts = {name: str(function) for name, function in defined.items()}
    for name in kernels | (set(hidden) & texts.keys()):  # but no more visible than before
        texts[name] = _hidden_definition(texts[name])
    if not kernels:
        return [_part_text(module, functions, texts, set(texts), {})]
    references = {name: {m.group(1).strip('"') for m in _REFERENCE.finditer(text)}
                  for name, text in texts.items()}  # fmt: skip
    # The kernels are external now: with what C can call, they start the units.
    units = _units(references, {name for name, f in defined.items() if f.linkage not in _HIDDEN})
    members: dict[str, list[str]] = {}
    for name in defined:
        members.setdefault(units[name], []).append(name)
    kernel_units = [root for root in members if root in kernels]
    rest = [name for root, names in members.items() if root not in kernels for name in names]
    parts: list[list[str]] = [rest] + [[] for _ in range(count - 1)]
    sizes = [(sum(len(texts[name]) for name in rest), 0)] + [(0, i) for i in range(1, count)]
    heapq.heapify(sizes)
    for root in sorted(kernel_units, key=lambda r: -sum(len(texts[n]) for n in members[r])):
        size, index = heapq.heappop(sizes)
        parts[index] += members[root]
        heapq.heappush(sizes, (size + sum(len(texts[name]) for name in members[root]), index))
    return [_part_text(module, functions, texts, set(names), references)
            for names in parts if names]  # fmt: skip


def standalone_part(module: ir.Module, hidden: Collection[str] = ()) -> str:
    """The IR text of `module` as one part of a program whose other parts
    call its kernels: every kernel it defines external and hidden, and so
    are the functions `hidden` (`streamed_codegen.py` makes a model's parts
    one at a time this way)."""
    functions = [value for value in module.globals.values() if isinstance(value, ir.Function)]
    defined = {function.name: function for function in functions if function.blocks}
    kernels = {name for name, function in defined.items() if _is_kernel(function)}
    for name in kernels:
        defined[name].linkage = ""
    texts = {name: str(function) for name, function in defined.items()}
    for name in kernels | (set(hidden) & texts.keys()):
        texts[name] = _hidden_definition(texts[name])
    return _part_text(module, functions, texts, set(texts), {})


def hide(text: str, names: Collection[str]) -> str:
    """IR text with the definitions of the (external) functions `names`
    given hidden visibility."""
    for name in names:
        definition = re.compile(rf'^(define (?:external )?)(?=[^\n]*@"?{re.escape(name)}"?\()',
                                re.MULTILINE)  # fmt: skip
        text = definition.sub(r"\1hidden ", text, count=1)
    return text


def _hidden_definition(text: str) -> str:
    """One function's IR text (its definition first) with hidden visibility."""
    assert text.startswith("define "), text[:40]
    return "define hidden " + text.removeprefix("define ").removeprefix("external ")


def _is_kernel(function: ir.Function) -> bool:
    return function.linkage in _HIDDEN and "noinline" in function.attributes


def _units(references: dict[str, set[str]], roots: set[str]) -> dict[str, str]:
    """Each defined function's unit, named by one of its functions: each of
    `roots` starts a unit of its own; an internal function joins the units
    of the functions that reach it (`references`: the globals each
    defined function's text names)."""
    parent = {name: name for name in references}

    def find(name: str) -> str:
        while parent[name] != name:
            parent[name] = parent[parent[name]]
            name = parent[name]
        return name

    for name, reached_names in references.items():
        for reached in reached_names:
            if reached in references and reached != name and reached not in roots:
                first, second = find(name), find(reached)
                if first != second:  # a root stays its unit's name
                    joined, into = (second, first) if first in roots else (first, second)
                    parent[joined] = into
    return {name: find(name) for name in references}


def _part_text(module: ir.Module, functions: list[ir.Function], texts: dict[str, str],
               names: set[str], references: dict[str, set[str]]) -> str:  # fmt: skip
    """The module's header, the functions `names` defined, those of other
    parts that they name declared (every one where `references` does not
    say), the functions the module only declares, and its metadata."""
    declarations = ir.Module(name=module.name)
    lines = [
        f'; ModuleID = "{module.name}"',
        f'target triple = "{module.triple}"',
        f'target datalayout = "{module.data_layout}"',
        "",
    ]
    named = set().union(*(references[n] for n in names)) if references else None
    for function in functions:
        if function.name in names:
            lines.append(texts[function.name])
        elif function.name in texts:
            # Another part's internal function is never called from here.
            if function.linkage not in _HIDDEN and (named is None or function.name in named):
                lines.append(str(ir.Function(declarations, function.ftype, function.name)))
        else:
            lines.append(str(function))
    lines += [str(metadata) for metadata in module.metadata]
    return "\n".join(lines)


__all__ = ["MIN_PART_INSTRUCTIONS", "hide", "part_count", "split_module", "standalone_part"]
