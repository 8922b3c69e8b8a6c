"""Adversarial `loop.kernel` IR: what a kernel yields and where its values go.

Bad kernels are one line on stderr and exit status 1 (never a traceback);
kernels whose results alias each other, their inputs or the function's
outputs, and empty or filled tensors shared across a kernel's boundary,
compile to code that computes what the tensor-level interpreter computes."""

from __future__ import annotations

import ctypes
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.ir import Block, Operation
from xdsl.parser import Parser

from ember.context import make_context
from ember.dialects.loop import KernelOp
from ember.lowering.loop_to_llvm import ConvertLoopToLLVMPass
from ember.lowering.tensor_to_loop import ConvertTensorToLoopPass
from ember.passes.loop.fuse import FuseLoopsPass
from ember.passes.loop.generate import LoopGeneratePass
from ember.passes.loop.outline_kernels import OutlineKernelsPass
from ember.passes.loop.pack_weights import PackWeightsPass, weights_blob
from ember.passes.loop.plan_memory import PlanMemoryPass
from ember.reference.tensor_level import run_tensor_module
from ember.targets.cpu import JitModule, to_llvmlite
from tests.robustness.test_ember_opt import assert_one_line_error, run_opt

# (name, file contents, passes, what the error says)
BAD_KERNELS: list[tuple[str, str, str, str]] = [
    ("yield-of-another-type", """
func.func @f(%x: tensor<4xf32>) -> tensor<2x2xf32> {
  %r = loop.kernel -> (tensor<2x2xf32>) {
    loop.yield %x : tensor<4xf32>
  }
  func.return %r : tensor<2x2xf32>
}
""", "", "loop.kernel: loop.yield yields (tensor<4xf32>) but the kernel's results are "
         "(tensor<2x2xf32>)"),
    ("results-never-yielded", """
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = loop.kernel -> (tensor<4xf32>) {
    %e = tensor.empty() : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}
""", "", "loop.yield yields () but the kernel's results are (tensor<4xf32>)"),
    ("two-blocks", """
func.func @f() {
  loop.kernel {
    cf.br ^next
  ^next:
    loop.yield
  }
  func.return
}
""", "", "loop.kernel"),
    ("yield-outside-a-kernel", """
func.func @f() {
  loop.yield
}
""", "", "'loop.yield' expects parent op 'loop.kernel'"),
    ("kernel-not-outlined", """
func.func @f(%a: memref<4xf32>, %out0: memref<4xf32>) {
  %k0 = arith.constant 0 : index
  %k1 = arith.constant 1 : index
  %k4 = arith.constant 4 : index
  loop.kernel {
    scf.for %i = %k0 to %k4 step %k1 {
      %v = memref.load %a[%i] : memref<4xf32>
      memref.store %v, %out0[%i] : memref<4xf32>
    }
  }
  func.return
}
""", "convert-loop-to-llvm", "unsupported ops: loop.kernel (1)"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "text", "passes", "fragment"), BAD_KERNELS,
                         ids=[case[0] for case in BAD_KERNELS])  # fmt: skip
def test_bad_kernel_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str, text: str, passes: str,
    fragment: str,
) -> None:  # fmt: skip
    path = tmp_path / f"{name}.mlir"
    path.write_text(text)
    code, out, err = run_opt(capsys, str(path), *(["-p", passes] if passes else []))
    assert_one_line_error(code, err, r".*\.mlir", fragment)
    assert out == ""


_NEG = """linalg.generic {{indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
      iterator_types = ["parallel"]}} ins({x} : tensor<4xf32>) outs({out} : tensor<4xf32>) {{
    ^bb0(%a: f32, %o: f32):
      %negated = arith.negf %a : f32
      linalg.yield %negated : f32
    }} -> tensor<4xf32>"""
_ADD = """linalg.generic {{indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>,
      affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}}
      ins({x}, {y} : tensor<4xf32>, tensor<4xf32>) outs({out} : tensor<4xf32>) {{
    ^bb0(%a: f32, %b: f32, %o: f32):
      %sum = arith.addf %a, %b : f32
      linalg.yield %sum : f32
    }} -> tensor<4xf32>"""


def _neg(x: str, out: str) -> str:
    return _NEG.format(x=x, out=out)


def _add(x: str, y: str, out: str) -> str:
    return _ADD.format(x=x, y=y, out=out)


