"""The Ember NPU as data (docs/npu-isa.md is its specification): what the
`npu` dialect's verifiers, the assembler and the simulator share.

- `NpuParams`: the machine's sizes (matrix unit, scratchpad, accumulator,
  DRAM, DMA) and what follows from them (lines, rows, banks).
- `FORMATS`: per opcode its mnemonic, the module that runs it and its
  fields with their widths, in encoding order.
- `Instruction`: one instruction as plain data (mnemonic, field values as
  unsigned ints or, for signed fields, ints; the four dependency flags).
- `check_instruction` and `check_program`: the hardware's limits (sizes at
  most `dim`, addresses inside the memories and aligned, an operand in one
  bank, element types where they may be) and the dependency tokens (each
  module's flags, every pop fed by a push, no token left over, no
  deadlock), as `NpuProgramError`s naming the instruction.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ember.errors import EmberError

INSTRUCTION_BYTES = 16
FIELDS_START = 16
"""The first bit of an instruction's fields (after opcode, flags, reserved)."""
FLAGS = ("pop_prev", "pop_next", "push_prev", "push_next")
"""The dependency flags, at bits 8-11."""

MODULES = ("load", "compute", "store")
MAX_STRIDE = (1 << 16) - 1
"""The DMA's row stride is 16 bits: a matrix row of more bytes cannot move."""


class NpuProgramError(EmberError):
    """A program that breaks the machine's limits or its dependency rules."""


@dataclass(frozen=True)
class ElementType:
    code: int
    name: str
    bytes: int


ELEMENT_TYPES = (ElementType(0, "int8", 1), ElementType(1, "bf16", 2), ElementType(2, "f32", 4),
                 ElementType(3, "int32", 4))  # fmt: skip
INT8, BF16, F32, INT32 = ELEMENT_TYPES
SCRATCHPAD_TYPES = frozenset({INT8.code, BF16.code, F32.code})
ACCUMULATOR_TYPES = frozenset({F32.code, INT32.code})

ALU_OPS = ("add", "sub", "mul", "max", "min", "relu", "shift", "move")


@dataclass(frozen=True)
class NpuParams:
    """The machine's sizes (docs/npu-isa.md, "Parameters")."""

    dim: int = 16
    scratchpad_bytes: int = 256 * 1024
    scratchpad_banks: int = 4
    accumulator_bytes: int = 64 * 1024
    dram_bytes: int = 1 << 32
    dma_bytes_per_cycle: int = 16
    dma_latency: int = 64

    @property
    def scratchpad_lines(self) -> int:
        """SP addresses: lines of `dim` bytes."""
        return self.scratchpad_bytes // self.dim

    @property
    def bank_lines(self) -> int:
        return self.scratchpad_lines // self.scratchpad_banks

    @property
    def accumulator_rows(self) -> int:
        """ACC addresses: rows of `dim` 32-bit values."""
        return self.accumulator_bytes // (4 * self.dim)


@dataclass(frozen=True)
class Field:
    name: str
    bits: int
    signed: bool = False


@dataclass(frozen=True)
class Format:
    opcode: int
    mnemonic: str
    module: str | None
    """The module that runs it (None: `finish`, which ends them all)."""
    fields: tuple[Field, ...]


def _fields(*specs: tuple[str, int] | tuple[str, int, bool]) -> tuple[Field, ...]:
    return tuple(Field(*spec) for spec in specs)


_SIZES = (("rows", 6), ("cols", 6))
FORMATS: dict[int, Format] = {f.opcode: f for f in (
    Format(0x10, "load", "load", _fields(("dram_addr", 32), ("stride", 16), ("local", 16),
                                         *_SIZES, ("to_acc", 1), ("elem", 2))),
    Format(0x11, "load_strided", "load", _fields(("dram_addr", 32), ("stride", 16),
                                                 ("local", 16), *_SIZES, ("to_acc", 1),
                                                 ("elem", 2), ("step", 8))),
    Format(0x20, "store", "store", _fields(("dram_addr", 32), ("stride", 16), ("local", 16),
                                           *_SIZES, ("from_acc", 1), ("elem", 2))),
    Format(0x21, "config_store", "store", _fields(("scale", 32), ("zero_point", 8, True),
                                                  ("relu", 1))),
    Format(0x30, "gemm", "compute", _fields(("a", 16), ("b", 16), ("c", 16), ("m", 6), ("k", 6),
                                            ("n", 6), ("accumulate", 1), ("elem", 2))),
    Format(0x40, "alu", "compute", _fields(("op", 4), ("src", 16), ("src2", 16), ("dst", 16),
                                           *_SIZES, ("use_imm", 1), ("elem", 2), ("imm", 32))),
    Format(0x7F, "finish", None, ()),
)}  # fmt: skip
BY_MNEMONIC = {f.mnemonic: f for f in FORMATS.values()}
LOADS = ("load", "load_strided")
"""The load module's DMA instructions (a strided one takes every `step`-th element)."""


