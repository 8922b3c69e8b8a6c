"""The entry check of a JIT-compiled generic version, generated as LLVM IR
into the module of its kernel.

The C library's entry check (`entry_check.py`) is C, compiled by a C
compiler; the JIT has none, so `add_entry_check` builds the same check with
llvmlite into the kernel's module, as two exported functions:

    i32 ember_prepare(i64 *shapes, i64 *arena_bytes)
    i32 ember_run(void **buffers, const i64 *shapes, const void *weights,
                  void *arena, i64 arena_bytes)

`shapes` holds every input's then every output's dims, one after another
(a scalar has none). `ember_prepare` binds each symbol from the first input
dim that is the symbol alone (every later one must agree), checks each size
against its range (up to `SIZE_LIMIT` where none is declared) and each other
input dim against what the sizes make of it (a negative static dim is not
checked, as `ember.targets.versions.EntryCheck` does not), then writes the outputs'
dims (none may be negative) and the arena the sizes need. `ember_run`
repeats that, checks the outputs' dims and the arena, and calls the kernel
with the run-time sizes (`dims`: each symbolic dim of the inputs and
outputs, in order). Both return `entry_check.ERROR_CODES`' codes, but no
message: the caller builds that (the Python entry check names the input,
the axis and the symbol). Sizes that overflow int64 are `ERROR_SHAPE`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from llvmlite import ir

from ember.dialects.graph.symbolic import SIZE_LIMIT, Dim, FloorDiv, Range, SymExpr
from ember.targets.cpu.entry_check import ERROR_CODES

PREPARE = "ember_prepare"
RUN = "ember_run"

_I1, _I32, _I64, _PTR = ir.IntType(1), ir.IntType(32), ir.IntType(64), ir.PointerType()


class _Checker:
    """Emits the checks of one function: each failure branches to a block
    that returns its code."""

    def __init__(self, function: ir.Function):
        self.function = function
        self.builder = ir.IRBuilder(function.append_basic_block("entry"))
        self.overflowed: ir.Value = ir.Constant(_I1, 0)
        self.symbols: dict[str, ir.Value] = {}
        self._failures: dict[str, ir.Block] = {}

    def fail_if(self, condition: ir.Value, code: str) -> None:
        if code not in self._failures:
            block = self.function.append_basic_block(f"fail_{code.lower()}")
            ir.IRBuilder(block).ret(ir.Constant(_I32, ERROR_CODES[code]))
            self._failures[code] = block
        passed = self.function.append_basic_block("passed")
        self.builder.cbranch(condition, self._failures[code], passed)
        self.builder.position_at_end(passed)

    def load(self, array: ir.Value, index: int) -> ir.Value:
        return self.builder.load(self.builder.gep(array, [ir.Constant(_I64, index)],
                                                  source_etype=_I64), typ=_I64)  # fmt: skip

    def store(self, value: ir.Value, array: ir.Value, index: int) -> None:
        self.builder.store(value, self.builder.gep(array, [ir.Constant(_I64, index)],
                                                   source_etype=_I64))  # fmt: skip

    def of(self, dim: Dim) -> ir.Value:
        """The value of a dim over the bound symbols (overflow noted)."""
        if not isinstance(dim, SymExpr):
            return ir.Constant(_I64, int(dim))
        total: ir.Value | None = None
        for monomial, coefficient in dim.terms:
            term: ir.Value = ir.Constant(_I64, coefficient)
            for atom in monomial:
                term = self._checked(self.builder.smul_with_overflow, term, self._atom(atom))
            total = term if total is None else self._checked(self.builder.sadd_with_overflow,
                                                             total, term)  # fmt: skip
        assert total is not None
        return total

    def _checked(self, operation: object, a: ir.Value, b: ir.Value) -> ir.Value:
        pair = operation(a, b)  # type: ignore[operator]
        self.overflowed = self.builder.or_(self.overflowed, self.builder.extract_value(pair, 1))
        return self.builder.extract_value(pair, 0)

    def _atom(self, atom: str | FloorDiv) -> ir.Value:
        if isinstance(atom, str):
            return self.symbols[atom]
        numerator, divisor = self.of(atom.numerator), ir.Constant(_I64, atom.divisor)
        quotient = self.builder.sdiv(numerator, divisor)
        negative = self.builder.icmp_signed("<", self.builder.srem(numerator, divisor),
                                            ir.Constant(_I64, 0))  # fmt: skip
        return self.builder.sub(quotient, self.builder.zext(negative, _I64))  # towards -inf


def _offsets(tensors: Sequence[Sequence[Dim]]) -> list[int]:
    """Where each tensor's dims start in `shapes`."""
    offsets, at = [], 0
    for dims in tensors:
        offsets.append(at)
        at += len(dims)
    return offsets


