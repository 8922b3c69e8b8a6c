"""Schedules as data: the `#loop.schedule<...>` attribute and what it means
for a structured op.

A structured op (`linalg.generic` and the named `linalg` ops Ember emits, which generalize to one)
says *what* is computed over an iteration space of dims; its schedule says
*how* the loops over that space run:

    #loop.schedule<order = [0, 2, 1], tiles = [32, 0, 64], parallel = [0], unroll = 4, vector = 8>

- `order`: the dims, outermost first (a permutation of the op's dims);
- `tiles`: one tile size per dim (0 = untiled). A tiled dim runs as a tile
  loop (step = tile) outside all point loops and a point loop inside; a tile
  that does not divide the extent leaves a remainder, which runs after the
  full tiles. A tile at least as large as the extent leaves the dim untiled;
- `parallel`: the dims whose loops carry the `parallel` flag (parallel
  iterators only: the iterations of a reduction depend on each other);
- `unroll`: the innermost loop's body is emitted this many times per
  iteration (at most `MAX_UNROLL`), with a remainder loop for what does not
  fill a step;
- `vector`: a vector width (0: none; else a power of two up to
  `MAX_VECTOR`): with `micro`, the width of the micro-kernel's vectors;
  without, a hint recorded as the `loop.vector_width` attribute on each
  generated innermost loop (`scf.for`/`scf.parallel`), which the CPU target
  makes LLVM loop metadata for the loop vectoriser
  (`llvm.loop.vectorize.width`);
- `pack`: operand numbers (inputs first, in the op's operand order) to copy,
  before the op's loops, into a fresh buffer laid out tile by tile: each
  operand dim indexed by a tiled dim of tile t and extent E splits into
  (ceil(E / t), t), the tile-number dims first, then the within-tile dims
  (an untiled dim stays whole among them), padded up to whole tiles. The
  op's body then reads that buffer. Only inputs whose indexing map is a
  projected permutation of the dims can be packed (`verify_schedule`);
  `passes/loop/generate.py` emits the copy;
- `micro = [m, n, MR, NR]`: a register-blocked micro-kernel for a
  contraction (a sum-of-products body `out + a * b` on f32 or f64): the
  parallel dims m and n run in blocks of MR x NR outputs, NR a multiple of
  `vector` along n, the output's innermost dim, which must be the last,
  unit-stride index of every operand that depends on it. Each block keeps its
  MR x NR/vector accumulators in vector registers across loops over all the
  reduction dims (loop-carried values), which run inside it; the dims other
  than m, n and the reductions loop outside, as `order` says, after any tile
  loops. `micro_problem` says when a micro field does not fit an op.

Fields left out of the text take their defaults (no tiles, no parallel
loops, unroll 1, no vector hint, no packing, no micro-kernel); `order` is
required. The
attribute sits on a structured op as its `schedule` attribute (`SCHEDULE`);
`set_schedule` sets it from Python. `passes/loop/generate.py` emits the loop
nest a schedule describes, `tensor-default-schedule` attaches
`default_schedule` (today's heuristic) to ops that have none.

The op side is read through `IterationSpace` (extents, iterator kinds,
indexing maps), built in one place (`iteration_space`) from the structured
op classes in `STRUCTURED_OPS`, so the code that schedules does not depend on
which dialect holds those ops.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import get_args

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    Float32Type,
    Float64Type,
    IntAttr,
    bf16,
    f16,
    f32,
)
from xdsl.dialects.func import FuncOp
from xdsl.dialects.linalg import ops as linalg
from xdsl.dialects.linalg.attrs import IteratorType
from xdsl.ir import Attribute, Operation, ParametrizedAttribute
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
)
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import DiagnosticException, VerifyException

from ember.dialects.ember_linalg import generalize, indexing_maps, iterator_kinds
from ember.dialects.source_names import describe_names, source_names
from ember.errors import EmberError, first_line

PARALLEL = IteratorType.PARALLEL.value
REDUCTION = IteratorType.REDUCTION.value

SCHEDULE = "schedule"
"""The name of the attribute that holds a structured op's schedule."""

VECTOR_WIDTH = "loop.vector_width"
"""The attribute on a generated innermost loop recording the schedule's vector width."""

NO_UNROLL = "loop.no_unroll"
"""The unit attribute on a generated loop whose body is unrolled already (a
micro-kernel's reduction step: MR x NR/width FMAs); LLVM is told not to
unroll it again (`llvm.loop.unroll.disable`), which would only make more code
to compile: on ResNet-50, 7% less machine code and 0.3 s less LLVM time, at
the same latency."""