def element_step(inst: Instruction) -> int:
    """Elements between a DMA row's consecutive elements in DRAM (1: dense)."""
    return inst["step"] if inst.mnemonic == "load_strided" else 1


for _format in FORMATS.values():
    assert FIELDS_START + sum(f.bits for f in _format.fields) <= 8 * INSTRUCTION_BYTES


def f32_bits(value: float) -> int:
    """The bits of `value` as an IEEE single (the `scale` and `imm` fields)."""
    return int.from_bytes(struct.pack("<f", value), "little")


def bits_f32(bits: int) -> float:
    return float(struct.unpack("<f", bits.to_bytes(4, "little"))[0])


@dataclass(frozen=True)
class Instruction:
    mnemonic: str
    fields: Mapping[str, int] = field(default_factory=dict)
    flags: frozenset[str] = frozenset()

    @property
    def format(self) -> Format:
        return BY_MNEMONIC[self.mnemonic]

    def __getitem__(self, name: str) -> int:
        return self.fields[name]

    def describe(self) -> str:
        """`gemm a=0 b=64 ... [pop_prev]`, as messages name it."""
        values = " ".join(f"{f.name}={self.fields[f.name]}" for f in self.format.fields)
        flags = "".join(f" [{f}]" for f in FLAGS if f in self.flags)
        return f"{self.mnemonic}{' ' if values else ''}{values}{flags}"


# ---------------------------------------------------------------- limits


def _element(code: int) -> ElementType:
    return ELEMENT_TYPES[code]


def _sizes(inst: Instruction, names: Sequence[str], params: NpuParams) -> list[str]:
    return [f"{name} = {inst[name]} is not in 1..{params.dim}" for name in names
            if not 1 <= inst[name] <= params.dim]  # fmt: skip


def _scratchpad(what: str, line: int, rows: int, elem: int, params: NpuParams) -> list[str]:
    """An SP operand of `rows` rows of type `elem` from `line`: aligned,
    inside SP and in one bank."""
    lines = _element(elem).bytes
    end = line + rows * lines
    if line % lines:
        return [f"{what} at SP line {line} is not aligned to its rows of {lines} lines"]
    if end > params.scratchpad_lines:
        return [f"{what} (SP lines {line}..{end - 1}) overflows the scratchpad "
                f"({params.scratchpad_lines} lines)"]  # fmt: skip
    if line // params.bank_lines != (end - 1) // params.bank_lines:
        return [f"{what} (SP lines {line}..{end - 1}) crosses a bank boundary (banks of "
                f"{params.bank_lines} lines)"]  # fmt: skip
    return []


def _accumulator(what: str, row: int, rows: int, params: NpuParams) -> list[str]:
    if row + rows > params.accumulator_rows:
        return [f"{what} (ACC rows {row}..{row + rows - 1}) overflows the accumulator "
                f"({params.accumulator_rows} rows)"]  # fmt: skip
    return []


def _dma(inst: Instruction, params: NpuParams, to_local: bool) -> list[str]:
    into_acc = inst["to_acc" if to_local else "from_acc"]
    problems = _sizes(inst, ("rows", "cols"), params)
    if problems:
        return problems
    elem = _element(inst["elem"])
    step = element_step(inst)
    if step < 1:
        return [f"step = {step}: a strided load takes every step-th element, step >= 1"]
    last = (inst["dram_addr"] + (inst["rows"] - 1) * inst["stride"]
            + ((inst["cols"] - 1) * step + 1) * elem.bytes)  # fmt: skip
    if last > params.dram_bytes:
        problems.append(f"DRAM bytes {inst['dram_addr']}..{last - 1} are outside DRAM")
    if into_acc:
        allowed = ACCUMULATOR_TYPES if to_local else {INT8.code, F32.code, INT32.code}
        if elem.code not in allowed:
            problems.append(f"elem {elem.name} with the accumulator")
        problems += _accumulator("the rows", inst["local"], inst["rows"], params)
    elif elem.code not in SCRATCHPAD_TYPES:
        problems.append(f"elem {elem.name} in the scratchpad")
    else:
        problems += _scratchpad("the rows", inst["local"], inst["rows"], elem.code, params)
    return problems


