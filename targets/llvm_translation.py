"""xDSL's `llvm`-dialect -> llvmlite translation, as every Ember target uses it.

`convert_module` is xDSL's (`xdsl.backend.llvm.convert.convert_module`)
with one defect of xDSL 0.75 mended: its `getelementptr` translation
bitcasts the base pointer to an address-space-0 pointer before indexing,
so a GEP on a `ptr addrspace(1)` (a GPU kernel's global memory) or
`ptr addrspace(3)` (shared memory) becomes a `bitcast` between address
spaces, which LLVM rejects ("invalid cast opcode"). The mended translation
indexes the base pointer itself: the GEP's result is in the base's address
space, and for address space 0 nothing changes but the vanished no-op
cast (pointers are opaque). xDSL looks its per-op translators up by name
at each call, so the mended one is put in the place of upstream's, once,
when this module is imported; `UPSTREAM_CONVERT_GETELEMENTPTR` keeps the
original, so a test can show the defect still exists upstream (and that
the mend can go when it does not).
"""

from __future__ import annotations

import llvmlite.ir as ir
from xdsl.backend.llvm import convert_op as xdsl_convert_op
from xdsl.backend.llvm.convert import convert_module as xdsl_convert_module
from xdsl.backend.llvm.convert_type import convert_type
from xdsl.dialects import llvm
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue

UPSTREAM_CONVERT_GETELEMENTPTR = xdsl_convert_op._convert_getelementptr  # pyright: ignore[reportPrivateUsage]


def convert_getelementptr(
    op: llvm.GEPOp, builder: ir.IRBuilder, val_map: dict[SSAValue, ir.Value]
) -> None:
    """`op` as an llvmlite `getelementptr` on its own base pointer (no cast):
    the result keeps the base's address space."""
    ssa_indices = iter(op.ssa_indices)
    indices = [
        val_map[next(ssa_indices)]
        if index == llvm.GEP_USE_SSA_VAL
        else ir.Constant(ir.IntType(32), index)
        for index in op.rawConstantIndices.iter_values()
    ]
    val_map[op.results[0]] = builder.gep(
        val_map[op.ptr],
        indices,
        inbounds=op.inbounds is not None,
        source_etype=convert_type(op.elem_type),
    )


xdsl_convert_op._convert_getelementptr = convert_getelementptr  # pyright: ignore[reportPrivateUsage]


def convert_module(module: ModuleOp, *, triple: str | None, data_layout: str = "") -> ir.Module:
    """The llvmlite module of `module` (`llvm.func`s and `llvm.mlir.global`s
    only), for `triple` (None: the host's) and `data_layout` (empty: none
    set), with GEPs in any address space."""
    return xdsl_convert_module(module, fallback_target_triple=triple, data_layout=data_layout)


__all__ = ["UPSTREAM_CONVERT_GETELEMENTPTR", "convert_getelementptr", "convert_module"]
