"""The explorer's report in a real browser: headless Chromium, driven by
Playwright with the system's browser (no browser download). It checks
that the graph SVG renders with one cluster per fusion group, that
clicking a kernel opens its loop IR, and saves a screenshot (its path is
printed: `pytest -s` shows it). Skipped, with the reason, where Playwright
or Chromium is missing (`pip install playwright`, `apt-get install
chromium`; `EMBER_CHROMIUM` names another binary)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ember.cli import main

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome")


def chromium_path() -> str | None:
    given = os.environ.get("EMBER_CHROMIUM")
    if given:
        return given if Path(given).exists() else None
    return next((found for name in CHROMIUM_NAMES if (found := shutil.which(name))), None)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright is not installed (pip install playwright)")
    executable = chromium_path()
    if executable is None:
        pytest.skip("no Chromium on PATH (apt-get install chromium, or set EMBER_CHROMIUM)")
    with sync_playwright() as playwright:
        try:
            chromium = playwright.chromium.launch(executable_path=executable,
                                                  args=["--no-sandbox"])  # fmt: skip
        except Exception as error:  # noqa: BLE001 - Playwright's own error types
            pytest.skip(f"Chromium at {executable} does not start under Playwright: {error}")
        yield chromium
        chromium.close()


def open_report(browser: Any, path: Path) -> Any:
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    page.errors = errors
    return page


def check_report(page: Any, screenshot: Path, cpu: bool = True) -> None:
    clusters = int(page.locator("#graph-after").get_attribute("data-clusters"))
    assert clusters >= 1
    drawn = page.locator("#graph-after svg g.cluster")
    assert drawn.count() == clusters
    box = drawn.first.bounding_box()
    assert (
        box is not None and box["width"] > 10 and box["height"] > 10
    )  # rendered, not just present
    assert page.locator("#graph-before svg g.node").count() > 0
    assert page.locator("details.pass").count() > 3
    page.screenshot(path=str(screenshot), full_page=False)  # the top: header and graph
    print(f"screenshot: {screenshot}")
    assert screenshot.stat().st_size > 10_000
    if cpu:
        assert page.locator("svg.memory rect.buffer").count() > 0
        assert page.locator("svg.roofline circle.kernel-point").count() > 0
        link = page.locator("table.kernels a.kernel-link").first
        anchor = link.get_attribute("href")[1:]
        kernel = page.locator(f"details[id='{anchor}']")
        assert kernel.get_attribute("open") is None
        link.click()
        assert kernel.get_attribute("open") is not None
        loop_ir = kernel.locator("pre.loop-ir").first
        assert loop_ir.is_visible() and "func.func" in loop_ir.inner_text()
        clicked = screenshot.with_name(screenshot.stem + "-kernel.png")
        page.screenshot(path=str(clicked))
        print(f"screenshot: {clicked}")
    assert page.errors == []


@pytest.mark.slow
def test_tiny_report_in_chromium(browser: Any, tiny_model_path: str, tmp_path: Path) -> None:
    out = tmp_path / "tiny.html"
    assert main(["explore", tiny_model_path, "-o", str(out), "--threads", "1", "--runs", "1",
                 "-q"]) == 0  # fmt: skip
    page = open_report(browser, out)
    check_report(page, tmp_path / "tiny.png")
    node = page.locator("#graph-after svg g.node a").first  # a node opens its kernel too
    node.click()
    opened = page.locator("details.kernel[open]")
    assert opened.count() >= 1


@pytest.mark.slow
@pytest.mark.parametrize("target", ["cpu", "npu"])
def test_squeezenet_report_in_chromium(browser: Any, tmp_path: Path, target: str) -> None:
    out = tmp_path / f"squeezenet-{target}.html"
    assert main(["explore", "light:squeezenet", "--random-weights", "0", "-o", str(out),
                 "--target", target, "-q"]) == 0  # fmt: skip
    page = open_report(browser, out)
    check_report(page, tmp_path / f"squeezenet-{target}.png", cpu=target == "cpu")
    if target == "npu":
        assert page.locator("svg.npu-cycles g.layer").count() > 10
        page.locator("#npu").scroll_into_view_if_needed()
        page.screenshot(path=str(tmp_path / "squeezenet-npu-cycles.png"))
        print(f"screenshot: {tmp_path / 'squeezenet-npu-cycles.png'}")
