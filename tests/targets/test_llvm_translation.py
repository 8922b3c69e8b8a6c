"""`targets/llvm_translation.py`: xDSL's llvm translation with GEPs and
`addressof` mended for pointers outside address space 0.

The upstream tests show the defects are still in xDSL (when one fails,
xDSL has fixed it and the mend can go); the others show the mended
translation gives IR that LLVM verifies.
"""

from __future__ import annotations

import llvmlite.binding as llvm
import pytest
from xdsl.backend.llvm import convert_op
from xdsl.parser import Parser

from ember.context import make_context
from ember.targets import llvm_translation
from ember.targets.llvm_translation import convert_module

# A GEP and a load through a global-memory pointer, a store straight into a
# shared-memory global (element 0) and through a GEP on it.
ADDRESS_SPACES = """
builtin.module {
  llvm.mlir.global internal @tile() {addr_space = 3 : i32} : !llvm.array<4 x f32>
  llvm.func @k(%p: !llvm.ptr<1>, %i: i64) {
    %q = llvm.getelementptr inbounds %p[%i] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
    %v = llvm.load %q : !llvm.ptr<1> -> f32
    %t = llvm.mlir.addressof @tile : !llvm.ptr<3>
    llvm.store %v, %t : f32, !llvm.ptr<3>
    %u = llvm.getelementptr inbounds %t[%i] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, f32
    llvm.store %v, %u : f32, !llvm.ptr<3>
    llvm.return
  }
}
"""


def verified(text: str) -> llvm.ModuleRef:
    module = llvm.parse_assembly(text)
    module.verify()
    return module


def translated() -> str:
    return str(convert_module(Parser(make_context(), ADDRESS_SPACES).parse_module(), triple=None))


def test_geps_and_addressof_keep_their_address_space_and_verify() -> None:
    text = translated()
    assert "bitcast" not in text
    assert "getelementptr inbounds float, ptr addrspace(1) %" in text
    assert "store float %" in text and 'ptr addrspace(3) @"tile"' in text
    verified(text)


def test_upstream_gep_still_casts_to_address_space_0(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        convert_op, "_convert_getelementptr", llvm_translation.UPSTREAM_CONVERT_GETELEMENTPTR
    )
    with pytest.raises(RuntimeError, match="invalid cast opcode"):
        verified(translated())


def test_upstream_addressof_fails_a_store_to_element_0(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        convert_op, "_convert_addressof", llvm_translation.UPSTREAM_CONVERT_ADDRESSOF
    )
    with pytest.raises(TypeError, match="cannot store float"):
        translated()