def _gemm(inst: Instruction, params: NpuParams) -> list[str]:
    problems = _sizes(inst, ("m", "k", "n"), params)
    if problems:
        return problems
    if inst["elem"] not in SCRATCHPAD_TYPES:
        return [f"elem {_element(inst['elem']).name} on the matrix unit"]
    return (_scratchpad("A", inst["a"], inst["m"], inst["elem"], params)
            + _scratchpad("B", inst["b"], inst["k"], inst["elem"], params)
            + _accumulator("C", inst["c"], inst["m"], params))  # fmt: skip


def _alu(inst: Instruction, params: NpuParams) -> list[str]:
    problems = _sizes(inst, ("rows", "cols"), params)
    if inst["op"] >= len(ALU_OPS):
        problems.append(f"op {inst['op']} is not one of 0..{len(ALU_OPS) - 1}")
    if inst["elem"] not in ACCUMULATOR_TYPES:
        problems.append(f"elem {_element(inst['elem']).name} on the vector unit")
    elif inst["op"] == ALU_OPS.index("shift") and inst["elem"] != INT32.code:
        problems.append("shift of f32")
    if problems:
        return problems
    operands = [("src", inst["src"]), ("dst", inst["dst"])]
    if not inst["use_imm"]:
        operands.append(("src2", inst["src2"]))
    return [p for name, row in operands for p in _accumulator(name, row, inst["rows"], params)]


_CHECKS = {"load": lambda i, p: _dma(i, p, True), "load_strided": lambda i, p: _dma(i, p, True),
           "store": lambda i, p: _dma(i, p, False),
           "gemm": _gemm, "alu": _alu}  # fmt: skip


_FORBIDDEN_FLAGS: dict[str | None, frozenset[str]] = {
    "load": frozenset({"pop_prev", "push_prev"}), "store": frozenset({"pop_next", "push_next"}),
    None: frozenset(FLAGS)}  # fmt: skip
"""The flags a module's instructions cannot carry (it has no module on that side)."""


def _flags(inst: Instruction) -> list[str]:
    module = inst.format.module
    forbidden = _FORBIDDEN_FLAGS.get(module, frozenset()) & inst.flags
    return [f"{flag} on a {module or 'finish'} instruction" for flag in FLAGS
            if flag in forbidden]  # fmt: skip


def check_instruction(inst: Instruction, params: NpuParams, index: int = 0) -> None:
    """Raises an NpuProgramError naming instruction `index` if it breaks a limit."""
    check = _CHECKS.get(inst.mnemonic)
    problems = _flags(inst) + (check(inst, params) if check is not None else [])
    if problems:
        raise NpuProgramError(f"instruction {index} ({inst.describe()}): {'; '.join(problems)}")


def queues_of(module: str) -> dict[str, tuple[str, str]]:
    """Each flag of `module`'s instructions as (queue, 'pop'/'push'), a queue
    named by its (from, to) modules."""
    position = MODULES.index(module)
    prev = MODULES[position - 1] if position > 0 else None
    after = MODULES[position + 1] if position + 1 < len(MODULES) else None
    result = {}
    if prev is not None:
        result["pop_prev"] = (f"{prev}->{module}", "pop")
        result["push_prev"] = (f"{module}->{prev}", "push")
    if after is not None:
        result["pop_next"] = (f"{after}->{module}", "pop")
        result["push_next"] = (f"{module}->{after}", "push")
    return result


Location = tuple[str, int]
"""A scratchpad line ("sp", line) or an accumulator row ("acc", row)."""

Span = tuple[str, int, int]
"""SP lines or ACC rows [start, stop): ("sp" | "acc", start, stop)."""


