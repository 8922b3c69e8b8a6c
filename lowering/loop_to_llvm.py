"""`convert-loop-to-llvm`: loop-level functions to xDSL's `llvm` dialect.

ABI of the generated code (the runtime and the C header rely on it)
--------------------------------------------------------------------
Each `func.func @name(%a: memref<...>, ...)` (no results) becomes

    void name(void *a, ..., const void *weights, void *arena);

with the C calling convention and external linkage: one pointer per memref
argument, in order, to its data (static shape, row-major, contiguous), then
the weights blob (each `loop.weight` at its byte `offset`), then the arena
(each `loop.alloc` at its byte `offset`). Elements are laid out as NumPy lays
them out: `i1` as one byte holding 0 or 1, `index` as int64; every buffer
must be aligned to its element size. Nothing is returned; the function
writes its output buffers and may use the whole arena as scratch.

A function marked `ember.packed_buffers` (a unit attribute; the model's
entry function carries it) takes its memref arguments as one array of
pointers instead, so any number of inputs and outputs fits through every
foreign-function interface (ctypes stops at 1,024 arguments):

    void name(void *const buffers[], const void *weights, void *arena);

where `buffers[i]` is the pointer the unpacked form passes as argument `i`
(the model's inputs, then its outputs); the function only reads the array,
which must not overlap any buffer. Loop-level code cannot call such a
function. Kernels (`ember.kernel`) keep the unpacked form, `internal`.

Lowering: `index` is i64; `loop.for` becomes a CFG (header block with the
induction variable as block argument, `icmp slt`, body, increment, back
edge, exit); its `parallel` flag is not used yet (the loop runs serially).
Scalar ops map to LLVM instructions, to `llvm.*` intrinsics, or to calls to
libm (declared once per module). No fast-math flags: exact IEEE semantics.
Integer division never traps (docs/semantics.md): x / 0 and x % 0 are 0,
INT_MIN / -1 is INT_MIN and INT_MIN % -1 is 0, as NumPy computes them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from llvmlite import ir as llvmir
from xdsl.backend.llvm.convert import convert_module
from xdsl.context import Context
from xdsl.dialects import arith, func, llvm, math, memref
from xdsl.dialects.builtin import (
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    f16,
    f32,
    f64,
    i1,
    i8,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from ember.dialects import loop
from ember.passes.loop.outline_kernels import KERNEL_ATTR

PASS = "convert-loop-to-llvm"
PACKED_BUFFERS_ATTR = "ember.packed_buffers"
"""Marks a function whose memref arguments arrive as one array of pointers."""
_PTR = llvm.LLVMPointerType()
_EXTERNAL = llvm.LinkageAttr("external")
_FLOATS = (Float16Type, Float32Type, Float64Type)

# 1:1 tables --------------------------------------------------------------

# Ops that become one llvm op built from the lowered operands alone.
_DIRECT: dict[type[Operation], type[Operation]] = {
    arith.NegfOp: llvm.FNegOp, arith.SelectOp: llvm.SelectOp, arith.AddfOp: llvm.FAddOp, arith.SubfOp: llvm.FSubOp, arith.MulfOp: llvm.FMulOp,
    arith.DivfOp: llvm.FDivOp, arith.AddiOp: llvm.AddOp, arith.SubiOp: llvm.SubOp,
    arith.MuliOp: llvm.MulOp, arith.AndIOp: llvm.AndOp,
    arith.OrIOp: llvm.OrOp, arith.XOrIOp: llvm.XOrOp, arith.ShLIOp: llvm.ShlOp,
    arith.ShRSIOp: llvm.AShrOp, arith.ShRUIOp: llvm.LShrOp,
}  # fmt: skip

_CASTS: dict[type[Operation], type[Operation]] = {
    arith.ExtFOp: llvm.FPExtOp, arith.TruncFOp: llvm.FPTruncOp, arith.SIToFPOp: llvm.SIToFPOp,
    arith.ExtSIOp: llvm.SExtOp, arith.ExtUIOp: llvm.ZExtOp, arith.TruncIOp: llvm.TruncOp,
    arith.BitcastOp: llvm.BitcastOp,
}  # fmt: skip

# `llvm.<name>.<type>` intrinsics whose operands and result are the op's own.
_INTRINSICS: dict[type[Operation], str] = {
    arith.MaximumfOp: "maximum", arith.MinimumfOp: "minimum",  # NaN-propagating
    arith.MaxnumfOp: "maxnum", arith.MinnumfOp: "minnum",
    math.ExpOp: "exp", math.Exp2Op: "exp2", math.LogOp: "log", math.Log2Op: "log2",
    math.Log10Op: "log10", math.SqrtOp: "sqrt", math.AbsFOp: "fabs", math.FloorOp: "floor",
    math.CeilOp: "ceil", math.RoundOp: "round", math.RoundEvenOp: "roundeven",
    math.TruncOp: "trunc", math.SinOp: "sin", math.CosOp: "cos", math.PowFOp: "pow",
    math.CopySignOp: "copysign", math.FmaOp: "fma", math.CtPopOp: "ctpop",
    arith.MaxSIOp: "smax", arith.MinSIOp: "smin", arith.MaxUIOp: "umax", arith.MinUIOp: "umin",
}  # fmt: skip

# Functions LLVM has no (long-standing) intrinsic for: libm, `f` suffix for f32.
_LIBM: dict[type[Operation], str] = {
    math.TanOp: "tan", math.AsinOp: "asin", math.AcosOp: "acos", math.AtanOp: "atan",
    math.Atan2Op: "atan2", math.SinhOp: "sinh", math.CoshOp: "cosh", math.TanhOp: "tanh",
    math.AsinhOp: "asinh", math.AcoshOp: "acosh", math.AtanhOp: "atanh", math.ErfOp: "erf",
    math.ExpM1Op: "expm1", math.Log1pOp: "log1p", math.CbrtOp: "cbrt",
}  # fmt: skip

# Integer intrinsics that take an extra `i1 false` operand.
_INT_INTRINSICS = {math.AbsIOp: "abs", math.CountLeadingZerosOp: "ctlz",
                   math.CountTrailingZerosOp: "cttz"}  # fmt: skip
_CMPI = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")  # arith's order
_CMPF = ("false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord",
         "ueq", "ugt", "uge", "ult", "ule", "une", "uno", "true")  # fmt: skip


# Types -------------------------------------------------------------------


def _scalar_type(t: Attribute) -> Attribute:
    """The LLVM type of a scalar of type `t` (`_check_supported` vetted `t`)."""
    return i64 if isinstance(t, IndexType) else t


def _lowerable(t: Attribute) -> bool:
    """Whether this pass handles values of type `t`."""
    if isinstance(t, MemRefType):
        return _lowerable(t.element_type)
    return isinstance(t, (IndexType, *_FLOATS)) or isinstance(t, IntegerType) and t.width.data <= 64


def _memory_type(t: Attribute) -> Attribute:
    """The LLVM type of a buffer element: `i1` is a byte, as in NumPy."""
    return i8 if t == i1 else _scalar_type(t)


def _width(t: Attribute) -> int:
    assert isinstance(t, IntegerType)
    return t.width.data


def _suffix(t: Attribute) -> str:
    """The type part of an overloaded intrinsic's name: `f32`, `i64`, ..."""
    return f"i{_width(t)}" if isinstance(t, IntegerType) else f"f{t.bitwidth}"  # type: ignore[attr-defined]


