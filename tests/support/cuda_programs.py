"""A small program at the `gpu` level for the CUDA runtime's tests: two
kernels through the weights blob and the arena, its launch plan and PTX.

`scale` writes x * w (w from the weights blob) into the arena, `shift`
writes arena + 1 to y; N = 1000 elements, 4 blocks of 256 threads, the
last 24 threads guarded off. `expected(x, w)` is what y must be.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from ember.context import make_context
from ember.lowering.gpu_to_nvvm import convert_gpu_to_nvvm
from ember.targets.calls import TensorSpec
from ember.targets.cuda.launch_plan import LaunchPlan, launch_plan
from ember.targets.cuda.ptx import ptx_of

N = 1000
BYTES = 4 * N
KERNEL = """\
    "gpu.func"() <{{function_type = (memref<{n}xf32>, memref<{b}xi8>, memref<{b}xi8>) -> (), kernel}}> ({{
    ^bb0(%a: memref<{n}xf32>, %p: memref<{b}xi8>, %q: memref<{b}xi8>):
      %c0 = arith.constant 0 : index
      %n = arith.constant {n} : index
      %tx = "gpu.thread_id"() <{{dimension = #gpu<dim x>}}> : () -> index
      %bx = "gpu.block_id"() <{{dimension = #gpu<dim x>}}> : () -> index
      %dx = "gpu.block_dim"() <{{dimension = #gpu<dim x>}}> : () -> index
      %base = arith.muli %bx, %dx : index
      %i = arith.addi %base, %tx : index
      %inside = arith.cmpi ult, %i, %n : index
      scf.if %inside {{
{body}      }}
      "gpu.return"() : () -> ()
    }}) {{sym_name = "{name}"}} : () -> ()
"""
# scale(x, weights, arena): arena[i] = x[i] * weights[i]; shift(y, arena, arena): y[i] = arena[i] + 1
SCALE = """\
        %w = memref.view %p[%c0][] : memref<{b}xi8> to memref<{n}xf32>
        %t = memref.view %q[%c0][] : memref<{b}xi8> to memref<{n}xf32>
        %x = memref.load %a[%i] : memref<{n}xf32>
        %v = memref.load %w[%i] : memref<{n}xf32>
        %r = arith.mulf %x, %v : f32
        memref.store %r, %t[%i] : memref<{n}xf32>
"""
SHIFT = """\
        %t = memref.view %p[%c0][] : memref<{b}xi8> to memref<{n}xf32>
        %v = memref.load %t[%i] : memref<{n}xf32>
        %one = arith.constant 1.0 : f32
        %r = arith.addf %v, %one : f32
        memref.store %r, %a[%i] : memref<{n}xf32>
"""
HOST = """\
  func.func @main(%x: memref<{n}xf32>, %y: memref<{n}xf32>, %w: memref<{b}xi8> {{ember.weights}},
                  %arena: memref<{b}xi8> {{ember.arena}}) {{
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c256 = arith.constant 256 : index
    "gpu.launch_func"(%c4, %c1, %c1, %c256, %c1, %c1, %x, %w, %arena) <{{kernel = @ember_kernels::@scale, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 3, 0>}}> : (index, index, index, index, index, index, memref<{n}xf32>, memref<{b}xi8>, memref<{b}xi8>) -> ()
    "gpu.launch_func"(%c4, %c1, %c1, %c256, %c1, %c1, %y, %arena, %arena) <{{kernel = @ember_kernels::@shift, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 3, 0>}}> : (index, index, index, index, index, index, memref<{n}xf32>, memref<{b}xi8>, memref<{b}xi8>) -> ()
    func.return
  }}
"""


def program() -> ModuleOp:
    sizes = {"n": N, "b": BYTES}
    kernels = "".join(
        KERNEL.format(name=name, body=body.format(**sizes), **sizes)
        for name, body in (("scale", SCALE), ("shift", SHIFT))
    )
    text = (
        "builtin.module attributes {gpu.container_module} {\n"
        '  "gpu.module"() <{sym_name = "ember_kernels"}> ({\n'
        f"{kernels}"
        "  }) : () -> ()\n"
        f"{HOST.format(**sizes)}}}\n"
    )
    module = Parser(make_context(), text).parse_module()
    module.verify()
    return module


SPECS = (
    [TensorSpec("x", (N,), np.dtype(np.float32))],
    [TensorSpec("y", (N,), np.dtype(np.float32))],
)


def model_parts() -> tuple[str, LaunchPlan]:
    """The PTX and the launch plan of `program()`."""
    module = program()
    plan = launch_plan(module, "main", inputs=1)
    convert_gpu_to_nvvm(module)
    return ptx_of(module), plan


def data(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.standard_normal(N).astype(np.float32), rng.standard_normal(N).astype(np.float32)


def expected(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    return x * w + np.float32(1)