StructuredOp = linalg.GenericOp | linalg.MatmulOp | linalg.Conv2DNchwFchwOp
"""The ops a schedule can be attached to (`iteration_space` reads each): the
one list of them, a union for typed patterns (`op_type_rewrite_pattern`)."""

STRUCTURED_OPS: tuple[type[Operation], ...] = get_args(StructuredOp)
"""`StructuredOp`'s classes, for `isinstance`."""


MAX_UNROLL = 64
"""The largest unroll factor: unrolling copies the body in the IR, which
stays compact until LLVM (that unrolls further where it pays)."""

MAX_VECTOR = 64
"""The largest vector width hint. The hint is meant to become LLVM's
`llvm.loop.vectorize.width`, whose loop vectoriser ignores a width that is
not a power of two or exceeds 64 (`VectorizerParams::MaxVectorWidth`)."""

MAX_ACCUMULATORS = 64
"""The most vector accumulators (MR x NR / vector) a micro-kernel may keep:
more than any register file holds, so a larger block only spills, and each
one costs an fma in the IR of the kernel's body."""


class ScheduleError(EmberError, DiagnosticException):
    """A schedule that does not fit the op it is attached to: a user error
    (`EmberError`) that passes report as their diagnostic (`ember-opt
    --verify-diagnostics` prints it per chunk; the CPU pipeline makes it a
    `CompileError`)."""


def _ints(values: Sequence[int]) -> ArrayAttr[IntAttr]:
    return ArrayAttr([IntAttr(v) for v in values])


def schedule_problem(
    order: Sequence[int],
    tiles: Sequence[int],
    parallel: Sequence[int],
    unroll: int,
    vector: int,
    pack: Sequence[int],
    micro: Sequence[int] = (),
) -> str | None:
    """What is wrong with these fields on their own (None: nothing); the
    checks against an op are `verify_schedule`'s."""
    dims = len(order)
    if sorted(order) != list(range(dims)):
        return f"order {list(order)} is not a permutation of 0..{dims - 1}"
    if len(tiles) != dims:
        return f"tiles needs one size per dim ({dims}), got {len(tiles)}"
    if any(t < 0 for t in tiles):
        return f"tile sizes must be 0 (untiled) or positive, got {list(tiles)}"
    if len(set(parallel)) != len(parallel) or any(not 0 <= d < dims for d in parallel):
        return f"parallel {list(parallel)} must name distinct dims of 0..{dims - 1}"
    if not 1 <= unroll <= MAX_UNROLL:
        return f"unroll must be from 1 to {MAX_UNROLL}, got {unroll}"
    if vector and not (0 < vector <= MAX_VECTOR and vector & (vector - 1) == 0):
        return f"vector must be 0 (no hint) or a power of two up to {MAX_VECTOR}, got {vector}"
    if len(set(pack)) != len(pack) or any(p < 0 for p in pack):
        return f"pack {list(pack)} must name distinct operands (numbered from 0)"
    return _micro_fields_problem(dims, unroll, vector, micro)


def _micro_fields_problem(dims: int, unroll: int, vector: int, micro: Sequence[int]) -> str | None:
    if not micro:
        return None
    if len(micro) != 4:
        return f"micro needs [m, n, MR, NR], got {list(micro)}"
    m, n, rows, columns = micro
    if m == n or not (0 <= m < dims and 0 <= n < dims):
        return f"micro's m and n must be distinct dims of 0..{dims - 1}, got {m} and {n}"
    if not vector:
        return "micro needs a vector width (vector = W), the width of its accumulators"
    if rows < 1 or columns < vector or columns % vector:
        return f"micro's MR must be positive and NR a multiple of vector ({vector}), got {rows} and {columns}"
    if rows * columns // vector > MAX_ACCUMULATORS:
        return f"micro's MR x NR / vector is {rows * columns // vector} accumulators, more than {MAX_ACCUMULATORS}"
    if unroll != 1:
        return "micro runs its own loops: unroll must be 1"
    return None