# The lowering of one function --------------------------------------------

Handler = Callable[["_FunctionLowering", Operation], SSAValue | None]
_HANDLERS: dict[type[Operation], Handler] = {}


def _lowers(*op_types: type[Operation]) -> Callable[[Handler], Handler]:
    def register(handler: Handler) -> Handler:
        _HANDLERS.update(dict.fromkeys(op_types, handler))
        return handler

    return register


class _ValueMap(dict[SSAValue, SSAValue]):
    """The lowered value of each loop-level value. A packed function's memref
    arguments are not stored: each use loads its pointer from the buffers
    array where it is needed (in the current block), because loading them all
    up front keeps thousands of pointers live across the whole function,
    which makes LLVM's code generation crawl."""

    def __init__(self, lowering: _FunctionLowering) -> None:
        super().__init__()
        self.lowering = lowering
        self.slots: dict[SSAValue, tuple[SSAValue, int]] = {}

    def __missing__(self, value: SSAValue) -> SSAValue:
        buffers, index = self.slots[value]
        lw = self.lowering
        slot = lw.emit(llvm.GEPOp.from_mixed_indices(buffers, [index], _PTR, inbounds=True))
        pointer = lw.emit(llvm.LoadOp(slot, _PTR))
        pointer.name_hint = value.name_hint
        return pointer