def access_spans(inst: Instruction) -> tuple[list[Span], list[Span]]:
    """The SP lines and ACC rows `inst` reads and writes, as spans."""

    def sp(line: int, rows: int, elem: int) -> Span:
        return ("sp", line, line + rows * ELEMENT_TYPES[elem].bytes)

    def acc(row: int, rows: int) -> Span:
        return ("acc", row, row + rows)

    name = inst.mnemonic
    if name in (*LOADS, "store"):
        into_acc = inst["to_acc" if name in LOADS else "from_acc"]
        rows = acc(inst["local"], inst["rows"]) if into_acc else \
            sp(inst["local"], inst["rows"], inst["elem"])  # fmt: skip
        return ([], [rows]) if name in LOADS else ([rows], [])
    if name == "gemm":
        c = acc(inst["c"], inst["m"])
        reads = [sp(inst["a"], inst["m"], inst["elem"]), sp(inst["b"], inst["k"], inst["elem"])]
        return ([*reads, c] if inst["accumulate"] else reads), [c]
    if name == "alu":
        reads = [acc(inst["src"], inst["rows"])]
        if not inst["use_imm"]:
            reads.append(acc(inst["src2"], inst["rows"]))
        return reads, [acc(inst["dst"], inst["rows"])]
    return [], []


def accesses(inst: Instruction) -> tuple[set[Location], set[Location]]:
    """The SP lines and ACC rows `inst` reads and writes."""
    reads, writes = access_spans(inst)
    return ({(m, i) for m, a, b in reads for i in range(a, b)},
            {(m, i) for m, a, b in writes for i in range(a, b)})  # fmt: skip


class _Locations:
    """Per SP line and ACC row (as ints: ACC row R after the program's last
    SP line), its last writer and, per module, its latest reader since: the
    module, its count at the access and the instruction (NumPy arrays, so an
    instruction's spans are checked and updated a slice at a time)."""

    def __init__(self, spans: Sequence[tuple[list[Span], list[Span]]], modules: int):
        ends = {"sp": 1, "acc": 1}
        for reads, writes in spans:
            for memory, _, stop in (*reads, *writes):
                ends[memory] = max(ends[memory], stop)
        self.acc_base = ends["sp"]
        size = ends["sp"] + ends["acc"]
        self.writer_module = np.full(size, -1, np.int64)
        self.writer_count = np.zeros(size, np.int64)
        self.writer_index = np.zeros(size, np.int64)
        self.reader_count = np.zeros((modules, size), np.int64)
        self.reader_index = np.zeros((modules, size), np.int64)

    def where(self, location: int) -> str:
        return (f"ACC row {location - self.acc_base}" if location >= self.acc_base
                else f"SP line {location}")  # fmt: skip

    def bounds(self, span: Span) -> tuple[int, int]:
        memory, start, stop = span
        base = self.acc_base if memory == "acc" else 0
        return base + start, base + stop

    def unordered_writer(self, lo: int, hi: int, me: int, clock: np.ndarray) -> int | None:
        """The first location in [lo, hi) last written by another module in
        an instruction `clock` does not follow, else None."""
        module = self.writer_module[lo:hi]
        bad = (module >= 0) & (module != me) & (clock[module] < self.writer_count[lo:hi])
        first = int(bad.argmax())  # one pass over the span, not any() and then argmax()
        return lo + first if bad[first] else None

    def unordered_reader(self, lo: int, hi: int, me: int, clock: np.ndarray) -> tuple[int, int] | None:  # fmt: skip
        """(location, module) of the first read in [lo, hi) by another module
        in an instruction `clock` does not follow, else None."""
        bad = self.reader_count[:, lo:hi] > clock[:, None]
        bad[me] = False
        columns = bad.any(axis=0)
        first = int(columns.argmax())
        if not columns[first]:
            return None
        return lo + first, int(bad[:, first].argmax())


