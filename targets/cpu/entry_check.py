"""The C entry check of a deployed model with symbolic dims.

A library compiled once for every size of its symbols exports three
functions around the generated kernel (which stays hidden in the library):

    int NAME_prepare(NAME_shapes *shapes, size_t *arena_bytes);
    int NAME_run(const NAME_buffers *buffers, const NAME_shapes *shapes,
                 const void *weights, void *arena, size_t arena_bytes);
    const char *NAME_error(void);

`NAME_prepare` reads the inputs' shapes from `shapes`, binds every symbol
from them (the first input dim that is the symbol alone gives its size,
every later one must agree), checks each size against its symbol's range
and each other input dim against what the sizes make of it, then writes the
outputs' shapes into `shapes` and the arena the call needs into
`*arena_bytes`. `NAME_run` repeats the checks, checks the outputs' shapes
and the arena, passes the run-time sizes to the kernel and runs it. Both
return `NAME_OK` (0) or an error code, and `NAME_error()` is the message of
the calling thread's last error, naming the input, the axis and the symbol
as the Python entry check (`ember.targets.versions.EntryCheck`) does.

`entry_check_source` writes that C from plain data: the model's inputs and
outputs (`CTensor`: ONNX name, struct member, dims), the symbols' ranges and
the arena's formula. Symbols become locals `s0, s1, ...` (ONNX names need
not be C identifiers) and `floordiv` a helper that rounds towards minus
infinity, as `SymExpr` does.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ember.dialects.graph.symbolic import SIZE_LIMIT, Dim, FloorDiv, Range, SymExpr, range_text
from ember.targets.cpu.errors import CodegenError

ERROR_CODES = {"OK": 0, "ERROR_SHAPE": 1, "ERROR_RANGE": 2, "ERROR_ARENA": 3, "ERROR_ARGUMENT": 4,
               "ERROR_VERSION": 5}  # fmt: skip
"""The return codes of `NAME_prepare` and `NAME_run`, as `NAME_<key>` macros."""

ERROR_DOCS = {
    "OK": "success",
    "ERROR_SHAPE": "an input's shape does not fit the model (or another input's)",
    "ERROR_RANGE": "a symbol's size is outside its declared range",
    "ERROR_ARENA": "arena_bytes is less than NAME_prepare says the call needs",
    "ERROR_ARGUMENT": "a NULL pointer, or an output shape other than NAME_prepare's",
    "ERROR_VERSION": "no version was compiled for these sizes (and there is no generic one)",
}


@dataclass(frozen=True)
class CTensor:
    """An input or output as the entry check sees it."""

    name: str
    """The ONNX name (for messages)."""
    member: str
    """Its member in `NAME_buffers` and `NAME_shapes`."""
    dims: tuple[Dim, ...]


@dataclass(frozen=True)
class CVersion:
    """One compiled version of the model: a hidden kernel and where its
    weights start in the weights blob."""

    kernel: str
    weights_offset: int
    arena: Dim
    """Its arena in bytes: a number for a static version, a formula over the
    symbols for the generic one."""
    sizes: Mapping[str, int] | None = None
    """The sizes of the symbols it was compiled for; None for the generic
    version (every size, `kernel(buffers, dims, weights, arena)`; a static
    one is `kernel(buffers, weights, arena)`)."""


@dataclass(frozen=True)
class EntryNames:
    """The C names the entry check defines or calls."""

    header: str
    shapes: str
    buffers: str
    prepare: str
    run: str
    error: str
    codes: str
    """The prefix of the error-code macros (`MODEL_` for `MODEL_OK`)."""


def _c_string(text: str) -> str:
    """`text` as a C string literal that printf prints as it is."""
    return json.dumps(text.replace("%", "%%"), ensure_ascii=True)


class _Expressions:
    """SymExpr -> C over the symbols' locals."""

    def __init__(self, symbols: Sequence[str]):
        self.local = {name: f"s{i}" for i, name in enumerate(symbols)}

    def of(self, dim: Dim) -> str:
        if not isinstance(dim, SymExpr):
            return f"INT64_C({int(dim)})"
        total = ""
        for monomial, coefficient in dim.terms:
            factors = [self._atom(atom) for atom in monomial]
            if coefficient != 1 or not factors:
                factors.insert(0, f"INT64_C({coefficient})")
            term = factors[0]
            for factor in factors[1:]:
                term = f"ember_mul({term}, {factor})"
            total = term if not total else f"ember_add({total}, {term})"
        return total

    def _atom(self, atom: str | FloorDiv) -> str:
        if isinstance(atom, str):
            return self.local[atom]
        return f"ember_floordiv({self.of(atom.numerator)}, INT64_C({atom.divisor}))"