class _FunctionLowering:
    """Builds one `llvm.func`; `block` is where the next op goes."""

    def __init__(self, fn: func.FuncOp, externals: dict[str, llvm.LLVMFunctionType]):
        self.externals = externals
        inputs = fn.function_type.inputs.data
        if fn.function_type.outputs.data or not all(isinstance(t, MemRefType) for t in inputs):
            raise DiagnosticException(
                f"{PASS}: @{fn.sym_name.data} must take only memrefs and return nothing"
            )
        packed = PACKED_BUFFERS_ATTR in fn.attributes
        pointer_count = 1 if packed else len(inputs)
        self.entry = self.block = Block(arg_types=[_PTR] * (pointer_count + 2))
        self.region = Region(self.block)
        self.constants: dict[tuple[Attribute, int | str], llvm.ConstantOp] = {}
        *params, self.weights, self.arena = self.block.args
        self.weights.name_hint, self.arena.name_hint = "weights", "arena"
        self.values = _ValueMap(self)
        if packed:
            params[0].name_hint = "buffers"
            self.values.slots = {old: (params[0], i) for i, old in enumerate(fn.args)}
        else:
            for old, new in zip(fn.args, params):
                self.values[old] = new
                new.name_hint = old.name_hint
        self.lower_block(fn.body.block)
        self.entry.insert_ops_before(list(self.constants.values()), self.entry.ops.first)  # type: ignore[arg-type]
        signature = llvm.LLVMFunctionType([_PTR] * len(self.entry.args))
        self.result = llvm.FuncOp(fn.sym_name.data, signature, _EXTERNAL, body=self.region)
        for marker in (KERNEL_ATTR, PACKED_BUFFERS_ATTR):  # the signature's reason stays visible
            if marker in fn.attributes:
                self.result.attributes[marker] = fn.attributes[marker]

    def lower_block(self, block: Block) -> None:
        for op in block.ops:
            new = _HANDLERS[type(op)](self, op)
            if new is not None:
                self.values[op.results[0]] = new
                if new.name_hint is None:
                    new.name_hint = op.results[0].name_hint

    def args(self, op: Operation) -> list[SSAValue]:
        return [self.values[v] for v in op.operands]

    def emit(self, op: Operation) -> SSAValue:
        self.block.add_op(op)
        return op.results[0] if op.results else None  # type: ignore[return-value]

    def const(self, value: int | float, t: Attribute) -> SSAValue:
        """A constant, created once per function at the top of the entry block."""
        if isinstance(t, IntegerType):
            width = t.width.data
            bits = int(value) & ((1 << width) - 1)  # two's complement, signed if wider than i1
            value = bits - (1 << width) if width > 1 and bits >> (width - 1) else bits
            attr: Attribute = IntegerAttr(value, t)
        else:
            attr = FloatAttr(float(value), t)  # type: ignore[arg-type]
        key = (t, value if isinstance(value, int) else float(value).hex())  # keeps -0.0 apart
        if key not in self.constants:
            self.constants[key] = llvm.ConstantOp(attr, t)  # placed at the end of __init__
        return self.constants[key].result

    def icmp(self, predicate: str, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
        flag = llvm.ICmpPredicateFlag(predicate).to_int()
        return self.emit(llvm.ICmpOp(lhs, rhs, IntegerAttr(flag, i64)))

    def resize(self, value: SSAValue, to: Attribute, *, signed: bool) -> SSAValue:
        """An integer converted to the width of `to` (sign- or zero-extended)."""
        old, new = _width(value.type), _width(to)
        if old == new:
            return value
        cast = llvm.TruncOp if new < old else llvm.SExtOp if signed else llvm.ZExtOp
        return self.emit(cast(value, to))

    def intrinsic(self, name: str, args: Sequence[SSAValue], t: Attribute) -> SSAValue:
        return self.emit(llvm.CallIntrinsicOp(f"llvm.{name}", args, [t]))

    def call(self, name: str, args: Sequence[SSAValue], t: Attribute) -> SSAValue:
        self.externals[name] = llvm.LLVMFunctionType([a.type for a in args], t)
        return self.emit(llvm.CallOp(name, *args, return_type=t))


# Structure: functions, buffers, loops --------------------------------------


@_lowers(func.ReturnOp, loop.YieldOp)
def _terminator(lw: _FunctionLowering, op: Operation) -> None:
    if isinstance(op, func.ReturnOp):  # a loop body's end is handled by `_for`
        lw.emit(llvm.ReturnOp())


@_lowers(func.CallOp)
def _call(lw: _FunctionLowering, op: Operation) -> None:
    """A call to another loop-level function: its buffers, then weights and arena."""
    assert isinstance(op, func.CallOp)
    lw.emit(llvm.CallOp(op.callee.string_value(), *lw.args(op), lw.weights, lw.arena))


@_lowers(loop.AllocOp, loop.WeightOp)
def _buffer(lw: _FunctionLowering, op: Operation) -> SSAValue:
    assert isinstance(op, loop.AllocOp | loop.WeightOp)
    is_alloc = isinstance(op, loop.AllocOp)
    if op.offset is None:
        needed = "loop-plan-memory" if is_alloc else "loop-pack-weights"
        raise DiagnosticException(
            f"{PASS}: {op.name} : {op.result.type} has no offset; run {needed} first"
        )
    offset = op.offset.value.data
    index: int | SSAValue = offset if offset < 2**31 else lw.const(offset, i64)
    base = lw.arena if is_alloc else lw.weights
    return lw.emit(llvm.GEPOp.from_mixed_indices(base, [index], i8, inbounds=True))


@_lowers(loop.ReshapeOp)
def _reshape(lw: _FunctionLowering, op: Operation) -> SSAValue:
    return lw.values[op.operands[0]]


@_lowers(loop.ForOp)
def _for(lw: _FunctionLowering, op: Operation) -> None:
    assert isinstance(op, loop.ForOp)
    lower, upper, step = op.bounds
    header, body, exit_ = Block(arg_types=[i64]), Block(), Block()
    iv = header.args[0]
    iv.name_hint = op.induction_variable.name_hint
    lw.emit(llvm.BrOp(header, lw.const(lower, i64)))
    lw.region.add_block(header)
    lw.block = header
    more = lw.icmp("slt", iv, lw.const(upper, i64))
    lw.emit(llvm.CondBrOp(more, body, [], exit_, []))
    lw.region.add_block(body)
    lw.block = body
    lw.values[op.induction_variable] = iv
    lw.lower_block(op.body.block)
    lw.emit(llvm.BrOp(header, lw.emit(llvm.AddOp(iv, lw.const(step, i64)))))
    lw.region.add_block(exit_)
    lw.block = exit_


def _element_pointer(
    lw: _FunctionLowering, buffer: SSAValue, indices: Sequence[SSAValue]
) -> SSAValue:
    """`&buffer[i, j, ...]`: GEP by the linear index `i*stride0 + j*stride1 + ...`."""
    memref_type = buffer.type
    assert isinstance(memref_type, MemRefType)
    strides, offset = memref_type.get_strides(), memref_type.get_offset()
    if strides is None or None in strides or offset is None:
        raise DiagnosticException(f"{PASS}: {memref_type} is not a static strided memref")
    linear: SSAValue | None = lw.const(offset, i64) if offset else None
    for index, stride in zip(indices, strides):
        term = lw.values[index]
        if stride != 1:
            term = lw.emit(llvm.MulOp(term, lw.const(stride, i64)))  # type: ignore[arg-type]
        linear = term if linear is None else lw.emit(llvm.AddOp(linear, term))
    if linear is None:  # a rank-0 buffer
        return lw.values[buffer]
    element = _memory_type(memref_type.element_type)
    return lw.emit(
        llvm.GEPOp.from_mixed_indices(lw.values[buffer], [linear], element, inbounds=True)
    )


@_lowers(memref.LoadOp)
def _load(lw: _FunctionLowering, op: Operation) -> SSAValue:
    assert isinstance(op, memref.LoadOp)
    pointer = _element_pointer(lw, op.memref, op.indices)
    value = lw.emit(llvm.LoadOp(pointer, _memory_type(op.res.type)))
    return lw.emit(llvm.TruncOp(value, i1)) if op.res.type == i1 else value


@_lowers(memref.StoreOp)
def _store(lw: _FunctionLowering, op: Operation) -> None:
    assert isinstance(op, memref.StoreOp)
    value = lw.values[op.value]
    if op.value.type == i1:
        value = lw.emit(llvm.ZExtOp(value, i8))
    lw.emit(llvm.StoreOp(value, _element_pointer(lw, op.memref, op.indices)))


# Scalars: table-driven families --------------------------------------------


@_lowers(*_DIRECT)
def _direct(lw: _FunctionLowering, op: Operation) -> SSAValue:
    return lw.emit(_DIRECT[type(op)](*lw.args(op)))


@_lowers(*_CASTS)
def _cast(lw: _FunctionLowering, op: Operation) -> SSAValue:
    value, target = lw.values[op.operands[0]], _scalar_type(op.results[0].type)
    if isinstance(op, arith.TruncFOp) and value.type == f64 and target == f16:
        # f64 -> f16 needs compiler-rt's __truncdfhf2, which the JIT cannot find;
        # going through f32 rounds twice but stays within f16's precision here.
        value = lw.emit(llvm.FPTruncOp(value, f32))
    if isinstance(op, arith.TruncIOp | arith.ExtSIOp | arith.ExtUIOp):
        # Same width (i64 <-> ui64: a constant of an unsigned type) is no
        # instruction in LLVM, where signedness is not part of the type.
        return lw.resize(value, target, signed=not isinstance(op, arith.ExtUIOp))
    return lw.emit(_CASTS[type(op)](value, target))


@_lowers(*_INTRINSICS)
def _intrinsic(lw: _FunctionLowering, op: Operation) -> SSAValue:
    t = _scalar_type(op.results[0].type)
    return lw.intrinsic(f"{_INTRINSICS[type(op)]}.{_suffix(t)}", lw.args(op), t)


@_lowers(*_LIBM)
def _libm(lw: _FunctionLowering, op: Operation) -> SSAValue:
    t, args, name = op.results[0].type, lw.args(op), _LIBM[type(op)]
    if isinstance(t, Float64Type):
        return lw.call(name, args, t)
    if isinstance(t, Float32Type):
        return lw.call(name + "f", args, t)
    # libm has no half-precision functions: compute in f32 and round once.
    wide = [lw.emit(llvm.FPExtOp(a, f32)) for a in args]
    return lw.emit(llvm.FPTruncOp(lw.call(name + "f", wide, f32), t))


# Scalars: one-offs -----------------------------------------------------------


@_lowers(arith.ConstantOp)
def _constant(lw: _FunctionLowering, op: Operation) -> SSAValue:
    assert isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr | FloatAttr)
    return lw.const(op.value.value.data, _scalar_type(op.result.type))


