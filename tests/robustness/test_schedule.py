"""Adversarial schedules: whatever a hand-written `#loop.schedule` holds,
`ember-opt` answers with generated loops or one `error:` line (exit status
1), never a traceback; from Python a bad schedule is a `VerifyException` or a
`ScheduleError`; extreme but valid fields (tiles far past the extent, dims
of extent 0) compile to correct code."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from xdsl.ir.affine import AffineDimExpr, AffineMap
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

from ember.context import make_context
from ember.dialects.schedule import (
    MAX_UNROLL,
    SCHEDULE,
    ScheduleAttr,
    ScheduleError,
    is_projected_permutation,
    set_schedule,
)
from ember.errors import EmberError
from ember.opt import main
from tests.passes.test_schedule import CONV, MATMUL_F32, MAX_POOL, compute, run

VALID = "order = [2, 0, 1], tiles = [4, 5, 3], parallel = [0, 1], unroll = 4, vector = 8"
ALPHABET = "[]=,<>-+ 0123456789orderilsvctunpa#:{}"
"""What mutations insert. No double quote: an unterminated string literal
followed by a long line makes xDSL 0.75's lexer backtrack exponentially
(`MLIRLexer._unescaped_characters_regex`), whatever dialect is parsed."""


def _matmul_with(schedule_text: str) -> str:
    return MATMUL_F32.replace(
        "%m = linalg.matmul ins(",
        f"%m = linalg.matmul {{schedule = #loop.schedule<{schedule_text}>}} ins(",
    )


def _mutations(text: str, count: int, seed: int) -> list[str]:
    """`count` variants of `text`, each with one to three random character
    deletions, insertions, replacements or duplicated spans."""
    rng = np.random.default_rng(seed)
    variants = []
    for _ in range(count):
        mutated = text
        for _ in range(int(rng.integers(1, 4))):
            at = int(rng.integers(0, len(mutated) + 1))
            kind = int(rng.integers(0, 4))
            char = ALPHABET[int(rng.integers(0, len(ALPHABET)))]
            if kind == 0:
                mutated = mutated[:at] + mutated[at + 1 :]
            elif kind == 1:
                mutated = mutated[:at] + char + mutated[at:]
            elif kind == 2:
                mutated = mutated[:at] + char + mutated[at + 1 :]
            else:
                mutated = mutated[:at] + mutated[at : at + 6] + mutated[at:]
        variants.append(mutated)
    return variants


def _random_fields(count: int, seed: int) -> list[str]:
    """`count` schedules with random fields for a matmul (3 dims, k a
    reduction), each field wrong on its own or for the op one time in ten
    (an order of 2 or 4 dims, a negative tile, a parallel dim out of range or
    the reduction, unroll 0 or 65, a vector width not a power of two), so
    that about half of them compile."""
    rng = np.random.default_rng(seed)
    variants = []
    for _ in range(count):
        wrong = rng.random(5) < 0.1
        dims = int(rng.choice([2, 4])) if wrong[0] else 3
        order = [int(d) for d in rng.permutation(dims)]
        tiles = [int(t) for t in rng.integers(0, 17, size=dims) * (rng.random(dims) < 0.6)]
        tiles[0] = -1 if wrong[1] else tiles[0]
        parallel = sorted({int(d) for d in rng.integers(0, 4 if wrong[2] else 2, size=2)})
        unroll = int(rng.choice([0, 65])) if wrong[3] else int(rng.integers(1, 9))
        vector = int(rng.choice([3, 12, 2048])) if wrong[4] else int(rng.choice([0, 1, 4, 8]))
        variants.append(f"order = {order}, tiles = {tiles}, parallel = {parallel}, "
                        f"unroll = {unroll}, vector = {vector}")  # fmt: skip
    return variants


def test_the_unmutated_schedule_compiles(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "valid.mlir"
    path.write_text(_matmul_with(VALID))
    assert main([str(path), "-p", "convert-tensor-to-loop,loop-generate"]) == 0
    assert "loop.vector_width = 8" in capsys.readouterr().out


def test_mutated_schedules_compile_or_give_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "mutated.mlir"
    outcomes = {0: 0, 1: 0}
    for variant in _mutations(VALID, 60, seed=11) + _random_fields(60, seed=12):
        path.write_text(_matmul_with(variant))
        code = main([str(path), "-p", "convert-tensor-to-loop,loop-generate"])
        out, err = capsys.readouterr()
        assert code in outcomes, (variant, err)
        outcomes[code] += 1
        if code == 1:
            assert "Traceback" not in err, (variant, err)
            lines = err.strip().splitlines()
            assert len(lines) == 1 and re.search(r": error: ", lines[0]), (variant, err)
        else:
            assert "scf.for" in out, variant
    # Both outcomes occur: the mutations reach the verifier and the generator.
    assert outcomes[0] > 5 and outcomes[1] > 5, outcomes


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"order": [0, 1, 1]}, "not a permutation"),
        ({"order": [-1, 0]}, "not a permutation"),
        ({"order": [0, 1], "tiles": [1, 2, 3]}, "one size per dim"),
        ({"order": [0], "tiles": [-(2**70)]}, "0 (untiled) or positive"),
        ({"order": [0], "parallel": [5]}, "distinct dims"),
        ({"order": [0], "unroll": MAX_UNROLL + 1}, f"from 1 to {MAX_UNROLL}"),
        ({"order": [0], "vector": 6}, "power of two"),
        ({"order": [0], "vector": 128}, "power of two up to 64"),
        ({"order": [0], "vector": 2**63}, "power of two"),
        ({"order": [0, 1], "pack": [0, 0]}, "distinct operands"),
        ({"order": [0, 1], "pack": [-1]}, "distinct operands"),
    ],
    ids=str,
)
def test_a_bad_schedule_cannot_be_built_from_python(
    fields: dict[str, object], message: str
) -> None:
    with pytest.raises(VerifyException, match=re.escape(message)):
        ScheduleAttr(**fields)


def test_a_schedule_error_is_a_user_error() -> None:
    assert issubclass(ScheduleError, EmberError)


A = np.arange(70, dtype=np.float32).reshape(10, 7) / 7
B = np.arange(91, dtype=np.float32).reshape(7, 13) / 13


def test_tiles_far_past_the_extent_leave_the_dims_untiled() -> None:
    huge = ScheduleAttr([0, 2, 1], tiles=[2**70, 10**9, 14], parallel=[0, 1], unroll=MAX_UNROLL)
    out = compute(MATMUL_F32, [A, B], (10, 13), np.float32, m=huge)
    np.testing.assert_array_equal(out, compute(MATMUL_F32, [A, B], (10, 13), np.float32))


EMPTY_DIMS = """
func.func @main(%x: tensor<0x5xf32>, %y: tensor<3x0xf32>) -> (tensor<0x5xf32>, tensor<3xf32>) {
  %e = tensor.empty() : tensor<0x5xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<0x5xf32>) outs(%e : tensor<0x5xf32>) attrs = {schedule = #loop.schedule<order = [1, 0], tiles = [2, 2], unroll = 3>} {
  ^bb0(%p: f32, %o: f32):
    %n = arith.negf %p : f32
    linalg.yield %n : f32
  } -> tensor<0x5xf32>
  %f_value = arith.constant 1.000000e+00 : f32
  %f_init = tensor.empty() : tensor<3xf32>
  %f = linalg.fill ins(%f_value : f32) outs(%f_init : tensor<3xf32>) -> tensor<3xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%y : tensor<3x0xf32>) outs(%f : tensor<3xf32>) attrs = {schedule = #loop.schedule<order = [0, 1], tiles = [2, 4], unroll = 2>} {
  ^bb0(%v: f32, %acc: f32):
    %sum = arith.addf %acc, %v : f32
    linalg.yield %sum : f32
  } -> tensor<3xf32>
  func.return %r, %s : tensor<0x5xf32>, tensor<3xf32>
}
"""


def test_dims_of_extent_zero_run_no_body() -> None:
    empty, sums = np.zeros((0, 5), np.float32), np.full(3, 7.0, np.float32)
    run(EMPTY_DIMS, [np.zeros((0, 5), np.float32), np.zeros((3, 0), np.float32)], [empty, sums])
    np.testing.assert_array_equal(sums, np.ones(3, np.float32))  # the fill, and no terms


# Packing: what cannot be packed is refused naming the op and the operand ------


@pytest.mark.parametrize(
    "pack, message",
    [
        ("[2]", "schedule packs operand 2, an output: only inputs can be packed"),
        ("[0, 3]", "schedule packs operand 3, but the op has 3 operands (0 to 2)"),
        ("[1, 99999999999999999999]", "schedule packs operand 99999999999999999999, but the op"),
    ],
    ids=str,
)
def test_packing_what_is_not_an_input_is_one_error_line(
    pack: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "pack.mlir"
    path.write_text(_matmul_with(f"order = [0, 2, 1], tiles = [4, 5, 3], pack = {pack}"))
    assert main([str(path), "-p", "convert-tensor-to-loop,loop-generate"]) == 1
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in lines[0], lines
    assert f"error: linalg.matmul %m in @main: {message}" in lines[0]


# A convolution's input is read at oh + kh, ow + kw: not a projected permutation.
def test_packing_an_operand_read_through_a_sum_of_dims_is_refused() -> None:
    module = Parser(make_context(), CONV).parse_module()
    (conv,) = [op for op in module.walk() if op.results and op.results[0].name_hint == "c"]
    with pytest.raises(ScheduleError, match=r"^linalg.conv_2d_nchw_fchw %c in @main: schedule "
                       r"packs operand 0, whose indexing map .*d2 \+ d5.* is not a projected "
                       r"permutation of the dims$"):  # fmt: skip
        set_schedule(conv, ScheduleAttr(list(range(7)), pack=[0]))
    assert SCHEDULE not in conv.attributes
    set_schedule(conv, ScheduleAttr(list(range(7)), pack=[1]))  # the filter's map is one


def test_a_map_naming_a_dim_twice_is_not_a_projected_permutation() -> None:
    diagonal = AffineMap(2, 0, (AffineDimExpr(0), AffineDimExpr(0)))
    assert not is_projected_permutation(diagonal)
    assert is_projected_permutation(AffineMap(3, 0, (AffineDimExpr(2), AffineDimExpr(0))))


def test_packing_an_operand_past_the_operands_from_the_text_is_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same check when the schedule is written on buffers and only
    loop-generate reads it."""
    path = tmp_path / "buffers.mlir"
    path.write_text(
        "func.func @f(%x: memref<4x6xf32>, %y: memref<6x4xf32>) {\n"
        "  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, "
        'affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} '
        "ins(%x : memref<4x6xf32>) outs(%y : memref<6x4xf32>) "
        "attrs = {schedule = #loop.schedule<order = [0, 1], tiles = [4, 4], pack = [1]>} {\n"
        "  ^bb0(%p: f32, %o: f32):\n    linalg.yield %p : f32\n  }\n  func.return\n}\n"
    )
    assert main([str(path), "-p", "loop-generate"]) == 1
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in lines[0], lines
    assert lines[0].endswith(
        "error: linalg.generic into %y in @f: schedule packs operand 1, an output: only inputs "
        "can be packed (the op writes its outputs in place)"
    )