def _dims_text(dims: Sequence[Dim]) -> str:
    return "[" + ", ".join(map(str, dims)) + "]"


def _fail(names: EntryNames, code: str, message: str, *values: str) -> str:
    arguments = "".join(f", {v}" for v in values)
    return f"return ember_fail({names.codes}{code}, {message}{arguments});"


def _bind(names: EntryNames, inputs: Sequence[CTensor], ranges: Mapping[str, Range],
          exprs: _Expressions) -> list[str]:  # fmt: skip
    """The statements that bind the symbols and check the inputs' shapes."""
    lines: list[str] = []
    source: dict[str, str] = {}
    for tensor in inputs:
        for axis, dim in enumerate(tensor.dims):
            symbol = dim.lone_symbol() if isinstance(dim, SymExpr) else None
            if symbol is None:
                continue
            value, where = (
                f"shapes->{tensor.member}[{axis}]",
                f"input '{tensor.name}' axis {axis}",
            )
            if symbol not in source:
                source[symbol] = where
                lines.append(f"{exprs.local[symbol]} = {value};")
                continue
            message = (
                _c_string(f"{where} is ")
                + ' "%" PRId64 '
                + _c_string(f", but {symbol} is ")
                + ' "%" PRId64 '
                + _c_string(f" from {source[symbol]}")
            )
            lines.append(f"if ({value} != {exprs.local[symbol]}) "
                         + _fail(names, "ERROR_SHAPE", message, value, exprs.local[symbol]))  # fmt: skip
    unbound = sorted(set(exprs.local) - set(source))
    if unbound:
        raise CodegenError(
            f"no input dim is {', '.join(unbound)} alone, so a caller's shapes cannot give its "
            "size (pin it with --dim NAME=SIZE)"
        )
    for symbol, where in source.items():
        low, high = ranges.get(symbol, (0, None))
        high = SIZE_LIMIT if high is None else high  # sizes past it would overflow int64
        local = exprs.local[symbol]
        test = f"{local} < INT64_C({low}) || {local} > INT64_C({high})"
        message = (_c_string(f"{where}: {symbol} = ") + ' "%" PRId64 '
                   + _c_string(f" is outside its range {range_text((low, high))}"))  # fmt: skip
        lines.append(f"if ({test}) " + _fail(names, "ERROR_RANGE", message, local))
    for tensor in inputs:
        for axis, dim in enumerate(tensor.dims):
            if isinstance(dim, SymExpr) and dim.lone_symbol() is not None:
                continue
            value = f"shapes->{tensor.member}[{axis}]"
            where = f"input '{tensor.name}' {_dims_text(tensor.dims)} axis {axis} is "
            expected = exprs.of(dim)
            if isinstance(dim, SymExpr):
                message = (_c_string(where) + ' "%" PRId64 ' + _c_string(f", but {dim} is ")
                           + ' "%" PRId64 ')  # fmt: skip
                failure = _fail(names, "ERROR_SHAPE", message, value, expected)
            else:
                message = _c_string(where) + ' "%" PRId64 ' + _c_string(f", not {dim}")
                failure = _fail(names, "ERROR_SHAPE", message, value)
            lines.append(f"if ({value} != {expected}) {failure}")
    return lines