@_lowers(arith.CmpiOp)
def _cmpi(lw: _FunctionLowering, op: Operation) -> SSAValue:
    assert isinstance(op, arith.CmpiOp)
    return lw.icmp(_CMPI[op.predicate.value.data], *lw.args(op))


@_lowers(arith.CmpfOp)
def _cmpf(lw: _FunctionLowering, op: Operation) -> SSAValue:
    assert isinstance(op, arith.CmpfOp)
    predicate = _CMPF[op.predicate.value.data]
    if predicate in ("false", "true"):  # the translator has no constant predicates
        return lw.const(predicate == "true", i1)
    return lw.emit(llvm.FCmpOp(*lw.args(op), predicate))


@_lowers(arith.IndexCastOp)
def _index_cast(lw: _FunctionLowering, op: Operation) -> SSAValue:
    return lw.resize(lw.values[op.operands[0]], _scalar_type(op.results[0].type), signed=True)


@_lowers(arith.FPToSIOp, arith.FPToUIOp)
def _fp_to_int(lw: _FunctionLowering, op: Operation) -> SSAValue:
    # The translator lacks fptosi/fptoui; the saturating intrinsics agree on
    # every input where those are defined (and pick a value where they are poison).
    (x,) = lw.args(op)
    t = _scalar_type(op.results[0].type)
    kind = "fptosi" if isinstance(op, arith.FPToSIOp) else "fptoui"
    return lw.intrinsic(f"{kind}.sat.{_suffix(t)}.{_suffix(x.type)}", [x], t)


