"""docs/gpu.md holds to the tree: every command it shows runs (in a scratch
folder, on the example models the scripts under tests/filecheck/tools/Inputs
write), its Python runs, and every excerpt marked `<!-- from: SOURCE -->`
is, line by line and in order, in what that source prints (`...` stands for
lines, or within a line for text, left out). A changed schedule, launch,
shared tile or barrier shows here as a failing line.

SOURCE is `FILE after PASS` (the IR after PASS of an `ember-opt` command of
the doc reading FILE), `file PATH` (a file the commands wrote) or `command
LINE` (the standard output of one of the doc's command lines); `, with
ptxas` marks an excerpt that exists only where ptxas is on PATH. Register
counts are compared only with the ptxas the doc names (13.0): another
version allocates differently.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from ember.dialects.ember_gpu import MAX_REGISTER_TILE, MAX_SHARED_BYTES, MAX_THREADS
from ember.lowering.loop_to_gpu import DEFAULT_THREADS
from ember.options import Options
from ember.targets.cuda import cuda_available
from ember.targets.cuda.default_schedule import (
    BLOCK,
    K_TILE,
    THREADS,
    TILED_FROM,
    WINDOW_OUTPUTS,
    WINDOW_THREADS,
)
from ember.targets.registry import target_named

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "gpu.md"
SCHEDULE_LIT = ROOT / "tests" / "filecheck" / "targets" / "cuda" / "gpu-default-schedule.mlir"
WINDOW_LIT = SCHEDULE_LIT.with_name("gpu-default-schedule-window.mlir")
PTXAS_VERSION = "release 13.0"
"""The ptxas whose register counts the doc shows."""

_BLOCK = re.compile(r"(?:<!-- from: (?P<source>.*?) -->\n)?```(?P<lang>\w*)\n(?P<body>.*?)```",
                    re.DOTALL)  # fmt: skip


@dataclass(frozen=True)
class Block:
    source: str | None
    lang: str
    body: str


def _blocks() -> list[Block]:
    return [Block(m["source"], m["lang"], m["body"]) for m in _BLOCK.finditer(DOC.read_text())]


def _ptxas() -> str | None:
    return shutil.which("ptxas")


def _ptxas_is_the_docs() -> bool:
    ptxas = _ptxas()
    if ptxas is None:
        return False
    version = subprocess.run([ptxas, "--version"], capture_output=True, text=True, check=False)
    return PTXAS_VERSION in version.stdout


def _needs_gpu(command: str) -> bool:
    words = command.split()
    return (words[:2] in (["ember", "run"], ["ember", "bench"]) and "--target" in words
            and "--emulate" not in words and "--dry-run" not in words)  # fmt: skip


def _dumps(stdout: str) -> dict[str, str]:
    """`--print-between-passes` output by pass."""
    parts = re.split(r"^IR after (\S+):$", stdout, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


@dataclass
class Run:
    """What the doc's commands printed and wrote, in `folder`."""

    folder: Path
    commands: dict[str, str] = field(default_factory=dict[str, str])
    ir: dict[tuple[str, str], str] = field(default_factory=dict[tuple[str, str], str])
    passes: dict[str, list[str]] = field(default_factory=dict[str, list[str]])
    printed: dict[str, str] = field(default_factory=dict[str, str])

    def record_opt(self, command: str, stdout: str) -> None:
        """The IR of each pass the command printed (its stderr's dumps with
        `--print-between-passes`) or of its last pass (its output)."""
        words = shlex.split(command)[1:]
        options_with_values = {"-p", "-o", "-t", "-f"}
        files = [w for i, w in enumerate(words)
                 if not w.startswith("-") and (i == 0 or words[i - 1] not in options_with_values)]  # fmt: skip
        source = files[0]
        if "--print-between-passes" in words:
            dumps = _dumps(stdout)
            self.passes[source] = list(dumps)
            for name, text in dumps.items():
                self.ir[(source, name)] = text
            return
        last = words[words.index("-p") + 1].split(",")[-1]
        if "-o" in words:
            stdout = (self.folder / words[words.index("-o") + 1]).read_text()
        self.ir[(source, last)] = stdout


