"""docs/conformance.md agrees with the passing list the suite runs.

Both are written by `benchmarks/conformance.py` (`--write-doc`,
`--write-passing`) from one run; a list regenerated without the page (or the
other way round) fails here.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = (ROOT / "docs" / "conformance.md").read_text()
PASSING = {
    line.strip()
    for line in (ROOT / "tests" / "conformance" / "passing.txt").read_text().splitlines()
    if line.strip() and not line.startswith("#")
}


def _table() -> list[tuple[str, int, int]]:
    rows = re.findall(r"^\| (.+?) \| (\d+) \| (\d+) \|", PAGE, flags=re.M)
    return [(op, int(passed), int(total)) for op, passed, total in rows]


def test_the_totals_are_the_passing_list() -> None:
    passed, total = re.search(r"\*\*Ember: ([\d,]+) of ([\d,]+) cases pass", PAGE).groups()
    assert int(passed.replace(",", "")) == len(PASSING)
    rows = _table()
    assert sum(row[1] for row in rows) == len(PASSING)
    assert sum(row[2] for row in rows) == int(total.replace(",", ""))


def test_every_failing_case_has_a_reason_and_none_is_in_the_passing_list() -> None:
    failing = re.findall(r"^- `(test_\w+)`: (mismatch|error|crash): (.+)$", PAGE, flags=re.M)
    rows = _table()
    assert len(failing) == sum(total - passed for _, passed, total in rows)
    assert not {name for name, _, _ in failing} & PASSING