@_lowers(arith.UIToFPOp)
def _uitofp(lw: _FunctionLowering, op: Operation) -> SSAValue:
    # The translator lacks uitofp. Below 64 bits, zero-extend and convert as
    # signed; for i64, halve with a sticky low bit (round to odd), convert, double.
    (x,) = lw.args(op)
    t = op.results[0].type
    if _width(x.type) < 64:
        return lw.emit(llvm.SIToFPOp(lw.resize(x, i64, signed=False), t))
    one = lw.const(1, i64)
    halved = lw.emit(llvm.OrOp(lw.emit(llvm.LShrOp(x, one)), lw.emit(llvm.AndOp(x, one))))
    big = lw.emit(llvm.SIToFPOp(halved, t))
    big = lw.emit(llvm.FAddOp(big, big))
    small = lw.emit(llvm.SIToFPOp(x, t))
    return lw.emit(llvm.SelectOp(lw.icmp("slt", x, lw.const(0, i64)), big, small))


# Integer division: sdiv/udiv/srem/urem trap (SIGFPE) on a zero divisor and
# sdiv/srem on INT_MIN / -1. Each divides by a safe divisor instead: 1 where
# the divisor is 0 (the quotient then selected to 0) or where INT_MIN is
# divided by -1 (a / 1 is the wrapped quotient INT_MIN, a % 1 the remainder 0).
_DIVISIONS: dict[type[Operation], tuple[type[Operation], bool]] = {
    # op: (llvm op, signed)
    arith.DivSIOp: (llvm.SDivOp, True), arith.DivUIOp: (llvm.UDivOp, False),
    arith.RemSIOp: (llvm.SRemOp, True), arith.RemUIOp: (llvm.URemOp, False),
}  # fmt: skip


