"""CUDA back end, library part: lowered kernels to PTX, and PTX to a cubin.

`ptx.ptx_of(module, arch)` turns the output of `convert-gpu-to-nvvm` (a
`gpu.module` of `llvm.func`s) into PTX through llvmlite's NVPTX back end;
`ptxas.assemble(ptx, arch)` runs NVIDIA's `ptxas` on it and reports each
kernel's registers, shared memory and spills. The target object (pipeline,
runtime, deployment) builds on these.
"""

from __future__ import annotations

from ember.targets.cuda.errors import PtxasError, PtxCodegenError
from ember.targets.cuda.ptx import DEFAULT_ARCH, ptx_of, to_llvmlite
from ember.targets.cuda.ptxas import KernelResources, PtxasReport, assemble, find_ptxas

__all__ = [
    "DEFAULT_ARCH",
    "KernelResources",
    "PtxCodegenError",
    "PtxasError",
    "PtxasReport",
    "assemble",
    "find_ptxas",
    "ptx_of",
    "to_llvmlite",
]