def _shell(command: str, folder: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"]}
    return subprocess.run(["bash", "-c", command], cwd=folder, env=env, capture_output=True,
                          text=True, timeout=600, check=False)  # fmt: skip


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """Every command and Python block of the doc, in order, in one folder
    where `tests/` is the tree's."""
    folder = tmp_path_factory.mktemp("gpu_doc")
    (folder / "tests").symlink_to(ROOT / "tests")
    result = Run(folder)
    namespace: dict[str, object] = {}
    for block in _blocks():
        if block.lang == "sh":
            for line in block.body.splitlines():
                command = re.sub(r"\s+#\s.*$", "", line).strip()
                if not command:
                    continue
                done = _shell(command, folder)
                if _needs_gpu(command) and cuda_available() is not None:
                    assert done.returncode == 1, command
                    assert done.stderr.strip().splitlines()[-1].startswith("error: "), done.stderr
                    assert "--emulate" in done.stderr, done.stderr
                    continue
                if "--dry-run" in command and _ptxas() is None:
                    assert done.returncode == 1 and "ptxas not found" in done.stderr
                    continue
                assert done.returncode == 0, f"{command}\n{done.stderr}"
                result.commands[command] = done.stdout
                if command.startswith("ember-opt "):
                    # The IR between passes is dumped on stderr, as mlir-opt's is.
                    dumped = "--print-between-passes" in command
                    result.record_opt(command, done.stderr if dumped else done.stdout)
        elif block.lang == "python":
            _exec_python(block.body, folder, namespace, result)
    return result


def _exec_python(source: str, folder: Path, namespace: dict[str, object], result: Run) -> None:
    import contextlib
    import io

    from ember.targets.cuda import CudaUnavailable

    if "assemble(" in source and _ptxas() is None:
        return
    printed = io.StringIO()
    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(printed):
        patch.chdir(folder)
        code = compile(source, str(DOC), "exec")
        if 'target="cuda", arch=' in source and cuda_available() is not None:
            with pytest.raises(CudaUnavailable):
                exec(code, namespace)
        else:
            exec(code, namespace)
    result.printed[source] = printed.getvalue()


def _registers_hidden(line: str) -> str:
    """`line` with its register counts replaced (for another ptxas)."""
    line = re.sub(r'"registers": \d+', '"registers": R', line)
    line = re.sub(r"at most \d+ registers", "at most R registers", line)
    fields = line.split()
    if len(fields) == 6 and re.fullmatch(r"\d+x\d+x\d+", fields[1]):
        fields[3] = "R"
        line = " ".join(fields)
    return line


def _in_order(excerpt: str, text: str, hide_registers: bool, where: str) -> None:
    """Each line of `excerpt` but `...` matches a line of `text`, in order
    (whitespace runs compared as one space; `...` within a line is any text)."""

    def normal(line: str) -> str:
        line = " ".join(line.split())
        return _registers_hidden(line) if hide_registers else line

    lines = [normal(line) for line in text.splitlines()]
    at = 0
    for shown in excerpt.splitlines():
        wanted = normal(shown)
        if wanted in ("", "..."):
            continue
        pattern = re.compile(".*".join(re.escape(part) for part in wanted.split("...")))
        found = next((i for i in range(at, len(lines)) if pattern.fullmatch(lines[i])), None)
        assert found is not None, f"{where}: not in the output (in order): {shown.strip()}"
        at = found + 1


def _source_text(run: Run, source: str) -> str:
    if source.startswith("file "):
        return (run.folder / source.removeprefix("file ")).read_text()
    if source.startswith("command "):
        return run.commands[source.removeprefix("command ")]
    file, _, name = source.partition(" after ")
    return run.ir[(file, name)]


def _every_command_runs(run: Run) -> None:
    assert any(c.startswith("ember-opt ") for c in run.commands)
    assert any(c.startswith("ember compile ") for c in run.commands)


def _every_excerpt_is_in_what_its_source_prints(run: Run) -> None:
    marked = [b for b in _blocks() if b.source is not None]
    assert len(marked) >= 15
    hide = not _ptxas_is_the_docs()
    for block in marked:
        source = block.source
        assert source is not None
        if source.endswith(", with ptxas"):
            if _ptxas() is None:
                continue
            source = source.removesuffix(", with ptxas")
        if "dry-run" in source and _ptxas() is None:
            continue
        _in_order(block.body, _source_text(run, source), hide, source)


def _the_commands_run_the_targets_pipeline(run: Run) -> None:
    """The doc's `ember-opt` pipeline is the cuda target's, pass for pass."""
    options = Options()
    target = target_named("cuda")
    graph_stage = [p.name for stage, p in target.pipeline(options) if stage == "graph"]
    rest = [p.name for stage, p in target.pipeline(options) if stage != "graph"]
    expected = [*graph_stage, *rest]
    for model in ("conv.mlir", "matmul.mlir"):
        assert run.passes[model] == expected
    assert "'graph-optimize{level=2 layout=none}'" in DOC.read_text()


def _kernel(ir: str, name: str) -> str:
    start = ir.index("^bb0", ir.rindex('"gpu.func"', 0, ir.index(f'sym_name = "{name}"')))
    return ir[start : ir.index(f'sym_name = "{name}"')]


def _the_tiled_kernels_have_the_barriers_shown(run: Run) -> None:
    conv = _kernel(run.ir[("conv.mlir", "convert-loop-to-gpu")], "main_kernel0")
    matmul = _kernel(run.ir[("matmul.mlir", "convert-loop-to-gpu")], "main_kernel0")
    (shown,) = [b.body for b in _blocks() if 'sym_name = "main_kernel0"' in b.body]
    barrier = '"gpu.barrier"() : () -> ()'
    assert conv.count(barrier) == matmul.count(barrier) == shown.count(barrier) == 2


def _the_python_examples_ran(run: Run) -> None:
    emulated = [text for source, text in run.printed.items() if "emulate=True" in source]
    assert len(emulated) == 1
    if _ptxas() is not None:
        [report] = [text for source, text in run.printed.items() if "assemble(" in source]
        assert "shared_bytes=12288" in report and "spill_stores=0" in report
        if _ptxas_is_the_docs():
            before, after = re.search(
                r"registers went from\s+(\d+) to (\d+)", DOC.read_text()
            ).groups()  # type: ignore[union-attr]
            assert f"registers={after}" in report
            assert f"at most {before} registers" in DOC.read_text()  # the unedited kernel's table


def _a_broken_schedule_gives_the_error_shown(run: Run) -> None:
    (message,) = re.findall(r"`(ember_gpu\.schedule: the staged tiles [^`]*)`", DOC.read_text())
    text = (run.folder / "matmul.scheduled.mlir").read_text().replace("k_tile = 16", "k_tile = 128")
    (run.folder / "broken.mlir").write_text(text)
    done = _shell("ember-opt broken.mlir -p loop-generate", run.folder)
    assert done.returncode == 1 and done.stderr.strip().endswith(message)


@pytest.mark.slow  # every command of the page: 25 s
def test_the_page_holds(run: Run) -> None:
    """Every check that reads what the page's commands printed, in one test:
    running them is the cost (tens of seconds), which separate tests would
    pay once per test worker."""
    _every_command_runs(run)
    _every_excerpt_is_in_what_its_source_prints(run)
    _the_commands_run_the_targets_pipeline(run)
    _the_tiled_kernels_have_the_barriers_shown(run)
    _the_python_examples_ran(run)
    _a_broken_schedule_gives_the_error_shown(run)


def test_the_defaults_and_limits_are_the_trees() -> None:
    text = " ".join(DOC.read_text().split())
    assert (TILED_FROM, BLOCK, THREADS, K_TILE, DEFAULT_THREADS) == (32, 64, 16, 16, 256)
    assert "M and N are both at least 32" in text
    assert "`block` is 64 along a side of at least 64 and 32 along a shorter one" in text
    assert "`threads = [16, 16]`, `k_tile = 16`" in text
    assert "256 a block along x" in text
    assert (MAX_THREADS, MAX_REGISTER_TILE, MAX_SHARED_BYTES) == (1024, 64, 48 * 1024)
    assert "at most 1,024 threads a block" in text
    assert "at most 64 accumulators a thread" in text
    assert "at most 48 KiB of shared memory" in text
    assert (WINDOW_THREADS, WINDOW_OUTPUTS) == ((16, 8), 2)
    assert "blocks of up to 16 x 8 threads with 2 x 2 outputs each" in text
    assert "at most 64 outputs a thread" in text


def test_the_window_schedules_are_the_lit_tests() -> None:
    schedules = re.findall(r"`(#ember_gpu\.window<[^`]*)`", DOC.read_text())
    assert len(schedules) == 1
    assert all(f"schedule = {s}" in WINDOW_LIT.read_text() for s in schedules)
    [first] = re.findall(r"```mlir\n(#ember_gpu\.window<[^\n]*)\n```", DOC.read_text())
    assert f"schedule = {first}" in WINDOW_LIT.read_text()


def test_the_batched_schedule_is_the_lit_tests() -> None:
    (schedule,) = re.findall(r"`(#ember_gpu\.schedule<m = \[1\], n = \[2\][^`]*)`", DOC.read_text())
    assert f"schedule = {schedule}" in SCHEDULE_LIT.read_text()


def test_the_page_is_linked() -> None:
    assert "(docs/gpu.md)" in (ROOT / "README.md").read_text()
    assert "(gpu.md)" in (ROOT / "docs" / "architecture.md").read_text()