def _divide(
    lw: _FunctionLowering, kind: type[Operation], a: SSAValue, b: SSAValue, *, signed: bool
) -> SSAValue:
    """`kind` (sdiv, udiv, srem, urem) of a by b, without trapping: a zero
    divisor gives 0, INT_MIN / -1 the wrapped INT_MIN (remainder 0)."""
    zero, one = lw.const(0, a.type), lw.const(1, a.type)
    by_zero = lw.icmp("eq", b, zero)
    unsafe = by_zero
    if signed:
        int_min = lw.const(-(1 << (_width(a.type) - 1)), a.type)
        overflow = lw.emit(
            llvm.AndOp(lw.icmp("eq", a, int_min), lw.icmp("eq", b, lw.const(-1, a.type)))
        )
        unsafe = lw.emit(llvm.OrOp(by_zero, overflow))
    result = lw.emit(kind(a, lw.emit(llvm.SelectOp(unsafe, one, b))))
    if kind in (llvm.SDivOp, llvm.UDivOp):  # a / 1 is a: the quotient by zero is 0
        result = lw.emit(llvm.SelectOp(by_zero, zero, result))
    return result


@_lowers(*_DIVISIONS)
def _division(lw: _FunctionLowering, op: Operation) -> SSAValue:
    kind, signed = _DIVISIONS[type(op)]
    a, b = lw.args(op)
    return _divide(lw, kind, a, b, signed=signed)


