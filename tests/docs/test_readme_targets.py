"""The README's first paragraph names the targets `--target` offers, no
more and no fewer: a target added or dropped changes both."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from ember.cli import REFERENCE, build_parser
from ember.targets.registry import target_names

README = (Path(__file__).resolve().parents[2] / "README.md").read_text()


def _readme_targets() -> list[str]:
    """The targets the first paragraph lists: `NAME` (...) after `--target`."""
    first = README.split("\n\n")[1]
    listing = first.split("(`--target`):", 1)[1].split(". ", 1)[0]
    return re.findall(r"`([a-z0-9_-]+)` \(", listing)


def _choices(command: str) -> list[str]:
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    target = next(a for a in commands.choices[command]._actions if a.dest == "target")
    return list(target.choices or [])


def test_the_first_paragraph_lists_the_targets_the_cli_offers() -> None:
    assert _readme_targets() == list(target_names())
    for command in ("compile", "bench"):
        assert _choices(command) == _readme_targets()
    # `run` adds the reference interpreter, which is no compilation target.
    assert _choices("run") == [*_readme_targets(), REFERENCE]
