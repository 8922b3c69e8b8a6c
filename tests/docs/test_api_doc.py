"""docs/api.md is what `python -m ember.apidoc` writes from the docstrings:
it lists every public name, each documented, and is up to date; the
package says it ships type hints (`py.typed`)."""

from __future__ import annotations

import importlib
import re
import tomllib
from pathlib import Path

from ember.apidoc import PAGE, api_markdown, main, public_names

ROOT = Path(__file__).resolve().parents[2]


def test_the_page_is_up_to_date() -> None:
    assert PAGE == ROOT / "docs" / "api.md"
    assert PAGE.read_text() == api_markdown(), "run python -m ember.apidoc"
    assert main(["--check"]) == 0


def test_the_page_lists_every_public_name_with_its_documentation() -> None:
    text = PAGE.read_text()
    headings = re.findall(r"^#{3} `(?:class )?([\w.]+)", text, flags=re.MULTILINE)
    expected = [f"{module}.{name}" for module, names in public_names().items() for name in names]
    assert headings == expected
    assert public_names()["ember"] == importlib.import_module("ember").__all__
    assert "#### `CompiledModel.run(feeds: Mapping[str, np.ndarray])" in text
    assert "#### `CompiledModel.__call__(*arrays: np.ndarray)" in text
    assert "(undocumented)" not in text
    assert " at 0x" not in text and "'np.ndarray'" not in text


def test_a_stale_page_is_found(tmp_path: Path) -> None:
    stale = tmp_path / "api.md"
    stale.write_text(api_markdown().replace("NumPy", "numpy", 1))
    assert main(["--check", "-o", str(stale)]) == 1
    assert main(["-o", str(stale)]) == 0
    assert main(["--check", "-o", str(stale)]) == 0


def test_the_package_ships_its_type_hints() -> None:
    assert (ROOT / "ember" / "py.typed").is_file()
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert "py.typed" in config["package-data"]["ember"]
    assert config["package-dir"]["ember"] == "ember"