@_lowers(arith.FloorDivSIOp, arith.CeilDivSIOp)
def _rounded_divsi(lw: _FunctionLowering, op: Operation) -> SSAValue:
    # sdiv rounds toward zero; adjust by one when the remainder is nonzero and
    # its sign differs from the divisor's (floor) or matches it (ceil).
    a, b = lw.args(op)
    zero = lw.const(0, a.type)
    quotient = _divide(lw, llvm.SDivOp, a, b, signed=True)
    remainder = _divide(lw, llvm.SRemOp, a, b, signed=True)
    floor = isinstance(op, arith.FloorDivSIOp)
    signs = lw.icmp(
        "ne" if floor else "eq", lw.icmp("slt", remainder, zero), lw.icmp("slt", b, zero)
    )
    adjust = lw.emit(llvm.AndOp(lw.icmp("ne", remainder, zero), signs))
    step = lw.resize(adjust, a.type, signed=False)
    return lw.emit((llvm.SubOp if floor else llvm.AddOp)(quotient, step))


@_lowers(arith.CeilDivUIOp)
def _ceildivui(lw: _FunctionLowering, op: Operation) -> SSAValue:
    a, b = lw.args(op)
    quotient = _divide(lw, llvm.UDivOp, a, b, signed=False)
    remainder = _divide(lw, llvm.URemOp, a, b, signed=False)
    inexact = lw.icmp("ne", remainder, lw.const(0, a.type))
    return lw.emit(llvm.AddOp(quotient, lw.resize(inexact, a.type, signed=False)))


@_lowers(math.RsqrtOp)
def _rsqrt(lw: _FunctionLowering, op: Operation) -> SSAValue:
    (x,) = lw.args(op)
    root = lw.intrinsic(f"sqrt.{_suffix(x.type)}", [x], x.type)
    return lw.emit(llvm.FDivOp(lw.const(1.0, x.type), root))


@_lowers(math.FPowIOp)
def _fpowi(lw: _FunctionLowering, op: Operation) -> SSAValue:
    # `llvm.powi` becomes a call to libgcc's __powi*f2, which a JIT process may
    # lack; pow in f64 is exact for i32 exponents and more accurate anyway.
    x, n = lw.args(op)
    wide = x if x.type == f64 else lw.emit(llvm.FPExtOp(x, f64))
    power = lw.intrinsic("pow.f64", [wide, lw.emit(llvm.SIToFPOp(n, f64))], f64)
    return power if x.type == f64 else lw.emit(llvm.FPTruncOp(power, x.type))


@_lowers(*_INT_INTRINSICS)
def _int_intrinsic(lw: _FunctionLowering, op: Operation) -> SSAValue:
    # The i1 flag `false`: abs(INT_MIN) is INT_MIN, ctlz(0)/cttz(0) the width (not poison).
    (x,) = lw.args(op)
    return lw.intrinsic(
        f"{_INT_INTRINSICS[type(op)]}.{_suffix(x.type)}", [x, lw.const(0, i1)], x.type
    )


