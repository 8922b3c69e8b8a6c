"""The generic version's entry check as LLVM IR (`jit_entry_check.py`),
around a kernel that records the run-time sizes it is given."""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np
import pytest
from llvmlite import ir

from ember.dialects.graph.dims import parse_dim
from ember.targets.cpu.entry_check import ERROR_CODES
from ember.targets.cpu.jit import JitModule
from ember.targets.cpu.jit_entry_check import PREPARE, RUN, add_entry_check

INPUTS = [(parse_dim("N"), 8), (parse_dim("S"), parse_dim("N"))]
OUTPUTS = [(parse_dim("N"), parse_dim("2 * S"))]
RANGES = {"N": (1, 4)}
Entry = tuple[JitModule, Any, Any]
"""The JIT module, `ember_prepare` and `ember_run`."""


@pytest.fixture(scope="module")
def entry() -> Entry:
    module = ir.Module()
    pointer = ir.PointerType()
    kernel = ir.Function(module, ir.FunctionType(ir.VoidType(), [pointer] * 4), "kernel")
    builder = ir.IRBuilder(kernel.append_basic_block())
    _, dims, _, arena = kernel.args
    for index in range(3):  # the dims into the arena, for the test to read
        at = ir.Constant(ir.IntType(64), index)
        value = builder.load(
            builder.gep(dims, [at], source_etype=ir.IntType(64)), typ=ir.IntType(64)
        )
        builder.store(value, builder.gep(arena, [at], source_etype=ir.IntType(64)))
    builder.ret_void()
    add_entry_check(module, "kernel", INPUTS, OUTPUTS, RANGES, parse_dim("64 * N * S"))
    jit = JitModule(str(module))
    prepare = jit.function(PREPARE, ctypes.c_int, [ctypes.c_void_p] * 2)
    run = jit.function(RUN, ctypes.c_int, [ctypes.c_void_p] * 4 + [ctypes.c_int64])
    return jit, prepare, run


def _prepare(entry: Entry, n: int, eight: int, s: int, n_again: int) -> tuple[int, list[int], int]:
    _, prepare, _ = entry
    shapes = np.array([n, eight, s, n_again, 0, 0], dtype=np.int64)
    arena = ctypes.c_int64()
    code = prepare(shapes.ctypes.data, ctypes.addressof(arena))
    return code, shapes[4:].tolist(), arena.value


def test_prepare_gives_the_output_shapes_and_the_arena(entry: Entry) -> None:
    assert _prepare(entry, 3, 8, 5, 3) == (ERROR_CODES["OK"], [3, 10], 64 * 3 * 5)


@pytest.mark.parametrize("shape, code", [
    ((3, 8, 5, 2), "ERROR_SHAPE"),  # N from the second input disagrees
    ((3, 7, 5, 3), "ERROR_SHAPE"),  # a static dim
    ((5, 8, 5, 5), "ERROR_RANGE"),  # N past 4
    ((3, 8, 1 << 40, 3), "ERROR_RANGE"),  # S past SIZE_LIMIT
])  # fmt: skip
def test_prepare_refuses_shapes_that_do_not_fit(
    entry: Entry, shape: tuple[int, ...], code: str
) -> None:
    assert _prepare(entry, *shape)[0] == ERROR_CODES[code]


def test_run_checks_the_output_shapes_and_the_arena_then_passes_the_sizes(entry: Entry) -> None:
    _, _, run = entry
    arena = np.zeros(64 * 2 * 3 // 8, dtype=np.int64)
    buffers = (ctypes.c_void_p * 3)()

    def call(shapes: list[int], arena_bytes: int) -> int:
        array = np.array(shapes, dtype=np.int64)
        return run(ctypes.addressof(buffers), array.ctypes.data, arena.ctypes.data,
                   arena.ctypes.data, arena_bytes)  # fmt: skip

    assert call([2, 8, 3, 2, 2, 5], arena.nbytes) == ERROR_CODES["ERROR_ARGUMENT"]
    assert call([2, 8, 3, 2, 2, 6], arena.nbytes - 1) == ERROR_CODES["ERROR_ARENA"]
    assert arena[:3].tolist() == [0, 0, 0]  # the kernel did not run
    assert call([2, 8, 3, 2, 2, 6], arena.nbytes) == ERROR_CODES["OK"]
    assert arena[:3].tolist() == [2, 3, 2]  # N, S, N: the symbolic dims in order
