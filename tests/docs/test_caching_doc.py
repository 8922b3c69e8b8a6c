"""docs/caching.md held to the code: its commands parse, its defaults and
environment variables are the cache's, its Python calls exist."""

from __future__ import annotations

import inspect
import re
import shlex
from pathlib import Path

import ember
from ember import cache
from ember.cli import build_parser

DOC = Path(__file__).resolve().parents[2] / "docs" / "caching.md"


def _block(language: str) -> str:
    (block,) = re.findall(rf"^```{language}\n(.*?)^```$", DOC.read_text(), re.MULTILINE | re.DOTALL)
    return block


def test_every_command_of_the_doc_parses() -> None:
    lines = [line.split("#")[0] for line in _block("sh").splitlines() if line.strip()]
    assert len(lines) == 7
    for line in lines:
        command = shlex.split(line)
        assert command[0] == "ember"
        build_parser().parse_args(command[1:])


def test_the_python_calls_exist() -> None:
    block = _block("python")
    assert "ember.load(" in block and "cache=False" in block
    assert "threads" in inspect.signature(ember.load).parameters
    assert "cache" in inspect.signature(ember.compile).parameters


def test_the_defaults_and_variables_are_the_caches() -> None:
    text = " ".join(DOC.read_text().split())
    assert f"default {cache.DEFAULT_SIZE // 2**30} GiB" in text
    source = inspect.getsource(cache)
    for variable in set(re.findall(r"\$?(EMBER_CACHE\w*)", text)):
        assert f'"{variable}"' in source, variable
    assert f"{cache.LAYOUT}/entries/KEY/" in text
