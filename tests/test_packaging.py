"""The distribution maps the design card's top-level folders into `ember.*`."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_every_package_folder_is_listed() -> None:
    config = _pyproject()["tool"]["setuptools"]
    mapping: dict[str, str] = config["package-dir"]
    folder_of = {package: Path(folder) for package, folder in mapping.items()}
    on_disk = set()
    for package, folder in folder_of.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            relative = init.parent.relative_to(ROOT / folder)
            name = ".".join([package, *relative.parts]) if relative.parts else package
            on_disk.add(name)
    assert on_disk == set(config["packages"])


def test_console_scripts_resolve() -> None:
    import importlib

    for target in _pyproject()["project"]["scripts"].values():
        module, _, function = target.partition(":")
        assert callable(getattr(importlib.import_module(module), function))


def test_top_level_layout() -> None:
    for name in ("pyproject.toml", "README.md", "lit.cfg.py", "dialects", "passes",
                 "lowering", "targets", "tests", "frontends", "ember", "docs"):  # fmt: skip
        assert (ROOT / name).exists(), name