@irdl_attr_definition
class ScheduleAttr(ParametrizedAttribute):
    """How the loops of one structured op run (see the module docstring)."""

    name = "loop.schedule"

    order: ArrayAttr[IntAttr]
    tiles: ArrayAttr[IntAttr]
    parallel: ArrayAttr[IntAttr]
    unroll: IntAttr
    vector: IntAttr
    pack: ArrayAttr[IntAttr]
    micro: ArrayAttr[IntAttr]

    def __init__(
        self,
        order: Sequence[int],
        tiles: Sequence[int] | None = None,
        parallel: Sequence[int] = (),
        unroll: int = 1,
        vector: int = 0,
        pack: Sequence[int] = (),
        micro: Sequence[int] = (),
    ):
        tiles = [0] * len(order) if tiles is None else tiles
        super().__init__(_ints(order), _ints(tiles), _ints(sorted(parallel)), IntAttr(unroll),
                         IntAttr(vector), _ints(pack), _ints(micro))  # fmt: skip

    @property
    def loop_order(self) -> list[int]:
        return [d.data for d in self.order.data]

    @property
    def tile_sizes(self) -> list[int]:
        return [t.data for t in self.tiles.data]

    @property
    def parallel_dims(self) -> list[int]:
        return [d.data for d in self.parallel.data]

    @property
    def unroll_factor(self) -> int:
        return self.unroll.data

    @property
    def vector_width(self) -> int:
        return self.vector.data

    @property
    def packed_operands(self) -> list[int]:
        return [p.data for p in self.pack.data]

    @property
    def micro_kernel(self) -> MicroKernel | None:
        """The `micro` field, or None without one."""
        if not self.micro.data:
            return None
        m, n, rows, columns = (v.data for v in self.micro.data)
        return MicroKernel(m, n, rows, columns, self.vector_width)

    def verify(self) -> None:
        problem = schedule_problem(self.loop_order, self.tile_sizes, self.parallel_dims,
                                   self.unroll_factor, self.vector_width, self.packed_operands,
                                   [v.data for v in self.micro.data])  # fmt: skip
        if problem is not None:
            raise VerifyException(f"{self.name}: {problem}")

    def print_parameters(self, printer: Printer) -> None:
        fields = [f"order = {self.loop_order}"]
        if any(self.tile_sizes):
            fields.append(f"tiles = {self.tile_sizes}")
        if self.parallel_dims:
            fields.append(f"parallel = {self.parallel_dims}")
        if self.unroll_factor != 1:
            fields.append(f"unroll = {self.unroll_factor}")
        if self.vector_width:
            fields.append(f"vector = {self.vector_width}")
        if self.packed_operands:
            fields.append(f"pack = {self.packed_operands}")
        if self.micro.data:
            fields.append(f"micro = {[v.data for v in self.micro.data]}")
        printer.print_string(f"<{', '.join(fields)}>")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[ParametrizedAttribute | IntAttr]:
        values, start, end = parse_fields(parser, cls.name, _FIELDS, _SCALAR_FIELDS)
        lists = {k: v for k, v in values.items() if isinstance(v, list)}
        scalars = {k: v for k, v in values.items() if isinstance(v, int)}
        if "order" not in lists:
            parser.raise_error("loop.schedule: 'order' is required", start, end)
        order = lists["order"]
        fields = (
            order,
            lists.get("tiles", [0] * len(order)),
            sorted(lists.get("parallel", [])),
            scalars.get("unroll", 1),
            scalars.get("vector", 0),
            lists.get("pack", []),
            lists.get("micro", []),
        )
        problem = schedule_problem(*fields)
        if problem is not None:
            parser.raise_error(f"loop.schedule: {problem}", start, end)
        order, tiles, parallel, unroll, vector, pack, micro = fields
        return [_ints(order), _ints(tiles), _ints(parallel), IntAttr(unroll), IntAttr(vector),
                _ints(pack), _ints(micro)]  # fmt: skip


def parse_fields(parser: AttrParser, attribute: str, fields: Sequence[str],
                 scalars: Sequence[str]) -> tuple[dict[str, list[int] | int], int, int]:  # fmt: skip
    """The `<name = value, ...>` of a schedule attribute named `attribute`:
    each of `fields` at most once, in any order, an integer for those in
    `scalars` and a `[...]` list of integers for the others; with the
    positions where the fields start and end (for errors about them all)."""
    values: dict[str, list[int] | int] = {}
    with parser.in_angle_brackets():
        start = parser.pos
        while True:
            field_start = parser.pos
            name = parser.parse_keyword_in(fields, f" (a {attribute} field)")
            if name in values:
                parser.raise_error(f"{attribute}: '{name}' is given twice", field_start)
            parser.parse_punctuation("=")
            if name in scalars:
                values[name] = parser.parse_integer(allow_boolean=False)
            else:
                values[name] = parser.parse_comma_separated_list(
                    parser.Delimiter.SQUARE, lambda: parser.parse_integer(allow_boolean=False)
                )
            if parser.parse_optional_punctuation(",") is None:
                break
        end = parser.pos
    return values, start, end


