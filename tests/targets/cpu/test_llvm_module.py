"""`to_llvmlite`'s additions to xDSL's translation: a loop's schedule vector
width as `!llvm.loop` vectoriser metadata (a loop ID of its own per loop),
a loop around loops kept rolled (`llvm.loop.unroll.disable`), and kernel
arguments' `llvm.noalias` reaching LLVM. The code still runs right,
whatever width is asked for, remainders included."""

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


UNROLL_DISABLE = '!{ !"llvm.loop.unroll.disable" }'


def loop_properties(text: str) -> list[set[str]]:
    """The properties of each loop ID on a back edge, in the order of the
    back edges; each loop ID must be a node of its own (first operand itself)."""
    ids = re.findall(r"br label %\S+, !llvm.loop (!\d+)", text)
    assert len(set(ids)) == len(ids), text  # one loop ID per loop
    loops = []
    for loop_id in ids:
        node = re.search(rf"^{loop_id} = !{{ {loop_id}((?:, !\d+)+) }}$", text, re.M)
        assert node is not None, text
        names = node.group(1).removeprefix(", ").split(", ")
        loops.append({re.search(rf"^{n} = (.*)$", text, re.M).group(1) for n in names})  # type: ignore[union-attr]
    return loops


@pytest.mark.parametrize("width", [1, 4, 8, 16, 64])
def test_vector_width_becomes_loop_metadata(width: int) -> None:
    vectorize = {'!{ !"llvm.loop.vectorize.enable", i1 1 }',
                 f'!{{ !"llvm.loop.vectorize.width", i32 {width} }}'}  # fmt: skip
    # The inner loop of the nest, its outer loop (kept rolled), the single loop.
    loops = loop_properties(str(to_llvmlite(lower(with_width(width)))))
    assert loops == [vectorize, {UNROLL_DISABLE}, vectorize]


def test_no_width_no_vectorizer_metadata() -> None:
    # Only the loop around a loop has metadata: it is kept rolled.
    assert loop_properties(str(to_llvmlite(lower(with_width(None))))) == [{UNROLL_DISABLE}]


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
