"""Adversarial tensor-level IR (xDSL's `linalg` and `tensor`, Ember's
`ember_linalg`) through `ember-opt` and `convert-tensor-to-loop`: whatever the
file holds, the answer is one line on stderr and exit status 1, never a
traceback, and never loop code that reads or writes outside a buffer."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.robustness.test_ember_opt import assert_one_line_error, run_opt

_GENERIC = """
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {{
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.generic {{indexing_maps = [{maps}], iterator_types = ["parallel"]}} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {{
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }} -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}}
"""

# (name, file contents, passes, what the error says)
BAD_TENSOR_IR: list[tuple[str, str, str, str]] = [
    ("generic-one-map-for-two-operands", _GENERIC.format(maps="affine_map<(d0) -> (d0)>"), "",
     "expected the number of indexing_map (1) to be equal to the number of input/output "
     "operands (2)"),
    ("generic-reads-past-the-end",
     _GENERIC.format(maps="affine_map<(d0) -> (d0 + 1)>, affine_map<(d0) -> (d0)>"), "",
     "inferred input/output operand #0 has shape's dimension #0 to be greater than or equal "
     "to 5, but found 4"),
    ("gather-symbol-in-an-expression", """
func.func @f(%t: tensor<4x3xf32>, %i: tensor<2xi64>) -> tensor<2x3xf32> {
  %g = ember_linalg.gather %t[%i] {index_maps = [affine_map<(d0, d1) -> (d0)>], data_map = affine_map<(d0, d1)[s0] -> (s0 + 1, d1)>} : tensor<4x3xf32>, tensor<2xi64> -> tensor<2x3xf32>
  func.return %g : tensor<2x3xf32>
}
""", "", "ember_linalg.gather: each symbol of data_map (d0, d1)[s0] -> ((s0 + 1), d1) must be one whole result, once"),
    ("slice-out-of-bounds", """
func.func @f(%x: tensor<4x8xf32>) -> tensor<2x3xf32> {
  %s = tensor.extract_slice %x[1, 7] [2, 3] [1, 1] : tensor<4x8xf32> to tensor<2x3xf32>
  func.return %s : tensor<2x3xf32>
}
""", "convert-tensor-to-loop", "tensor.extract_slice [1, 7] [2, 3] [1, 1] leaves (4, 8)"),
    ("negative-stride-slice", """
func.func @f(%x: tensor<4x8xf32>) -> tensor<2x3xf32> {
  %s = tensor.extract_slice %x[3, 0] [2, 3] [-1, 1] : tensor<4x8xf32> to tensor<2x3xf32>
  func.return %s : tensor<2x3xf32>
}
""", "convert-tensor-to-loop", "tensor.extract_slice [3, 0] [2, 3] [-1, 1] leaves (4, 8)"),
    ("pad-yields-an-argument", """
func.func @f(%x: tensor<2xf32>) -> tensor<4xf32> {
  %p = tensor.pad %x low[1] high[1] {
  ^bb0(%i: index):
    %v = arith.index_cast %i : index to i32
    %f = arith.sitofp %v : i32 to f32
    tensor.yield %f : f32
  } : tensor<2xf32> to tensor<4xf32>
  func.return %p : tensor<4xf32>
}
""", "convert-tensor-to-loop", "the value tensor.pad yields must be a scalar arith.constant"),
    ("fill-of-another-type", """
func.func @f() -> tensor<4xf32> {
  %c = arith.constant 1 : i32
  %e = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%c : i32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  func.return %f : tensor<4xf32>
}
""", "convert-tensor-to-loop", "linalg.fill of i32 into f32"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "text", "passes", "fragment"), BAD_TENSOR_IR,
                         ids=[case[0] for case in BAD_TENSOR_IR])  # fmt: skip
def test_bad_tensor_level_ir_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str, text: str, passes: str,
    fragment: str,
) -> None:  # fmt: skip
    path = tmp_path / f"{name}.mlir"
    path.write_text(text)
    args = [str(path), *(["-p", passes] if passes else [])]
    code, out, err = run_opt(capsys, *args)
    assert_one_line_error(code, err, r".*\.mlir", fragment)
    assert out == ""