_SCALAR_FIELDS = ("unroll", "vector")
_FIELDS = ("order", "tiles", "parallel", "unroll", "vector", "pack", "micro")


@dataclass(frozen=True)
class MicroKernel:
    """A schedule's `micro` field: blocks of `rows` (MR) along dim `m` by
    `columns` (NR) along dim `n`, in vectors of `width` along n."""

    m: int
    n: int
    rows: int
    columns: int
    width: int

    @property
    def vectors(self) -> int:
        """The vectors per row of a block (NR / width)."""
        return self.columns // self.width


# ------------------------------------------------------- the op's side


@dataclass(frozen=True)
class IterationSpace:
    """What scheduling reads of a structured op: the extent and iterator kind
    ("parallel" or "reduction") of each dim, and the indexing map of each
    operand, inputs first (`inputs` of them), then outputs."""

    extents: tuple[int, ...]
    iterators: tuple[str, ...]
    maps: tuple[AffineMap, ...]
    inputs: int
    product: tuple[int, int] | None = None
    """For a body that accumulates a product into its one output
    (`out + a * b`, f32 or f64: a contraction), the input numbers of a and b;
    else None. Only such a body (or one of `bf16_pairs`) can run as a
    micro-kernel."""
    bf16_pairs: BF16Pairs | None = None
    """For a sum of bfloat16 pairs into f32 (`bf16_pairs_of`), its roles."""
    f16_product: tuple[int, int] | None = None
    """For a body `out + extf(a) * extf(b)` of float16 a and b into f32
    (`widened_product`), the input numbers of a and b: a micro-kernel reads
    them as float16 and widens them in registers."""

    @property
    def multiplied(self) -> tuple[int, int] | None:
        """The inputs a micro-kernel multiplies: `product`'s or `f16_product`'s."""
        return self.product or self.f16_product

    @property
    def output_maps(self) -> tuple[AffineMap, ...]:
        return self.maps[self.inputs :]


@dataclass(frozen=True)
class BF16Pairs:
    """The roles in a contraction of bfloat16 pairs, `out[.., m, n] +=
    extf(row[.., m, 2 k + p]) * extf(column[k, n, p])`: the input numbers of
    the row and column operands, and the pair dim p (extent 2). A micro-kernel
    runs it with `loop.bf16_dot` (the CPU's `vdpbf16ps`): per step of k, a
    row's pair broadcast against the column operand's pairs for W columns
    (2W consecutive elements, n and p being its last two indices)."""

    row: int
    column: int
    pair: int
    k: int
    n: int


def bf16_pairs_of(extents: Sequence[int], iterators: Sequence[str], maps: Sequence[AffineMap],
                  op: linalg.GenericOp) -> BF16Pairs | None:  # fmt: skip
    """The `BF16Pairs` of a generic whose body is exactly `out + extf(a) *
    extf(b)` (a and b bfloat16 inputs, out f32: `widened_product`) and whose
    maps read pairs: one input's last index `2 * d_k + d_p`, the other's
    last two `d_n, d_p` with d_k of neither the output nor of that second
    index, d_p a reduction dim of extent 2, d_n a parallel dim and the
    output's last index."""
    numbers = widened_product(op, bf16)
    if numbers is None:
        return None
    output = maps[-1].results
    for row, column in (numbers, numbers[::-1]):
        roles = _pair_roles(maps[row], maps[column], output, extents, iterators)
        if roles is not None:
            return BF16Pairs(row, column, *roles)
    return None


def widened_product(op: linalg.GenericOp, half: Attribute) -> tuple[int, int] | None:
    """The inputs a and b of a body that is exactly `out + extf(a) * extf(b)`
    (either order of each operation) into its one f32 output, a and b two
    inputs of type `half`; None for any other body."""
    block = op.body.block
    ops = list(block.ops)
    if len(op.outputs) != 1 or len(ops) != 5:
        return None
    *widen, multiply, add, yielded = ops
    if not all(isinstance(w, arith.ExtFOp) and w.operands[0].type == half for w in widen):
        return None
    if not (isinstance(multiply, arith.MulfOp) and isinstance(add, arith.AddfOp)):
        return None
    if not isinstance(yielded, linalg.YieldOp) or list(yielded.operands) != [add.result]:
        return None
    out = block.args[len(op.inputs)]
    if out.type != f32 or {add.lhs, add.rhs} != {out, multiply.result} or add.lhs is add.rhs:
        return None
    if [multiply.lhs, multiply.rhs] not in ([w.results[0] for w in widen],
                                            [w.results[0] for w in widen[::-1]]):  # fmt: skip
        return None
    inputs = list(block.args[: len(op.inputs)])
    sources = [w.operands[0] for w in widen]
    if any(s not in inputs for s in sources) or sources[0] is sources[1]:
        return None
    return inputs.index(sources[0]), inputs.index(sources[1])


