"""The errors the CUDA back end reports as one-line diagnostics."""

from __future__ import annotations

from ember.errors import EmberError


class PtxCodegenError(EmberError):
    """The lowered kernels cannot become PTX: not lowered yet, an unknown
    compute capability, or LLVM IR that does not verify."""


class PtxasError(EmberError):
    """`ptxas` is missing, or rejected the PTX (the message names the kernel)."""