def run_order(program: Sequence[Instruction], hazards: bool = True) -> list[int]:
    """An order the modules can run the program in (each module in its own
    order, an instruction once its pops have tokens), checking the tokens on
    the way: a pop no push feeds is a deadlock, a token left at the end an
    error, and two instructions of different modules that touch the same SP
    line or ACC row (one of them writing it) must be ordered by tokens: a
    hazard is an error naming both.

    Each instruction gets a vector clock (per module, how many of its
    instructions happen before it or are it) through the tokens it pops;
    instruction e of module M is ordered before one whose clock is t iff
    t[M] >= e's own count. Per location the last writer and, per module,
    the latest reader since that write are enough to find every hazard
    (`_Locations`). With `hazards=False` only the tokens are checked (no
    deadlock, none left over), at a third of the cost."""
    count = len(MODULES)
    module_of = {m: i for i, m in enumerate(MODULES)}
    streams: list[list[int]] = [[] for _ in MODULES]
    for i, inst in enumerate(program):
        if inst.format.module is not None:
            streams[module_of[inst.format.module]].append(i)
    no_access: tuple[list[Span], list[Span]] = ([], [])
    spans = [access_spans(inst) for inst in program] if hazards else [no_access] * len(program)
    places = _Locations(spans, count)
    heads = [0] * count
    tokens: dict[str, list[tuple[int, ...]]] = {}
    clocks = [[0] * count for _ in MODULES]
    order: list[int] = []
    flag_queues = [queues_of(m) for m in MODULES]

    def hazard(earlier: int, later: int, location: int, what: str) -> NpuProgramError:
        return NpuProgramError(
            f"instruction {later} ({program[later].describe()}) {what} {places.where(location)}, "
            f"which instruction {earlier} ({program[earlier].describe()}) uses, with no token "
            "between them: a dependency is missing")  # fmt: skip

    progress = True
    while progress:
        progress = False
        for me in range(count):
            queues = flag_queues[me]
            clock = clocks[me]
            stream = streams[me]
            while heads[me] < len(stream):
                index = stream[heads[me]]
                inst = program[index]
                pops = [queues[f][0] for f in FLAGS if f in inst.flags and queues[f][1] == "pop"]
                if any(not tokens.get(q) for q in pops):
                    break
                for queue in pops:
                    given = tokens[queue].pop(0)
                    for m in range(count):
                        if given[m] > clock[m]:
                            clock[m] = given[m]
                clock[me] += 1
                mine = clock[me]
                now = np.array(clock, np.int64)
                read_spans, write_spans = spans[index]
                for span in read_spans:
                    lo, hi = places.bounds(span)
                    found = places.unordered_writer(lo, hi, me, now)
                    if found is not None:
                        raise hazard(int(places.writer_index[found]), index, found, "reads")
                    places.reader_count[me, lo:hi] = mine
                    places.reader_index[me, lo:hi] = index
                for span in write_spans:
                    lo, hi = places.bounds(span)
                    found = places.unordered_writer(lo, hi, me, now)
                    if found is not None:
                        raise hazard(int(places.writer_index[found]), index, found, "writes")
                    reader = places.unordered_reader(lo, hi, me, now)
                    if reader is not None:
                        location, module = reader
                        raise hazard(int(places.reader_index[module, location]), index, location,
                                     "writes")  # fmt: skip
                    places.reader_count[:, lo:hi] = 0
                    places.writer_module[lo:hi] = me
                    places.writer_count[lo:hi] = mine
                    places.writer_index[lo:hi] = index
                snapshot = None
                for flag in FLAGS:
                    if flag in inst.flags and queues[flag][1] == "push":
                        snapshot = snapshot or tuple(clock)
                        tokens.setdefault(queues[flag][0], []).append(snapshot)
                order.append(index)
                heads[me] += 1
                progress = True
    stuck = [streams[m][heads[m]] for m in range(count) if heads[m] < len(streams[m])]
    if stuck:
        index = min(stuck)
        raise NpuProgramError(f"instruction {index} ({program[index].describe()}) waits for a "
                              "token that no instruction gives: the program deadlocks")  # fmt: skip
    left = {q: len(queued) for q, queued in tokens.items() if queued}
    if left:
        listing = ", ".join(f"{n} on {q}" for q, n in sorted(left.items()))
        raise NpuProgramError(f"tokens left at finish: {listing} (every push needs its pop)")
    return order


def check_program(program: Sequence[Instruction], params: NpuParams) -> list[int]:
    """Every instruction within the limits, `finish` last, and the tokens
    consistent and sufficient; returns `run_order`'s order."""
    if not program or program[-1].mnemonic != "finish":
        raise NpuProgramError("an NPU program ends in finish")
    for index, inst in enumerate(program):
        if inst.mnemonic == "finish" and index != len(program) - 1:
            raise NpuProgramError(f"instruction {index}: finish before the end of the program")
        check_instruction(inst, params, index)
    return run_order(program)


__all__ = ["ALU_OPS", "BY_MNEMONIC", "ELEMENT_TYPES", "FIELDS_START", "FLAGS", "FORMATS", "Format",
           "INSTRUCTION_BYTES", "Instruction", "LOADS", "MAX_STRIDE", "element_step", "NpuParams", "NpuProgramError", "bits_f32",
           "MODULES", "access_spans", "accesses", "check_instruction", "check_program", "f32_bits", "queues_of",
           "run_order"]  # fmt: skip
