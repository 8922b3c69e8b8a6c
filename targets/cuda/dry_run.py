"""The dry run's table: each kernel launch of a plan with what ptxas says
its kernel uses, for `ember bench --target cuda --dry-run` (no GPU needed).

`launch_table(plan, report)` has one row per launch, in the plan's order:
the kernel, its grid and block sizes, and from ptxas's `-v` report its
registers per thread, static shared memory in bytes and spill stores and
loads in bytes; then a summary line: distinct kernels, launches, the most
registers of a kernel and the spill bytes of every kernel together (each
kernel counted once, however often it is launched).
"""

from __future__ import annotations

from ember.targets.cuda.errors import PtxasError
from ember.targets.cuda.launch_plan import LaunchPlan
from ember.targets.cuda.ptxas import KernelResources, PtxasReport

HEADER = ("kernel", "grid", "block", "registers", "shared B", "spill st/ld B")


def _dims(sizes: tuple[int, int, int]) -> str:
    return "x".join(str(size) for size in sizes)


def _resources(report: PtxasReport, kernel: str) -> KernelResources:
    """What ptxas reported for `kernel`; a `PtxasError` if it said nothing of it."""
    found = report.kernels.get(kernel)
    if found is None:
        raise PtxasError(f"ptxas -arch={report.arch} reported no resources for kernel {kernel!r}")
    return found


def launch_table(plan: LaunchPlan, report: PtxasReport) -> str:
    """The table (see the module docstring), without a trailing newline; a
    `PtxasError` for a launched kernel that ptxas reported nothing of."""
    kernels = {name: _resources(report, name)
               for name in dict.fromkeys(launch.kernel for launch in plan.launches)}  # fmt: skip
    rows = [HEADER]
    for launch in plan.launches:
        used = kernels[launch.kernel]
        rows.append((launch.kernel, _dims(launch.grid), _dims(launch.block),
                     str(used.registers), str(used.shared_bytes),
                     f"{used.spill_stores}/{used.spill_loads}"))  # fmt: skip
    widths = [max(len(row[column]) for row in rows) for column in range(len(HEADER))]
    lines = [
        "  " + "  ".join(cell.ljust(w) if column == 0 else cell.rjust(w)
                         for column, (cell, w) in enumerate(zip(row, widths))).rstrip()
        for row in rows
    ]  # fmt: skip
    registers = max((k.registers for k in kernels.values()), default=0)
    spills = sum(k.spill_stores + k.spill_loads for k in kernels.values())
    lines.append(
        f"  {len(kernels)} kernel(s), {len(plan.launches)} launch(es), at most {registers} "
        f"registers, {spills} spill bytes (ptxas -arch={report.arch})"
    )
    return "\n".join(lines)


__all__ = ["HEADER", "launch_table"]