# Micro-kernels: a micro field that does not fit is refused naming the op --------


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"order": [0, 1], "vector": 8, "micro": [0, 1, 4]}, "micro needs [m, n, MR, NR]"),
        ({"order": [0, 1], "vector": 8, "micro": [1, 1, 4, 8]}, "distinct dims"),
        ({"order": [0, 1], "vector": 8, "micro": [0, 2, 4, 8]}, "distinct dims"),
        ({"order": [0, 1], "micro": [0, 1, 4, 8]}, "needs a vector width"),
        ({"order": [0, 1], "vector": 8, "micro": [0, 1, 0, 8]}, "MR must be positive"),
        ({"order": [0, 1], "vector": 8, "micro": [0, 1, 4, 12]}, "multiple of vector (8)"),
        ({"order": [0, 1], "vector": 8, "micro": [0, 1, 4, 4]}, "multiple of vector (8)"),
        ({"order": [0, 1], "vector": 4, "micro": [0, 1, 64, 8]}, "128 accumulators"),
        ({"order": [0, 1], "vector": 8, "micro": [0, 1, 4, 8], "unroll": 2}, "unroll must be 1"),
    ],
    ids=str,
)
def test_a_bad_micro_field_cannot_be_built_from_python(
    fields: dict[str, object], message: str
) -> None:
    with pytest.raises(VerifyException, match=re.escape(message)):
        ScheduleAttr(**fields)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "micro, message",
    [
        ("[0, 2, 4, 8]", "d2 is not a parallel dim of the op"),
        ("[1, 0, 4, 8]", "d0 is not the output's innermost index"),
        ("[0, 1, 4, 8]", None),  # fits: compiles
    ],
    ids=str,
)
def test_a_micro_kernel_that_does_not_fit_the_matmul_is_one_error_line(
    micro: str, message: str | None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "micro.mlir"
    path.write_text(_matmul_with(f"order = [0, 2, 1], vector = 8, micro = {micro}"))
    code = main([str(path), "-p", "convert-tensor-to-loop,loop-generate"])
    out, err = capsys.readouterr()
    if message is None:
        assert code == 0 and "vector.fma" in out
        return
    lines = err.strip().splitlines()
    assert code == 1 and len(lines) == 1 and "Traceback" not in lines[0], lines
    assert (
        f"error: linalg.matmul %m in @main: schedule's micro-kernel does not fit: {message}"
        in lines[0]
    )


def test_a_micro_kernel_on_a_body_that_is_not_a_product_is_refused() -> None:
    """A max pool's body has no product; a stride-3 input along n steps
    neither by 1 nor by 2 (the steps read as vectors)."""
    module = Parser(make_context(), CONV.replace("dense<1> : tensor<2xi64>, dilations",
                                                 "dense<[1, 3]> : tensor<2xi64>, dilations")
                    .replace("1x4x9x9", "1x4x9x3")).parse_module()  # fmt: skip
    (conv,) = [op for op in module.walk() if op.results and op.results[0].name_hint == "c"]
    with pytest.raises(ScheduleError, match=r"^linalg.conv_2d_nchw_fchw %c in @main: schedule's "
                       r"micro-kernel does not fit: operand 0's last index .* does not step by 1 "
                       r"or 2 along d3$"):  # fmt: skip
        set_schedule(conv, ScheduleAttr(list(range(7)), vector=4, micro=[1, 3, 2, 4]))
    pool = Parser(make_context(), MAX_POOL).parse_module()
    (op,) = [o for o in pool.walk() if o.results and o.results[0].name_hint == "p"]
    with pytest.raises(ScheduleError, match=r"the body is not a sum of products"):
        set_schedule(op, ScheduleAttr(list(range(6)), vector=4, micro=[2, 3, 2, 4]))


def test_an_unknown_cpu_for_default_schedules_is_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "cpu.mlir"
    path.write_text(MATMUL_F32)
    assert main([str(path), "-p", "tensor-default-schedule{cpu=pentium}"]) == 1
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in lines[0], lines
    assert "error: tensor-default-schedule: unknown CPU 'pentium' for schedules" in lines[0]
