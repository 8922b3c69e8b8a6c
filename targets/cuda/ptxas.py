"""PTX to a cubin with NVIDIA's `ptxas`, and what it says each kernel uses.

`assemble(ptx, arch)` runs `ptxas -arch=<arch> -v` (the CUDA toolkit's
assembler, found on PATH) and returns a `PtxasReport`: the cubin and, per
function, the registers, shared memory, stack frame, spill stores and
loads and barriers that `-v` reports. When ptxas rejects the PTX, a
`PtxasError` names the kernel holding the first error (from the PTX line
number ptxas gives) and quotes ptxas's message; when there is no ptxas, a
one-line `PtxasError` says so (`ptxas_path()` asks without raising).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

from ember.targets.cuda.errors import PtxasError

PTXAS_TIMEOUT_S = 300

_FUNCTION = re.compile(r"^\s*(?:\.visible\s+|\.weak\s+)?(?:\.entry|\.func)\s.*?([\w$.]+)\s*\(")
_ERROR = re.compile(r"^ptxas\s+(?:.*?), line (\d+); error\s*:\s*(.*)$")
_NAMED = re.compile(r"(?:Compiling entry function|Function properties for) '?([\w$.]+)'?")
_COUNTS: dict[str, re.Pattern[str]] = {
    "stack_bytes": re.compile(r"(\d+) bytes stack frame"),
    "spill_stores": re.compile(r"(\d+) bytes spill stores"),
    "spill_loads": re.compile(r"(\d+) bytes spill loads"),
    "registers": re.compile(r"Used (\d+) registers"),
    "barriers": re.compile(r"used (\d+) barriers"),
    "shared_bytes": re.compile(r"(\d+) bytes smem"),
}
"""Each `KernelResources` field and the `-v` phrase that gives it."""


@dataclass(frozen=True)
class KernelResources:
    """What ptxas reports for one function (0 where it says nothing)."""

    name: str
    registers: int = 0
    shared_bytes: int = 0
    stack_bytes: int = 0
    spill_stores: int = 0
    spill_loads: int = 0
    barriers: int = 0


@dataclass(frozen=True)
class PtxasReport:
    """The cubin of one PTX module for `arch` and each function's resources."""

    arch: str
    cubin: bytes
    kernels: dict[str, KernelResources] = field(default_factory=dict[str, KernelResources])


def ptxas_path() -> str | None:
    """The path of `ptxas` on PATH, or None."""
    return shutil.which("ptxas")


def find_ptxas() -> str:
    """The path of `ptxas` on PATH, or a `PtxasError` saying it is missing."""
    found = ptxas_path()
    if found is None:
        raise PtxasError(
            "ptxas not found on PATH (it comes with the CUDA toolkit, or the "
            "nvidia-cuda-nvcc wheel)"
        )
    return found


def parse_resources(log: str) -> dict[str, KernelResources]:
    """Each function's resources from ptxas's `-v` output, by name."""
    found: dict[str, KernelResources] = {}
    current: str | None = None
    for line in log.splitlines():
        named = _NAMED.search(line)
        if named:
            current = named.group(1)
            found.setdefault(current, KernelResources(current))
        if current is None:
            continue
        counts = {name: int(m.group(1)) for name, pattern in _COUNTS.items()
                  if (m := pattern.search(line))}  # fmt: skip
        if counts:
            found[current] = replace(found[current], **counts)
    return found


def _function_at(ptx: str, line_number: int) -> str | None:
    """The function (`.entry` or `.func`) whose text holds PTX line `line_number`."""
    function = None
    for line in ptx.splitlines()[:line_number]:
        started = _FUNCTION.match(line)
        if started:
            function = started.group(1)
    return function


def _rejection(ptx: str, arch: str, log: str) -> PtxasError:
    """The error for a failed run: the kernel holding the first error, and its message."""
    errors = [(int(m.group(1)), m.group(2).strip()) for line in log.splitlines()
              if (m := _ERROR.match(line.strip()))]  # fmt: skip
    if not errors:
        first = next((line.strip() for line in log.splitlines() if line.strip()), "no message")
        return PtxasError(f"ptxas -arch={arch} rejected the PTX: {first}")
    line_number, message = errors[0]
    function = _function_at(ptx, line_number)
    where = f"kernel {function!r}" if function else "the PTX"
    more = f" (and {len(errors) - 1} more errors)" if len(errors) > 1 else ""
    return PtxasError(
        f"ptxas -arch={arch} rejected {where}: PTX line {line_number}: {message}{more}"
    )


def assemble(ptx: str, arch: str = "sm_90") -> PtxasReport:
    """Assemble `ptx` for compute capability `arch` (`sm_80`, `sm_90`, ...)
    with `ptxas -v`; a `PtxasError` if ptxas is missing or rejects it."""
    ptxas = find_ptxas()
    with tempfile.TemporaryDirectory(prefix="ember-ptxas-") as folder:
        source, cubin = Path(folder) / "kernels.ptx", Path(folder) / "kernels.cubin"
        source.write_text(ptx)
        try:
            run = subprocess.run(
                [ptxas, f"-arch={arch}", "-v", "-o", str(cubin), str(source)],
                capture_output=True, text=True, timeout=PTXAS_TIMEOUT_S, check=False,
            )  # fmt: skip
        except subprocess.TimeoutExpired as error:
            raise PtxasError(f"ptxas -arch={arch} ran over {PTXAS_TIMEOUT_S} s") from error
        log = run.stdout + run.stderr
        if run.returncode != 0:
            raise _rejection(ptx, arch, log)
        return PtxasReport(arch, cubin.read_bytes(), parse_resources(log))


__all__ = [
    "KernelResources",
    "PtxasReport",
    "assemble",
    "find_ptxas",
    "parse_resources",
    "ptxas_path",
]