# (name, tensor-level function of one tensor<4xf32> argument)
ALIASING_KERNELS: list[tuple[str, str]] = [
    # The kernel yields its input, and one computed value twice: three
    # results, two of them one value, all returned.
    ("yields-input-and-one-value-twice", f"""
func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {{
  %r:3 = loop.kernel "elementwise" -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {{
    %e = tensor.empty() : tensor<4xf32>
    %n = {_neg("%x", "%e")}
    loop.yield %x, %n, %n : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  }}
  func.return %r#0, %r#1, %r#2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}}
"""),
    # A result that is returned and read after the kernel, by a second
    # kernel that then writes its own result in place of the first's input.
    ("result-returned-and-read-after", f"""
func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {{
  %r = loop.kernel "elementwise" -> (tensor<4xf32>) {{
    %e = tensor.empty() : tensor<4xf32>
    %n = {_neg("%x", "%e")}
    %f = tensor.empty() : tensor<4xf32>
    %m = {_add("%n", "%x", "%f")}
    loop.yield %m : tensor<4xf32>
  }}
  %s = loop.kernel "elementwise" -> (tensor<4xf32>) {{
    %e = tensor.empty() : tensor<4xf32>
    %t = {_add("%r", "%r", "%e")}
    loop.yield %t : tensor<4xf32>
  }}
  func.return %r, %s : tensor<4xf32>, tensor<4xf32>
}}
"""),
    # A filled tensor defined before the kernel, read inside it and again
    # after it: the kernel's scratch copy must not stand in for it after.
    ("fill-shared-across-the-boundary", f"""
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {{
  %c = arith.constant 1.500000e+00 : f32
  %e = tensor.empty() : tensor<4xf32>
  %ones = linalg.fill ins(%c : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %r = loop.kernel -> (tensor<4xf32>) {{
    %into = tensor.empty() : tensor<4xf32>
    %t = {_add("%x", "%ones", "%into")}
    loop.yield %t : tensor<4xf32>
  }}
  %o2 = tensor.empty() : tensor<4xf32>
  %u = {_add("%r", "%ones", "%o2")}
  func.return %u : tensor<4xf32>
}}
"""),
    # Kernels that write intermediates in place and a result that is a view
    # (reshape) of a kernel's scratch buffer.
    ("chain-of-kernels-through-a-reshape", f"""
func.func @main(%x: tensor<4xf32>) -> tensor<2x2xf32> {{
  %shape = arith.constant dense<[2, 2]> : tensor<2xi64>
  %r = loop.kernel -> (tensor<2x2xf32>) {{
    %e = tensor.empty() : tensor<4xf32>
    %n = {_neg("%x", "%e")}
    %m = {_neg("%n", "%n")}
    %v = tensor.reshape %m(%shape) : (tensor<4xf32>, tensor<2xi64>) -> tensor<2x2xf32>
    loop.yield %v : tensor<2x2xf32>
  }}
  %flat = arith.constant dense<4> : tensor<1xi64>
  %f = tensor.reshape %r(%flat) : (tensor<2x2xf32>, tensor<1xi64>) -> tensor<4xf32>
  %s = loop.kernel -> (tensor<4xf32>) {{
    %t = {_add("%f", "%x", "%f")}
    loop.yield %t : tensor<4xf32>
  }}
  %back = tensor.reshape %s(%shape) : (tensor<4xf32>, tensor<2xi64>) -> tensor<2x2xf32>
  func.return %back : tensor<2x2xf32>
}}
"""),
]  # fmt: skip


def _enclosing_kernel(op: Operation) -> KernelOp | None:
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, KernelOp):
        parent = parent.parent_op()
    return parent


def assert_kernels_keep_their_values(module: ModuleOp) -> None:
    """No value defined in a kernel is used outside it (xDSL's verifier does
    not check dominance)."""
    for op in module.walk():
        for operand in op.operands:
            owner = operand.owner
            definer = owner.parent_op() if isinstance(owner, Block) else owner
            kernel = _enclosing_kernel(definer) if definer is not None else None
            assert kernel is None or kernel.is_ancestor(op), f"{op.name} uses a kernel's value"


def _compile_and_run(module: ModuleOp, x: np.ndarray, outputs: list[np.ndarray]) -> None:
    """The CPU pipeline's loop stage on tensor-level `module`, lowered to LLVM
    and JIT-run on `x` into `outputs`."""
    context = make_context()
    for loop_pass in (ConvertTensorToLoopPass(), LoopGeneratePass(), FuseLoopsPass(),
                      PackWeightsPass(), PlanMemoryPass(), OutlineKernelsPass()):  # fmt: skip
        loop_pass.apply(context, module)
        assert_kernels_keep_their_values(module)
    module.verify()
    assert not any(isinstance(op, KernelOp) for op in module.walk())
    main = next(op for op in module.ops if isinstance(op, FuncOp) and op.sym_name.data == "main")
    arena = np.zeros(max(main.attributes["loop.arena_bytes"].value.data, 1), np.uint8)  # type: ignore[attr-defined]
    blob = weights_blob(module)
    ConvertLoopToLLVMPass().apply(context, module)
    buffers = [x, *outputs]
    jit = JitModule(str(to_llvmlite(module)))
    fn = jit.function("main", None, [ctypes.c_void_p] * (len(buffers) + 2))
    fn(*(b.ctypes.data for b in buffers), blob.ctypes.data, arena.ctypes.data)


@pytest.mark.parametrize(("name", "text"), ALIASING_KERNELS,
                         ids=[case[0] for case in ALIASING_KERNELS])  # fmt: skip
def test_aliasing_kernels_compute_what_the_interpreter_does(name: str, text: str) -> None:
    x = np.array([1.0, -2.0, 3.5, 0.25], np.float32)
    module = Parser(make_context(), text).parse_module()
    module.verify()
    expected = run_tensor_module(module, [x])
    outputs = [np.full(e.shape, np.nan, e.dtype) for e in expected]
    _compile_and_run(module, x.copy(), outputs)
    for got, want in zip(outputs, expected, strict=True):
        np.testing.assert_array_equal(got, want)
