"""`to_llvmlite`'s additions to xDSL's translation: a loop's schedule vector
width as `!llvm.loop` vectoriser metadata (a loop ID of its own per loop),
`loop.no_unroll` as `llvm.loop.unroll.disable`,
and kernel arguments' `llvm.noalias` reaching LLVM. The code still runs
right, whatever width is asked for, remainders included."""

from __future__ import annotations

import re

import numpy as np
import pytest

from ember.targets.cpu import to_llvmlite
from tests.lowering.test_loop_to_llvm import lower, run

COPY_SCALED = """
func.func @main(%a: memref<3x37xf32>, %b: memref<3x37xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c37 = arith.constant 37 : index
  %two = arith.constant 2.0 : f32
  scf.for %i = %c0 to %c3 step %c1 {
    scf.for %j = %c0 to %c37 step %c1 {
      %x = memref.load %a[%i, %j] : memref<3x37xf32>
      %y = arith.mulf %x, %two : f32
      memref.store %y, %b[%i, %j] : memref<3x37xf32>
    } WIDTH
  }
  scf.for %k = %c0 to %c37 step %c1 {
    %x = memref.load %b[%c0, %k] : memref<3x37xf32>
    memref.store %x, %b[%c0, %k] : memref<3x37xf32>
  } WIDTH
  func.return
}
"""


def with_width(width: int | None) -> str:
    mark = "" if width is None else f"{{loop.vector_width = {width} : i64}}"
    return COPY_SCALED.replace("WIDTH", mark)


def _loop_ids(text: str) -> list[tuple[str, set[str]]]:
    """Each loop ID on a back edge, in order, with its properties."""
    found = []
    for loop_id in re.findall(r"br label %\S+, !llvm.loop (!\d+)", text):
        node = re.search(rf"^{loop_id} = !{{ {loop_id}((?:, !\d+)*) }}$", text, re.M)
        assert node is not None, text
        names = re.findall(r"!\d+", node.group(1))
        found.append((loop_id, {re.search(rf"^{n} = (.*)$", text, re.M).group(1) for n in names}))  # type: ignore[union-attr]
    return found


def _vectorize(width: int) -> set[str]:
    """The properties asking the loop vectoriser for `width` lanes."""
    return {'!{ !"llvm.loop.vectorize.enable", i1 1 }',
            f'!{{ !"llvm.loop.vectorize.width", i32 {width} }}'}  # fmt: skip


def _loop_properties(text: str) -> list[set[str]]:
    return [properties for _, properties in _loop_ids(text)]


@pytest.mark.parametrize("width", [1, 4, 8, 16, 64])
def test_vector_width_becomes_loop_metadata(width: int) -> None:
    text = str(to_llvmlite(lower(with_width(width))))
    ids = _loop_ids(text)
    assert len(ids) == 2 and len({loop_id for loop_id, _ in ids}) == 2, text  # one ID per loop
    for _, properties in ids:
        assert properties == _vectorize(width)


def test_no_width_no_metadata() -> None:
    assert "llvm.loop" not in str(to_llvmlite(lower(with_width(None))))


UNROLL_DISABLE = '!{ !"llvm.loop.unroll.disable" }'


@pytest.mark.parametrize("width", [None, 8])
def test_no_unroll_becomes_unroll_disable(width: int | None) -> None:
    marks = ["loop.no_unroll"] + ([] if width is None else [f"loop.vector_width = {width} : i64"])
    text = str(to_llvmlite(lower(COPY_SCALED.replace("WIDTH", f"{{{', '.join(marks)}}}"))))
    vectorize = set() if width is None else _vectorize(width)
    assert _loop_properties(text) == [{UNROLL_DISABLE, *vectorize}] * 2, text


def test_width_alone_leaves_unrolling_to_llvm() -> None:
    assert all(
        UNROLL_DISABLE not in p for p in _loop_properties(str(to_llvmlite(lower(with_width(8)))))
    )


def test_code_not_unrolled_runs_right() -> None:
    a = np.arange(3 * 37, dtype=np.float32).reshape(3, 37) - 50
    b = np.zeros_like(a)
    run(COPY_SCALED.replace("WIDTH", "{loop.no_unroll}"), a, b)
    np.testing.assert_array_equal(b, a * 2)


@pytest.mark.parametrize("width", [None, 4, 16, 64])
def test_code_with_vector_width_runs_right(width: int | None) -> None:
    a = np.arange(3 * 37, dtype=np.float32).reshape(3, 37) - 50
    b = np.zeros_like(a)
    run(with_width(width), a, b)
    np.testing.assert_array_equal(b, a * 2)


def test_noalias_argument_attribute_reaches_llvm() -> None:
    text = with_width(None).replace(
        "%a: memref<3x37xf32>, %b: memref<3x37xf32>",
        "%a: memref<3x37xf32> {llvm.noalias}, %b: memref<3x37xf32>",
    )
    signature = re.search(r"define void @\"?main\"?\((.*)\)", str(to_llvmlite(lower(text))))
    assert signature is not None
    first, second = signature.group(1).split(", ")
    assert "noalias" in first and "noalias" not in second