# The pass ------------------------------------------------------------------


def _problem(op: Operation, module: ModuleOp) -> str | None:
    """Why `op` cannot be lowered (its name, or its name and a type), or None."""
    if op is module or isinstance(op, func.FuncOp):
        return None if op.parent_op() in (None, module) else op.name
    if type(op) not in _HANDLERS or op.parent_op() is module:
        return op.name
    bad = [t for t in (*(v.type for v in op.operands), *op.result_types) if not _lowerable(t)]
    return f"{op.name} on {bad[0]}" if bad else None


def _check_supported(module: ModuleOp) -> None:
    """One diagnostic listing every op this pass cannot lower, with counts."""
    names = Counter(p for op in module.walk() if (p := _problem(op, module)) is not None)
    if names:
        listed = ", ".join(f"{name} ({count})" for name, count in sorted(names.items()))
        raise DiagnosticException(f"{PASS}: unsupported ops: {listed}")


def _check_packed_not_called(module: ModuleOp) -> None:
    """A call passes buffers one by one, which a packed function does not take."""
    packed = {op.sym_name.data for op in module.ops
              if isinstance(op, func.FuncOp) and PACKED_BUFFERS_ATTR in op.attributes}  # fmt: skip
    for op in module.walk():
        if isinstance(op, func.CallOp) and op.callee.string_value() in packed:
            raise DiagnosticException(
                f"{PASS}: @{op.callee.string_value()} takes its buffers packed "
                f"({PACKED_BUFFERS_ATTR}), so loop-level code cannot call it"
            )


def convert_loop_to_llvm(module: ModuleOp) -> None:
    """Replace every `func.func` of `module` by an `llvm.func` (see the ABI above)."""
    _check_supported(module)
    _check_packed_not_called(module)
    externals: dict[str, llvm.LLVMFunctionType] = {}
    body = module.body.block
    for fn in list(body.ops):
        assert isinstance(fn, func.FuncOp)
        body.insert_op_before(_FunctionLowering(fn, externals).result, fn)
        body.erase_op(fn)
    for name, function_type in externals.items():
        body.insert_op_before(llvm.FuncOp(name, function_type, _EXTERNAL), body.first_op)  # type: ignore[arg-type]


def to_llvmlite(module: ModuleOp) -> llvmir.Module:
    """The llvmlite module (host triple) of a module that went through this pass."""
    leftover = {op.name for op in module.ops if not isinstance(op, llvm.FuncOp)}
    if leftover:
        raise DiagnosticException(f"to_llvmlite: run {PASS} first (found {sorted(leftover)})")
    marked = {marker: {op.sym_name.data for op in module.ops
                       if isinstance(op, llvm.FuncOp) and marker in op.attributes}
              for marker in (KERNEL_ATTR, PACKED_BUFFERS_ATTR)}  # fmt: skip
    llvm_module = convert_module(module, fallback_target_triple=None)
    for function in llvm_module.functions:
        if function.name in marked[KERNEL_ATTR]:
            # Kept out of line: LLVM optimises each kernel on its own, in linear time.
            function.linkage = "internal"
            function.attributes.add("noinline")
        if function.name in marked[PACKED_BUFFERS_ATTR]:
            # The ABI's promise: the array is only read and overlaps no buffer,
            # so LLVM may keep a pointer loaded from it across stores.
            for attribute in ("noalias", "captures(none)"):
                function.args[0].add_attribute(attribute)
    return llvm_module


@dataclass(frozen=True)
class ConvertLoopToLLVMPass(ModulePass):
    """Lower loop-level functions to the `llvm` dialect (ABI in the module docstring)."""

    name = "convert-loop-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        convert_loop_to_llvm(op)