def _pair_roles(row: AffineMap, column: AffineMap, output: Sequence[AffineExpr],
                extents: Sequence[int], iterators: Sequence[str]) -> tuple[int, int, int] | None:  # fmt: skip
    """(p, k, n) where `row` and `column` read pairs as `bf16_pairs_of` says."""
    if len(column.results) < 2 or not row.results or not output:
        return None
    n_expr, p_expr = column.results[-2:]
    if not (isinstance(n_expr, AffineDimExpr) and isinstance(p_expr, AffineDimExpr)):
        return None
    n, p = n_expr.position, p_expr.position
    if iterators[p] == PARALLEL or extents[p] != 2 or iterators[n] != PARALLEL:
        return None
    if output[-1] != n_expr:
        return None
    coefficients = linear_coefficients(row.results[-1])
    if coefficients is None or coefficients.get(p) != 1 or len(coefficients) != 2:
        return None
    ((k, two),) = ((d, c) for d, c in coefficients.items() if d != p)
    if two != 2 or not isinstance(k, int) or iterators[k] == PARALLEL:
        return None
    if map_depends_on(row, n) or any(depends_on(e, p) for e in row.results[:-1]):
        return None
    if any(depends_on(e, p) or depends_on(e, n) for e in column.results[:-2]):
        return None
    return p, k, n


def iteration_space(op: Operation) -> IterationSpace:
    """The iteration space of one of the `STRUCTURED_OPS`. A named op is read
    through its generalization (built, read and erased again)."""
    if isinstance(op, linalg.GenericOp):
        kinds = tuple(kind.value for kind in iterator_kinds(op))
        extents, maps = tuple(op.get_static_loop_ranges()), tuple(indexing_maps(op))
        return IterationSpace(extents, kinds, maps, len(op.inputs), product_operands(op),
                              bf16_pairs_of(extents, kinds, maps, op), widened_product(op, f16))  # fmt: skip
    assert isinstance(op, STRUCTURED_OPS), f"{op.name} is not a structured op"
    generalized = generalize(op)  # type: ignore[arg-type]
    try:
        return iteration_space(generalized)
    finally:
        generalized.erase()


def product_operands(op: linalg.GenericOp) -> tuple[int, int] | None:
    """The inputs a and b of a body that is exactly `out + a * b` (either
    order of each operation) into its one output, all f32 or all f64; None
    for any other body."""
    block = op.body.block
    ops = list(block.ops)
    if len(op.outputs) != 1 or len(ops) != 3:
        return None
    multiply, add, yielded = ops
    if not (isinstance(multiply, arith.MulfOp) and isinstance(add, arith.AddfOp)):
        return None
    if not isinstance(yielded, linalg.YieldOp) or list(yielded.operands) != [add.result]:
        return None
    if not isinstance(add.result.type, Float32Type | Float64Type):
        return None
    out = block.args[len(op.inputs)]
    if {add.lhs, add.rhs} != {out, multiply.result} or add.lhs is add.rhs:
        return None
    inputs = block.args[: len(op.inputs)]
    if multiply.lhs not in inputs or multiply.rhs not in inputs:
        return None
    return (inputs.index(multiply.lhs), inputs.index(multiply.rhs))


def describe(op: Operation) -> str:
    """`linalg.matmul %m in @main`: the op's name, its first result's name and
    its function, for diagnostics; an op on buffers, which has no result, is
    named by the buffer it writes (`linalg.matmul into %out0 in @main`); an
    op with source names says them too (`linalg.matmul %m (node fc1) in @main`)."""
    text = op.name
    if op.results and op.results[0].name_hint:
        text += f" %{op.results[0].name_hint}"
    elif not op.results and isinstance(op, linalg.LinalgStructuredOperation) and op.outputs:
        if op.outputs[0].name_hint:
            text += f" into %{op.outputs[0].name_hint}"
    names = source_names(op)
    if names:
        text += f" (node{'s' if len(names) > 1 else ''} {describe_names(names)})"
    func = op.parent_op()
    while func is not None and not isinstance(func, FuncOp):
        func = func.parent_op()
    if func is not None:
        text += f" in @{func.sym_name.data}"
    return text


