"""The errors the CUDA back end reports as one-line diagnostics."""

from __future__ import annotations

from ember.errors import EmberError


class PtxCodegenError(EmberError):
    """The lowered kernels cannot become PTX: not lowered yet, an unknown
    compute capability, or LLVM IR that does not verify."""


class PtxasError(EmberError):
    """`ptxas` is missing, or rejected the PTX (the message names the kernel)."""


class CudaUnavailable(EmberError):
    """The CUDA runtime cannot run here: cuda-bindings is not installed, or
    there is no CUDA driver or GPU (`cuInit` fails). One line that says what
    to do."""


class CudaError(EmberError):
    """A CUDA driver call failed; the message names the call and the kernel
    or buffer it was for."""


class LaunchPlanMismatch(EmberError):
    """A launch plan that does not fit its PTX or its model: a kernel the PTX
    lacks, a different number of parameters, an unknown argument role, or a
    weights blob of another size."""