def _emit_check(checker: _Checker, inputs: Sequence[Sequence[Dim]],
                outputs: Sequence[Sequence[Dim]], ranges: Mapping[str, Range], arena: Dim,
                shapes: ir.Value, out: ir.Value) -> ir.Value:  # fmt: skip
    """The checks of the inputs' dims in `shapes`; writes the outputs' dims
    into `out` (at their offsets) and returns the arena's bytes."""
    b = checker.builder
    offsets = _offsets([*inputs, *outputs])
    for offset, dims in zip(offsets, inputs):
        for axis, dim in enumerate(dims):
            symbol = dim.lone_symbol() if isinstance(dim, SymExpr) else None
            if symbol is None:
                continue
            size = checker.load(shapes, offset + axis)
            if symbol in checker.symbols:
                checker.fail_if(b.icmp_signed("!=", size, checker.symbols[symbol]), "ERROR_SHAPE")
            else:
                checker.symbols[symbol] = size
    for symbol, size in checker.symbols.items():
        low, high = ranges.get(symbol, (0, None))
        high = SIZE_LIMIT if high is None else high  # sizes past it would overflow int64
        outside = b.or_(b.icmp_signed("<", size, ir.Constant(_I64, low)),
                        b.icmp_signed(">", size, ir.Constant(_I64, high)))  # fmt: skip
        checker.fail_if(outside, "ERROR_RANGE")
    used = {s for dims in (*inputs, *outputs, (arena,)) for d in dims
            if isinstance(d, SymExpr) for s in d.symbols()}  # fmt: skip
    if used - set(checker.symbols):  # no input gives its size: the caller says which
        checker.fail_if(ir.Constant(_I1, 1), "ERROR_SHAPE")
        return ir.Constant(_I64, 0)
    for offset, dims in zip(offsets, inputs):
        for axis, dim in enumerate(dims):
            if isinstance(dim, SymExpr) and dim.lone_symbol() is not None:
                continue
            if not isinstance(dim, SymExpr) and dim < 0:
                continue
            expected = checker.of(dim)
            differs = b.icmp_signed("!=", checker.load(shapes, offset + axis), expected)
            if isinstance(dim, SymExpr):  # an expected size below 0 is not checked
                differs = b.and_(differs, b.icmp_signed(">=", expected, ir.Constant(_I64, 0)))
            checker.fail_if(differs, "ERROR_SHAPE")
    for offset, dims in zip(offsets[len(inputs) :], outputs):
        for axis, dim in enumerate(dims):
            size = checker.of(dim)
            checker.fail_if(b.icmp_signed("<", size, ir.Constant(_I64, 0)), "ERROR_SHAPE")
            checker.store(size, out, offset + axis)
    needed = checker.of(arena)
    checker.fail_if(checker.overflowed, "ERROR_SHAPE")
    return needed


def add_entry_check(module: ir.Module, kernel: str, inputs: Sequence[Sequence[Dim]],
                    outputs: Sequence[Sequence[Dim]], ranges: Mapping[str, Range],
                    arena: Dim) -> None:  # fmt: skip
    """Adds `ember_prepare` and `ember_run` (module docstring) to the module
    of the generic kernel `kernel(buffers, dims, weights, arena)`."""
    kernel_function = module.get_global(kernel)
    total = sum(len(dims) for dims in (*inputs, *outputs))
    run_time = [offset + axis for offset, dims in zip(_offsets([*inputs, *outputs]),
                                                      [*inputs, *outputs])
                for axis, d in enumerate(dims) if isinstance(d, SymExpr)]  # fmt: skip

    prepare = ir.Function(module, ir.FunctionType(_I32, [_PTR, _PTR]), PREPARE)
    checker = _Checker(prepare)
    shapes, arena_bytes = prepare.args
    needed = _emit_check(checker, inputs, outputs, ranges, arena, shapes, shapes)
    checker.builder.store(needed, arena_bytes)
    checker.builder.ret(ir.Constant(_I32, ERROR_CODES["OK"]))

    run = ir.Function(module, ir.FunctionType(_I32, [_PTR, _PTR, _PTR, _PTR, _I64]), RUN)
    checker = _Checker(run)
    buffers, shapes, weights, arena_pointer, arena_size = run.args
    b = checker.builder
    expected = b.bitcast(b.alloca(_I64, size=max(total, 1)), _PTR)
    needed = _emit_check(checker, inputs, outputs, ranges, arena, shapes, expected)
    start = sum(len(dims) for dims in inputs)
    for index in range(start, total):
        checker.fail_if(b.icmp_signed("!=", checker.load(shapes, index),
                                      checker.load(expected, index)), "ERROR_ARGUMENT")  # fmt: skip
    checker.fail_if(b.icmp_signed("<", arena_size, needed), "ERROR_ARENA")
    dims = b.bitcast(b.alloca(_I64, size=max(len(run_time), 1)), _PTR)
    for index, at in enumerate(run_time):
        checker.store(checker.load(shapes, at), dims, index)
    b.call(kernel_function, [buffers, dims, weights, arena_pointer])
    b.ret(ir.Constant(_I32, ERROR_CODES["OK"]))