def verify_schedule(schedule: ScheduleAttr, space: IterationSpace, where: str) -> None:
    """Raises `ScheduleError` naming `where` (the op, see `describe`) if
    `schedule` does not fit the op's iteration space."""
    dims = len(space.iterators)
    if len(schedule.loop_order) != dims:
        raise ScheduleError(
            f"{where}: schedule order {schedule.loop_order} has {len(schedule.loop_order)} dims, "
            f"the op iterates over {dims}"
        )
    reductions = [d for d in schedule.parallel_dims if space.iterators[d] != PARALLEL]
    if reductions:
        raise ScheduleError(
            f"{where}: schedule runs d{reductions[0]} in parallel, but d{reductions[0]} is a "
            f"{space.iterators[reductions[0]]} dim"
        )
    for operand in schedule.packed_operands:
        problem = pack_problem(space, operand)
        if problem is not None:
            raise ScheduleError(f"{where}: schedule packs operand {operand}, {problem}")
    micro = schedule.micro_kernel
    if micro is not None:
        problem = micro_problem(space, micro)
        if problem is not None:
            raise ScheduleError(f"{where}: schedule's micro-kernel does not fit: {problem}")
    problem = run_time_extent_problem(schedule, space)
    if problem is not None:
        raise ScheduleError(f"{where}: schedule {problem}")


def run_time_extent_problem(schedule: ScheduleAttr, space: IterationSpace) -> str | None:
    """What `schedule` asks of a dim whose extent is known only at run time
    that `loop-generate` cannot do (tile it, unroll it, run a micro-kernel's
    vectors along it), or None."""
    dynamic = [d for d, e in enumerate(space.extents) if e == DYNAMIC_INDEX]
    for d in dynamic:
        if schedule.tile_sizes[d]:
            return f"tiles d{d}, whose extent is known only at run time"
    micro = schedule.micro_kernel
    if micro is not None and micro.n in dynamic:
        return f"runs micro-kernel vectors along d{micro.n}, whose extent is known only at run time"
    order = schedule.loop_order
    if schedule.unroll_factor > 1 and order and order[-1] in dynamic:
        return f"unrolls d{order[-1]}, whose extent is known only at run time"
    return None


def is_projected_permutation(amap: AffineMap) -> bool:
    """Whether each result of `amap` is a bare dim, no dim twice (MLIR's
    `isProjectedPermutation`): the operand's dims are some of the op's."""
    dims = [e.position for e in amap.results if isinstance(e, AffineDimExpr)]
    return len(dims) == len(amap.results) and len(set(dims)) == len(dims)


def linear_coefficients(expr: AffineExpr) -> dict[int, int] | None:
    """The coefficient of each dim in `expr` if it is a sum of constant
    multiples of dims (plus a constant), else None (a floordiv, a mod, a
    product of dims, a symbol)."""
    if isinstance(expr, AffineDimExpr):
        return {expr.position: 1}
    if isinstance(expr, AffineConstantExpr):
        return {}
    if not isinstance(expr, AffineBinaryOpExpr):
        return None
    lhs, rhs = linear_coefficients(expr.lhs), linear_coefficients(expr.rhs)
    if lhs is None or rhs is None:
        return None
    if expr.kind == AffineBinaryOpKind.Add:
        return {d: lhs.get(d, 0) + rhs.get(d, 0) for d in {*lhs, *rhs}}
    if expr.kind == AffineBinaryOpKind.Mul and isinstance(expr.rhs, AffineConstantExpr):
        return {d: c * expr.rhs.value for d, c in lhs.items()}
    if expr.kind == AffineBinaryOpKind.Mul and isinstance(expr.lhs, AffineConstantExpr):
        return {d: c * expr.lhs.value for d, c in rhs.items()}
    return None


def depends_on(expr: AffineExpr, dim: int) -> bool:
    """Whether `dim` occurs in `expr`."""
    if isinstance(expr, AffineDimExpr):
        return expr.position == dim
    if isinstance(expr, AffineBinaryOpExpr):
        return depends_on(expr.lhs, dim) or depends_on(expr.rhs, dim)
    return False


def map_depends_on(amap: AffineMap, dim: int) -> bool:
    """Whether any index of `amap` depends on `dim`."""
    return any(depends_on(e, dim) for e in amap.results)


