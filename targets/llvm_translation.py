"""xDSL's `llvm`-dialect -> llvmlite translation, as every Ember target uses it.

`convert_module` is xDSL's (`xdsl.backend.llvm.convert.convert_module`)
with two translators of xDSL 0.75 mended for pointers outside address
space 0:

- `getelementptr`: upstream bitcasts the base pointer to an address-space-0
  pointer before indexing, so a GEP on a `ptr addrspace(1)` (a GPU
  kernel's global memory) or `ptr addrspace(3)` (shared memory) becomes a
  `bitcast` between address spaces, which LLVM rejects ("invalid cast
  opcode"). The mended one indexes the base itself (an opaque pointer):
  the result is in the base's address space.
- `llvm.mlir.addressof`: upstream gives the global itself, whose llvmlite
  type is a typed pointer to the global's type (`[256 x float]
  addrspace(3)*`), so a load or store straight through it (element 0 of a
  buffer) fails llvmlite's type check; upstream's GEP hid that by its
  cast. The mended one retypes the global's references as an opaque
  pointer in its address space.

For address space 0 nothing changes but vanished no-op casts (pointers
are opaque). xDSL looks its per-op translators up by name at each call,
so the mended ones are put in the place of upstream's, once, when this
module is imported; `UPSTREAM_CONVERT_GETELEMENTPTR` and
`UPSTREAM_CONVERT_ADDRESSOF` keep the originals, so a test can show the
defect still exists upstream (and that the mend can go when it does not).
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
UPSTREAM_CONVERT_ADDRESSOF = xdsl_convert_op._convert_addressof  # pyright: ignore[reportPrivateUsage]


def convert_getelementptr(
    op: llvm.GEPOp, builder: ir.IRBuilder, val_map: dict[SSAValue, ir.Value]
) -> None:
    """`op` as an llvmlite `getelementptr` on its base pointer, uncast:
    the result is an opaque pointer in the base's address space."""
    base = val_map[op.ptr]
    if not base.type.is_opaque:  # an instruction's typed result (an alloca)
        base = builder.bitcast(base, ir.PointerType(addrspace=base.type.addrspace))
    ssa_indices = iter(op.ssa_indices)
    indices = [
        val_map[next(ssa_indices)]
        if index == llvm.GEP_USE_SSA_VAL
        else ir.Constant(ir.IntType(32), index)
        for index in op.rawConstantIndices.iter_values()
    ]
    val_map[op.results[0]] = builder.gep(
        base, indices, inbounds=op.inbounds is not None, source_etype=convert_type(op.elem_type)
    )


def convert_addressof(
    op: llvm.AddressOfOp, builder: ir.IRBuilder, val_map: dict[SSAValue, ir.Value]
) -> None:
    """The global `op` names, as an opaque pointer in its address space (the
    global's references are retyped: its own type stays `value_type`)."""
    variable = builder.module.get_global(op.global_name.root_reference.data)
    if not variable.type.is_opaque:
        variable.type = ir.PointerType(addrspace=variable.type.addrspace)
    val_map[op.result] = variable


xdsl_convert_op._convert_getelementptr = convert_getelementptr  # pyright: ignore[reportPrivateUsage]
xdsl_convert_op._convert_addressof = convert_addressof  # pyright: ignore[reportPrivateUsage]


def convert_module(module: ModuleOp, *, triple: str | None, data_layout: str = "") -> ir.Module:
    """The llvmlite module of `module` (`llvm.func`s and `llvm.mlir.global`s
    only), for `triple` (None: the host's) and `data_layout` (empty: none
    set), with GEPs in any address space."""
    return xdsl_convert_module(module, fallback_target_triple=triple, data_layout=data_layout)


__all__ = [
    "UPSTREAM_CONVERT_ADDRESSOF",
    "UPSTREAM_CONVERT_GETELEMENTPTR",
    "convert_addressof",
    "convert_getelementptr",
    "convert_module",
]
