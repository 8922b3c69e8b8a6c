"""What the explorer keeps while a target's pipeline runs: a
`PassObserver` (`ember/report.py`) shown the module around every pass.

After each pass: the IR as text (large constants elided), compared with
the text before it (`ir_diff.py`) and kept only as the rows a report
shows. Along the way: the graph as imported and as last seen at the graph
level (after optimisation), each kernel function's schedules (while its
structured ops still carry them), the memory plan (just before
`loop-plan-memory`), each kernel's loop IR and the calls of the entry
function (just before `convert-loop-to-llvm`) and each kernel's LLVM IR
(after it).
"""

from __future__ import annotations

import io
import re
import time
from dataclasses import dataclass, field

from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Operation

from ember.dialects.graph import FusedOp, GraphOp
from ember.dialects.loop import KERNEL_ATTR
from ember.dialects.npu.segment import SegmentOp
from ember.explore.graph_model import Graph, graph_of
from ember.explore.ir_diff import Row, changed_lines, shown_rows
from ember.explore.kernel_map import kernel_calls, map_kernels
from ember.explore.memory_plan import MemoryPlan, memory_plan
from ember.printing import DEFAULT_ELISION_LIMIT, make_printer

PASS_LINES = 400
"""Lines of IR shown per pass (see `ir_diff.shown_rows`)."""

KERNEL_LINES = 300
"""Lines of a kernel's loop IR or LLVM IR kept."""

PLAN_MEMORY = "loop-plan-memory"
GRAPH_PASS_PREFIX = "graph-"
"""Passes of the graph level are named so; the graph after optimisation is
the one the last of them leaves."""
TO_LLVM = "convert-loop-to-llvm"


@dataclass(frozen=True)
class PassView:
    name: str
    rows: list[Row]
    note: str
    lines: int
    added: int
    removed: int
    seconds: float


@dataclass
class KernelCode:
    schedules: list[str] = field(default_factory=list)
    loop_ir: str = ""
    llvm_ir: str = ""


PRINTED_LINES = 200_000
"""Printing stops after this many lines: the rest of a huge module would
cost time and be cut from the report anyway."""


class _Enough(Exception):
    pass


class _LimitedStream(io.StringIO):
    def __init__(self, limit: int):
        super().__init__()
        self.lines_left = limit

    def write(self, text: str) -> int:
        self.lines_left -= text.count("\n")
        if self.lines_left < 0:
            raise _Enough
        return super().write(text)


def print_ir(op: Operation, limit: int = PRINTED_LINES) -> str:
    """`op` printed, large constants elided; at most `limit` lines, then a
    line that says the rest was not printed."""
    stream = _LimitedStream(limit)
    try:
        make_printer(stream, elide_limit=DEFAULT_ELISION_LIMIT).print_op(op)
    except _Enough:
        return stream.getvalue() + f"\n... printing stopped after {limit} lines ..."
    return stream.getvalue()


def bounded(text: str, limit: int = KERNEL_LINES) -> str:
    lines = text.splitlines()
    if len(lines) <= limit:
        return text
    return "\n".join([*lines[:limit], f"... {len(lines) - limit} more line(s) not shown ..."])


def is_graph_level(module: ModuleOp) -> bool:
    """Whether the entry function is still a graph: graph ops, fusion groups
    and NPU segments only, at its top level."""
    for op in module.ops:
        if isinstance(op, FuncOp) and not op.is_declaration and KERNEL_ATTR not in op.attributes:
            return all(isinstance(inner, GraphOp | FusedOp | SegmentOp | ReturnOp)
                       for inner in op.body.block.ops)  # fmt: skip
    return False


_SCHEDULE = re.compile(r"#(loop|npu)\.schedule<[^>]*>")


class Snapshots:
    """The `PassObserver` that collects what the report shows."""

    def __init__(self, pass_lines: int = PASS_LINES):
        self.pass_lines = pass_lines
        self.passes: list[PassView] = []
        self.graph_before: Graph | None = None
        self.graph_after: Graph | None = None
        self.kernels: dict[str, KernelCode] = {}
        self.call_order: list[str] = []
        self.memory: MemoryPlan | None = None
        self._previous: list[str] = []
        self._started = 0.0

    def start(self, module: ModuleOp) -> None:
        """The module as imported, before the first pass."""
        self.graph_before = graph_of(module)
        self._previous = print_ir(module).splitlines()

    def before(self, pass_name: str, module: ModuleOp) -> None:
        if not self._previous:
            self.start(module)
        if pass_name == PLAN_MEMORY:
            self.memory = memory_plan(module)
        if pass_name == TO_LLVM:
            self._read_kernels(module)
        self._started = time.perf_counter()

    def after(self, pass_name: str, module: ModuleOp) -> None:
        seconds = time.perf_counter() - self._started
        lines = print_ir(module).splitlines()
        changed, removed = changed_lines(self._previous, lines)
        rows, note = shown_rows(lines, changed, self.pass_lines)
        self.passes.append(PassView(pass_name, rows, note, len(lines), sum(changed), removed,
                                    seconds))  # fmt: skip
        self._previous = lines
        if pass_name.startswith(GRAPH_PASS_PREFIX) and is_graph_level(module):
            self.graph_after = graph_of(module)
        for func in module.ops:  # schedules: while a new kernel's ops still carry them
            if isinstance(func, FuncOp) and KERNEL_ATTR in func.attributes:
                if func.sym_name.data not in self.kernels:
                    schedules = [m.group(0) for m in _SCHEDULE.finditer(print_ir(func))]
                    self.kernels[func.sym_name.data] = KernelCode(schedules)
        if pass_name == TO_LLVM:
            self._read_llvm(module)

    def skipped(self, pass_name: str, reason: str) -> None:
        """A pass the report lists without its IR."""
        self.passes.append(PassView(pass_name, [], reason, 0, 0, 0, 0.0))

    def _read_kernels(self, module: ModuleOp) -> None:
        kernels = {op.sym_name.data: op for op in module.ops
                   if isinstance(op, FuncOp) and KERNEL_ATTR in op.attributes}  # fmt: skip
        entry = next((op for op in module.ops if isinstance(op, FuncOp)
                      and not op.is_declaration and KERNEL_ATTR not in op.attributes), None)  # fmt: skip
        for name, func in kernels.items():
            self.kernels.setdefault(name, KernelCode()).loop_ir = bounded(print_ir(func))
        if entry is None:
            return
        self.call_order = [c.callee.root_reference.data for c in kernel_calls(entry, kernels)]
        if self.graph_after is not None:
            for node_id, names in map_kernels(self.graph_after, entry, kernels).items():
                next(n for n in self.graph_after.nodes if n.id == node_id).kernels = names

    def _read_llvm(self, module: ModuleOp) -> None:
        try:
            from ember.targets.cpu.llvm_module import to_llvmlite

            text = str(to_llvmlite(module))
        except Exception:  # noqa: BLE001 - a target whose llvm module the CPU's translation does not take
            return
        for match in re.finditer(r"^define [^@]*@\"?([\w.$]+)\"?\(.*?^}$", text, re.S | re.M):
            code = self.kernels.get(match.group(1))
            if code is not None:
                code.llvm_ir = bounded(match.group(0))


__all__ = ["KERNEL_LINES", "PASS_LINES", "KernelCode", "PassView", "Snapshots", "print_ir"]