def _select(names: EntryNames, versions: Sequence[CVersion], exprs: _Expressions) -> list[str]:
    """The statements that choose the version for the bound sizes (into
    `*version`, an index into `versions`) and its arena (into `needed`)."""
    lines = ["int64_t needed = 0;"]
    keyword = "if"
    for index, version in enumerate(versions):
        if version.sizes is None:
            test = "" if keyword == "if" else "else "
            lines.append(f"{test}{{ *version = {index}; needed = {exprs.of(version.arena)}; }}")
            return lines
        test = " && ".join(
            f"{exprs.local[n]} == INT64_C({v})" for n, v in sorted(version.sizes.items())
        )
        lines.append(
            f"{keyword} ({test}) {{ *version = {index}; needed = INT64_C({version.arena}); }}"
        )
        keyword = "else if"
    compiled = "; ".join(", ".join(f"{n}={v}" for n, v in sorted(version.sizes.items()))
                         for version in versions if version.sizes is not None)  # fmt: skip
    bound = sorted(exprs.local)
    message = _c_string("no version of the model for ") + ' ", " '.join(
        _c_string(f"{n}=") + ' "%" PRId64 ' for n in bound) + _c_string(
        f": it was compiled for {compiled}")  # fmt: skip
    lines.append("else " + _fail(names, "ERROR_VERSION", message, *(exprs.local[n] for n in bound)))
    return lines


def _check_function(names: EntryNames, inputs: Sequence[CTensor], outputs: Sequence[CTensor],
                    ranges: Mapping[str, Range], versions: Sequence[CVersion],
                    exprs: _Expressions) -> str:  # fmt: skip
    """`static int ember_check(shapes, out, arena, version)`: binds and
    checks the inputs, writes the outputs' shapes into `out`, the version
    these sizes run into `version` and its arena into `arena`."""
    body = ["ember_overflowed = 0;"]
    body += [f"int64_t {local} = 0;" for local in exprs.local.values()]
    body += [f"(void){local};" for local in exprs.local.values()]
    body += _bind(names, inputs, ranges, exprs)
    for tensor in outputs:
        for axis, dim in enumerate(tensor.dims):
            body.append(f"out->{tensor.member}[{axis}] = {exprs.of(dim)};")
            if not isinstance(dim, SymExpr):
                continue
            message = _c_string(f"output '{tensor.name}' {_dims_text(tensor.dims)} axis "
                                f"{axis} would be ") + ' "%" PRId64 '  # fmt: skip
            body.append(f"if (out->{tensor.member}[{axis}] < 0) "
                        + _fail(names, "ERROR_SHAPE", message, f"out->{tensor.member}[{axis}]"))  # fmt: skip
    body += _select(names, versions, exprs)
    body.append(
        "if (ember_overflowed) "
        + _fail(
            names,
            "ERROR_SHAPE",
            _c_string("these sizes make a shape or the arena too large for int64"),
        )
    )
    body.append("*arena = (size_t)(needed < 64 ? 64 : needed);")
    body.append("return 0;")
    signature = (f"static int ember_check(const {names.shapes} *shapes, {names.shapes} *out, "
                 "size_t *arena, int *version)")  # fmt: skip
    return signature + " {\n" + "".join(f"    {line}\n" for line in body) + "}\n"


def _elements(member: str, rank: int, where: str) -> str:
    product = "INT64_C(1)"
    for axis in range(rank):
        product = f"ember_mul({product}, {where}->{member}[{axis}])"
    return product


def _kernels(names: EntryNames, versions: Sequence[CVersion]) -> tuple[str, str]:
    """The kernels' declarations, and the statements of `NAME_run` that call
    the chosen one (`version`) with its part of the weights."""
    declarations, calls = [], []
    for index, version in enumerate(versions):
        dims = "" if version.sizes is not None else "const int64_t *dims, "
        declarations.append(f"void {version.kernel}(const {names.buffers} *buffers, {dims}"
                            "const void *weights, void *arena);\n")  # fmt: skip
        passed = "" if version.sizes is not None else "dims, "
        calls.append(f"    if (version == {index}) {version.kernel}(buffers, {passed}"
                     f"(const char *)weights + {version.weights_offset}, arena);\n")  # fmt: skip
    return "".join(declarations), "".join(calls)


