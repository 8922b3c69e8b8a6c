"""Adversarial uses of the profile: `ember bench --profile/--plot` with bad
paths and combinations, and the Python API misused. Each is one `error:`
line (exit 1), found before the compile where it can be."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.models import mlp
from tests.tools.test_cli import assert_one_line_error, run

MODEL = "light:squeezenet"
"""Never compiled here: every error below comes before the compile."""


@pytest.mark.parametrize(
    ("plot", "fragment"),
    [
        ("/nonexistent-dir/roofline.png", "no such directory '/nonexistent-dir'"),
        ("{tmp}", "the plot is a PNG file"),
        ("{tmp}/roofline.svg", "the plot is a PNG file"),
        ("{tmp}/is-a-dir.png", "not writable"),
        ("{tmp}/no/such/dir/r.png", "no such directory"),
    ],
)
def test_plot_to_a_path_that_cannot_be_written(plot: str, fragment: str, tmp_path: Path) -> None:
    (tmp_path / "is-a-dir.png").mkdir()
    result = run("ember", "bench", MODEL, "--profile", "--plot", plot.format(tmp=tmp_path))
    assert_one_line_error(result, "--plot", fragment)


def test_plot_without_profile(tmp_path: Path) -> None:
    result = run("ember", "bench", MODEL, "--plot", str(tmp_path / "r.png"))
    assert_one_line_error(result, "--plot draws the profile's roofline: add --profile")


@pytest.mark.parametrize(
    ("flag", "fragment"),
    [("--profile=yes", "ignored explicit argument 'yes'"), ("--plot", "expected one argument")],
)
def test_profile_flags_misspelt(flag: str, fragment: str) -> None:
    # --profile takes no value and --plot needs one.
    assert_one_line_error(run("ember", "bench", MODEL, flag), flag.split("=")[0], fragment)


def test_profile_pass_cannot_be_disabled() -> None:
    # The instrumentation is asked for with --profile, not an optional pass.
    result = run("ember", "bench", MODEL, "--profile", "--disable-pass", "loop-instrument-kernels")
    assert_one_line_error(result, "--disable-pass", "invalid choice: 'loop-instrument-kernels'")


def test_profile_on_a_host_without_the_counter(monkeypatch: pytest.MonkeyPatch) -> None:
    # AArch64's cycle counter traps in user space: refused before compiling.
    import ember
    from ember.errors import EmberError
    from ember.targets.cpu import profile

    monkeypatch.setattr(profile.llvm, "get_process_triple", lambda: "aarch64-unknown-linux-gnu")
    with pytest.raises(EmberError, match="reads x86's time-stamp counter; this host is aarch64"):
        ember.compile(mlp(batch=1, sizes=(4, 2)), profile=True)