def overlap_vectors(columns: int, block: int, width: int) -> int:
    """How many vectors the last, narrower, block of a micro-kernel whose
    blocks overlap takes over the `columns` past the whole blocks of `block`
    columns (0: none, or as many as a whole block has, which then overlaps
    the one before instead)."""
    spare = -(-(columns % block) // width)
    return spare if spare < block // width else 0


VECTOR_READ_STRIDES = (1, 2)
"""The steps along n with which a micro-kernel reads an operand as vectors:
1, one vector load per W consecutive n; 2 (a stride-2 convolution's input
along the output column), two overlapping loads and a `vector.shuffle` of
their even lanes, which reads no element past the last one used."""


def read_stride(amap: AffineMap, n: int) -> int:
    """The step of `amap`'s last index along dim `n` (0 if it does not
    depend on it, -1 if it is not a constant multiple of it)."""
    last = amap.results[-1] if amap.results else None
    if last is None or not depends_on(last, n):
        return 0
    coefficients = linear_coefficients(last)
    return -1 if coefficients is None else coefficients.get(n, -1)


def micro_problem(space: IterationSpace, micro: MicroKernel) -> str | None:
    """Why the micro-kernel `micro` cannot run the op of iteration space
    `space` (None: it can). The body must be a contraction's (`product`);
    m and n parallel dims of the output, n its innermost index; every operand
    that depends on n must do so through its last index only, with a
    coefficient in `VECTOR_READ_STRIDES` (1 for the output), so that NR/vector
    stretches of consecutive n are vector reads."""
    if space.bf16_pairs is not None:
        return _pairs_problem(space, space.bf16_pairs, micro)
    if space.multiplied is None:
        return "the body is not a sum of products (out + a * b) on f32 or f64"
    for dim in (micro.m, micro.n):
        if dim >= len(space.iterators) or space.iterators[dim] != PARALLEL:
            return f"d{dim} is not a parallel dim of the op"
    output = space.output_maps[0].results
    if not output or output[-1] != AffineDimExpr(micro.n):
        return f"d{micro.n} is not the output's innermost index"
    if AffineDimExpr(micro.m) not in output:
        return f"d{micro.m} is not an index of the output"
    for number, amap in enumerate(space.maps):
        *outer, last = amap.results or (None,)
        if last is None or not depends_on(last, micro.n):
            if map_depends_on(amap, micro.n):
                return f"operand {number} depends on d{micro.n} other than through its last index"
            continue
        strides = (1,) if number >= space.inputs else VECTOR_READ_STRIDES
        if read_stride(amap, micro.n) not in strides:
            steps = " or ".join(map(str, strides))
            return f"operand {number}'s last index {last} does not step by {steps} along d{micro.n}"
        if any(depends_on(e, micro.n) for e in outer):
            return f"operand {number} depends on d{micro.n} other than through its last index"
    return None


def _pairs_problem(space: IterationSpace, pairs: BF16Pairs, micro: MicroKernel) -> str | None:
    """Why `micro` cannot run a sum of bfloat16 pairs (None: it can): its n
    must be the pairs' n, its m a parallel index of the output that the
    column operand does not read."""
    if micro.n != pairs.n:
        return f"d{micro.n} is not d{pairs.n}, the dim of the bfloat16 pairs' columns"
    if micro.m >= len(space.iterators) or space.iterators[micro.m] != PARALLEL:
        return f"d{micro.m} is not a parallel dim of the op"
    if AffineDimExpr(micro.m) not in space.output_maps[0].results:
        return f"d{micro.m} is not an index of the output"
    if map_depends_on(space.maps[pairs.column], micro.m):
        return f"the bfloat16 pairs' column operand depends on d{micro.m}"
    return None


def pack_problem(space: IterationSpace, operand: int) -> str | None:
    """Why operand number `operand` of an op of iteration space `space`
    cannot be packed (None: it can). An output is refused rather than copied
    back: the op accumulates into its outputs in place."""
    if operand >= len(space.maps):
        return f"but the op has {len(space.maps)} operands (0 to {len(space.maps) - 1})"
    if operand >= space.inputs:
        return "an output: only inputs can be packed (the op writes its outputs in place)"
    amap = space.maps[operand]
    if not is_projected_permutation(amap):
        return f"whose indexing map {amap} is not a projected permutation of the dims"
    return None


class KernelSchedule:
    """A schedule that a target's own kernel generator obeys in place of
    `loop-generate` (the GPU's block-tiled contractions: `#ember_gpu.schedule`):
    an op carrying one under `schedule` is left for that generator."""


def has_kernel_schedule(op: Operation) -> bool:
    """Whether `op`'s schedule is a target generator's `KernelSchedule`."""
    return isinstance(op.attributes.get(SCHEDULE), KernelSchedule)


def schedule_of(op: Operation) -> ScheduleAttr | None:
    """The op's `schedule` attribute, if it has one; anything else under that
    name is a `ScheduleError`."""
    attribute = op.attributes.get(SCHEDULE)
    if attribute is None or isinstance(attribute, ScheduleAttr):
        return attribute
    raise ScheduleError(f"{describe(op)}: '{SCHEDULE}' must be a #loop.schedule, got {attribute}")


def parse_schedule(text: str) -> ScheduleAttr:
    """A `#loop.schedule<...>`'s text as the attribute (a `ScheduleError`
    if it is not one)."""
    from xdsl.context import Context
    from xdsl.dialects.builtin import Builtin
    from xdsl.parser import Parser
    from xdsl.utils.exceptions import ParseError

    from ember.dialects.loop import Loop

    context = Context()
    context.load_dialect(Builtin)
    context.load_dialect(Loop)
    try:
        attribute = Parser(context, text).parse_attribute()
    except (ParseError, VerifyException) as error:
        raise ScheduleError(f"not a #loop.schedule: {text} ({first_line(error)})") from None
    if not isinstance(attribute, ScheduleAttr):
        raise ScheduleError(f"not a #loop.schedule: {text}")
    return attribute


def set_schedule(op: Operation, schedule: ScheduleAttr) -> None:
    """Attaches `schedule` to `op`, one of the `STRUCTURED_OPS`, after checking
    that it fits the op (`ScheduleError` if not)."""
    if not isinstance(op, STRUCTURED_OPS):
        raise ScheduleError(f"{describe(op)}: only structured ops take a schedule")
    verify_schedule(schedule, iteration_space(op), describe(op))
    op.attributes[SCHEDULE] = schedule


# ------------------------------------------------------ the default


def default_loop_order(space: IterationSpace) -> list[int]:
    """The loop nest's dims, outermost first: the declared order, except that
    the output's last (contiguous) dim moves inside the reduction dims.

    `C[m, n] += A[m, k] * B[k, n]` then runs as m, k, n: the innermost loop
    walks C and B contiguously and carries no reduction, so LLVM vectorises
    it. Each output element still sees its reduction terms in the same order,
    so results are unchanged bit for bit.
    """
    dims = list(range(len(space.iterators)))
    if REDUCTION not in space.iterators or not space.output_maps:
        return dims
    results = space.output_maps[0].results
    last = results[-1] if results else None
    if not isinstance(last, AffineDimExpr) or space.iterators[last.position] != PARALLEL:
        return dims
    return [d for d in dims if d != last.position] + [last.position]


def default_schedule(space: IterationSpace) -> ScheduleAttr:
    """Today's heuristic: `default_loop_order`, no tiles, every parallel dim's
    loop parallel, no unrolling, no vector hint."""
    parallel = [d for d, kind in enumerate(space.iterators) if kind == PARALLEL]
    return ScheduleAttr(default_loop_order(space), parallel=parallel)


def op_schedule(op: Operation, space: IterationSpace) -> ScheduleAttr:
    """The schedule `op` runs with: its own (checked against `space`, its
    iteration space) or else the default."""
    schedule = schedule_of(op)
    if schedule is None:
        return default_schedule(space)
    verify_schedule(schedule, space, describe(op))
    return schedule


__all__ = [
    "KernelSchedule",
    "parse_fields",
    "has_kernel_schedule",
    "PARALLEL",
    "SCHEDULE",
    "STRUCTURED_OPS",
    "StructuredOp",
    "VECTOR_READ_STRIDES",
    "NO_UNROLL",
    "VECTOR_WIDTH",
    "IterationSpace",
    "MicroKernel",
    "ScheduleAttr",
    "ScheduleError",
    "default_loop_order",
    "default_schedule",
    "depends_on",
    "is_projected_permutation",
    "linear_coefficients",
    "map_depends_on",
    "micro_problem",
    "pack_problem",
    "product_operands",
    "read_stride",
    "widened_product",
    "iteration_space",
    "op_schedule",
    "overlap_vectors",
    "parse_schedule",
    "schedule_of",
    "set_schedule",
    "verify_schedule",
]