def entry_check_source(names: EntryNames, inputs: Sequence[CTensor], outputs: Sequence[CTensor],
                       ranges: Mapping[str, Range], versions: Sequence[CVersion]) -> str:  # fmt: skip
    """The C of `NAME_prepare`, `NAME_run` and `NAME_error` (module
    docstring) for these versions, the generic one (if any) last."""
    symbols = sorted(set(ranges) | {s for t in (*inputs, *outputs) for d in t.dims
                                    if isinstance(d, SymExpr) for s in d.symbols()})  # fmt: skip
    exprs = _Expressions(symbols)
    tensors = [*inputs, *outputs]
    run_time = [f"shapes->{t.member}[{axis}]" for t in tensors
                for axis, d in enumerate(t.dims) if isinstance(d, SymExpr)]  # fmt: skip
    pointers = [(t.member, len(t.dims)) for t in tensors]
    null_checks = "".join(
        f"    if (buffers->{member} == NULL && {_elements(member, rank, 'shapes')} > 0) "
        + _fail(names, "ERROR_ARGUMENT", _c_string(f"buffers->{member} is NULL"))
        + "\n"
        for member, rank in pointers
    )
    output_checks = "".join(
        f"    if (shapes->{t.member}[{axis}] != expected.{t.member}[{axis}]) "
        + _fail(names, "ERROR_ARGUMENT", _c_string(f"shapes->{t.member}[{axis}] is ") + ' "%" PRId64 '
                + _c_string(" but the inputs give ") + ' "%" PRId64 '
                + _c_string(f" (output '{t.name}'; {names.prepare} writes it)"),
                f"shapes->{t.member}[{axis}]", f"expected.{t.member}[{axis}]") + "\n"
        for t in outputs for axis in range(len(t.dims))
    )  # fmt: skip
    arena_message = (_c_string("arena_bytes is ") + ' "%zu" ' + _c_string(", but these shapes need ")
                     + ' "%zu" ' + _c_string(f" ({names.prepare} says how many)"))  # fmt: skip
    dims_array = ", ".join(run_time) or "0"
    declarations, calls = _kernels(names, versions)
    return f"""/* The entry check of {names.header}: generated by Ember, see its comments. */
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "{names.header}"

{declarations}
static _Thread_local char ember_message[512];

static int ember_fail(int code, const char *format, ...) {{
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(ember_message, sizeof ember_message, format, arguments);
    va_end(arguments);
    return code;
}}

static _Thread_local int ember_overflowed;

static int64_t ember_mul(int64_t a, int64_t b) {{
    int64_t product;
    ember_overflowed |= __builtin_mul_overflow(a, b, &product);
    return product;
}}

static int64_t ember_add(int64_t a, int64_t b) {{
    int64_t sum;
    ember_overflowed |= __builtin_add_overflow(a, b, &sum);
    return sum;
}}

static int64_t ember_floordiv(int64_t a, int64_t d) {{
    return a % d < 0 ? a / d - 1 : a / d;
}}

{_check_function(names, inputs, outputs, ranges, versions, exprs)}
const char *{names.error}(void) {{
    return ember_message;
}}

int {names.prepare}({names.shapes} *shapes, size_t *arena_bytes) {{
    size_t arena = 0;
    int version = 0;
    if (shapes == NULL) {_fail(names, "ERROR_ARGUMENT", _c_string("shapes is NULL"))}
    int code = ember_check(shapes, shapes, &arena, &version);
    if (code == 0 && arena_bytes != NULL) *arena_bytes = arena;
    return code;
}}

int {names.run}(const {names.buffers} *buffers, const {names.shapes} *shapes,
    const void *weights, void *arena, size_t arena_bytes) {{
    size_t needed = 0;
    int version = 0;
    if (buffers == NULL || shapes == NULL || weights == NULL || arena == NULL)
        {_fail(names, "ERROR_ARGUMENT", _c_string("buffers, shapes, weights and arena must not be NULL"))}
    {names.shapes} expected = *shapes;
    int code = ember_check(shapes, &expected, &needed, &version);
    if (code != 0) return code;
{output_checks}    if (arena_bytes < needed) {_fail(names, "ERROR_ARENA", arena_message, "arena_bytes", "needed")}
{null_checks}    const int64_t dims[] = {{{dims_array}}};
    (void)dims;
{calls}    return 0;
}}
"""
