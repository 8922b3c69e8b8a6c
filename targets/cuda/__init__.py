"""The CUDA target: models as `gpu`-level kernels, PTX and a launch plan.

`ptx.ptx_of(module, arch)` turns the output of `convert-gpu-to-nvvm` (a
`gpu.module` of `llvm.func`s) into PTX through llvmlite's NVPTX back end;
`ptxas.assemble(ptx, arch)` runs NVIDIA's `ptxas` on it and reports each
kernel's registers, shared memory and spills. `emulator` runs a `gpu`-level
module (kernels and the host functions that launch them) on the CPU, every
block and every thread, barriers respected, so the GPU path is tested where
no GPU is. `runtime.CudaModel` runs a compiled model (PTX, launch plan,
weights) on a GPU through CUDA's driver API (the optional `cuda` extra,
cuda-bindings); `runtime.cuda_available()` says whether it can here.
`target.py` is the target itself.
"""

from __future__ import annotations

from ember.targets.cuda.errors import (
    CudaError,
    CudaUnavailable,
    LaunchPlanMismatch,
    PtxasError,
    PtxCodegenError,
)
from ember.targets.cuda.ptx import DEFAULT_ARCH, ptx_of, to_llvmlite
from ember.targets.cuda.ptxas import KernelResources, PtxasReport, assemble, find_ptxas
from ember.targets.cuda.runtime import CudaModel, cuda_available

__all__ = [
    "DEFAULT_ARCH",
    "CudaError",
    "CudaModel",
    "CudaUnavailable",
    "LaunchPlanMismatch",
    "KernelResources",
    "PtxCodegenError",
    "PtxasError",
    "PtxasReport",
    "assemble",
    "cuda_available",
    "find_ptxas",
    "ptx_of",
    "to_llvmlite",
]
