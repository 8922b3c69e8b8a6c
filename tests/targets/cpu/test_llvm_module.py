"""`to_llvmlite`'s additions to xDSL's translation: a loop's schedule vector
width as `!llvm.loop` vectoriser metadata (a loop ID of its own per loop),
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


@pytest.mark.parametrize("width", [1, 4, 8, 16, 64])
def test_vector_width_becomes_loop_metadata(width: int) -> None:
    text = str(to_llvmlite(lower(with_width(width))))
    ids = re.findall(r"br label %\S+, !llvm.loop (!\d+)", text)
    assert len(ids) == 2 and len(set(ids)) == 2, text  # one loop ID per loop
    for loop_id in ids:
        node = re.search(rf"^{loop_id} = !{{ {loop_id}, (!\d+), (!\d+) }}$", text, re.M)
        assert node is not None, text
        entries = {re.search(rf"^{n} = (.*)$", text, re.M).group(1) for n in node.groups()}  # type: ignore[union-attr]
        assert entries == {'!{ !"llvm.loop.vectorize.enable", i1 1 }',
                           f'!{{ !"llvm.loop.vectorize.width", i32 {width} }}'}  # fmt: skip


def test_no_width_no_metadata() -> None:
    assert "llvm.loop" not in str(to_llvmlite(lower(with_width(None))))


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
