"""What a target is: the one interface every `targets/<name>/` package
provides, so that nothing above the targets tests a target's name.

A target takes a model at the `graph` level (imported, shapes inferred)
and makes something that runs: it owns its pass pipeline from there down,
the pass that writes its default schedules into the IR, the way it takes
over a `loop.kernel` (an outlined function, a GPU kernel and its launch, a
program for a device), its runtime (load, buffers, run) and its deploy
writer (`ember compile --target NAME -o DIR`). `targets/registry.py` holds
the table of targets by name; `ember.compile`, the CLI and the ONNX backend
look a target up there. A target never imports another target (a target
that runs part of a model on the host is given the host target: the NPU's
`host`). docs/adding-a-target.md has the recipe.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar, Protocol

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from ember.errors import EmberError
from ember.options import Options
from ember.report import CompileReport
from ember.targets.versions import Specialize


class Deployment(Protocol):
    """What a deploy writer wrote."""

    @property
    def files(self) -> Sequence[Path]:
        """Every file written, the ones a user opens first (library, header,
        manifest) included."""
        ...


class Target(ABC):
    """A compilation target (see the module docstring)."""

    name: ClassVar[str]
    """The name `--target` and `ember.compile(..., target=)` take."""
    summary: ClassVar[str]
    """One line: what the target runs on, for `--help` and errors."""
    kernel_form: ClassVar[str]
    """How the target takes over a `loop.kernel`, in a few words."""
    onnx_device: ClassVar[str | None] = None
    """The device name ONNX's backend API gives this target (`CPU`), if any."""
    versions: ClassVar[bool] = False
    """Whether models with symbolic dims compile for this target (a generic
    version, and static versions per `specialize`)."""
    cycle_model: ClassVar[bool] = False
    """Whether the target's performance comes from a cycle model
    (`performance_table`, which `ember bench` prints) rather than timed runs."""
    check_against_reference: ClassVar[bool] = False
    """Whether `ember run --check` also compares with the reference
    interpreter (a simulated device whose numerics are its own)."""
    emulates: ClassVar[bool] = False
    """Whether `compile` with `Options.emulate` runs the target's device code
    on this CPU instead of on the device (`ember run|bench --emulate`); a
    target without an emulation takes no `--emulate`."""

    @abstractmethod
    def pipeline(self, options: Options) -> list[tuple[str, ModulePass]]:
        """The target's passes from `graph` IR down, as (stage, pass) pairs
        in order: what `compile` runs, each pass registered for `ember-opt`."""

    @abstractmethod
    def default_schedule(self) -> ModulePass:
        """The pass that writes the target's default schedule on every
        structured op (or segment) that lacks one."""

    @abstractmethod
    def compile(self, module: ModuleOp, report: CompileReport, options: Options) -> Any:
        """`module` (graph IR, consumed) compiled and loaded: a model called
        with NumPy arrays (`targets/calls.py`'s contract)."""

    @abstractmethod
    def deploy(self, module: ModuleOp, out_dir: Path, name: str, options: Options,
               report: CompileReport, specialize: Specialize) -> Deployment:  # fmt: skip
        """`module` compiled ahead of time into `out_dir`, files named after `name`."""

    def prepare_output(self, out_dir: Path, name: str) -> Path:
        """`out_dir`, made and checked writable, with `name` checked for
        naming the deployed files: done before the model is imported, so a
        mistake costs no compile."""
        return writable_directory(out_dir, name)

    def jit(self, module: ModuleOp) -> Any:
        """An `llvm`-dialect module compiled into this process, giving ctypes
        functions by `function(name, restype, argtypes)`: what a host target
        (the CPU) does for a target that runs its code on this machine (the
        GPU's emulation)."""
        raise EmberError(f"the {self.name} target does not compile code into this process")

    def performance_table(self, compiled: Any) -> str | None:
        """A table of the compiled model's performance that the target knows
        without a clock (a cycle model's), which `ember bench` prints instead
        of timing runs; None where the model is timed."""
        return None

    def dry_run_table(
        self, module: ModuleOp, report: CompileReport, options: Options
    ) -> str | None:
        """`module` (graph IR, consumed) compiled for the device and checked
        by the device's own tools without running it, as a table of what each
        kernel launch uses (`ember bench --dry-run`); None, with `module`
        untouched, for a target that has no such check."""
        return None


class HostedTarget(Target):
    """A target that runs part of its work on another target, its `host`
    (the NPU's host ops, the CUDA target's emulation on the CPU), given when
    the table builds it: a target never imports another."""

    def __init__(self, host: Target):
        self.host = host


def writable_directory(out_dir: Path, name: str) -> Path:
    """`out_dir`, made if missing, after checking that a file named after
    `name` can be written in it (an EmberError naming the directory if not)."""
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        probe = out_dir / f".{name}.probe"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as error:
        raise EmberError(
            f"{out_dir}: cannot write the output directory: {error.strerror}"
        ) from None
    return out_dir


__all__ = ["Deployment", "HostedTarget", "Target", "writable_directory"]
