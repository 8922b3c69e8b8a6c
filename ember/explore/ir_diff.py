"""What a pass changed, line by line, and how much of it to show.

Lines are compared as a multiset, after renaming numbered SSA values
(`%12` -> `%_`), whose numbers shift whenever a pass adds a value above
them: a line of the IR after a pass is changed where the IR before it had
no equal line left to pair it with. Linear in the lines (no alignment), so
it stays cheap on the tens of thousands of lines of a large model's loop
IR; a moved line that is otherwise equal counts as unchanged.

A pass's IR is shown whole up to `limit` lines; beyond that, only its
changed lines with a little context, the unchanged runs between them
folded into one line that says how many it hides, and at most `limit`
lines in all, with a note of what was left out.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

CONTEXT = 2
"""Unchanged lines shown around a change when the IR is folded."""

_NUMBERED_VALUE = re.compile(r"%\d+(_\d+)?\b")


def normalise(line: str) -> str:
    return _NUMBERED_VALUE.sub("%_", line.strip())


def changed_lines(before: list[str], after: list[str]) -> tuple[list[bool], int]:
    """For each line of `after`, whether it is new; and how many lines of
    `before` are gone."""
    left = Counter(normalise(line) for line in before)
    changed = []
    for line in after:
        key = normalise(line)
        if left[key] > 0:
            left[key] -= 1
            changed.append(False)
        else:
            changed.append(True)
    return changed, sum(left.values())


@dataclass(frozen=True)
class Row:
    number: int
    """1-based line number in the pass's IR; 0 for a fold."""
    text: str
    changed: bool


def shown_rows(lines: list[str], changed: list[bool], limit: int) -> tuple[list[Row], str]:
    """The rows to show of IR `lines` (see the module docstring), and a note
    of what was left out ("" when nothing was)."""
    if len(lines) <= limit:
        return [Row(i + 1, line, c) for i, (line, c) in enumerate(zip(lines, changed))], ""
    keep = [False] * len(lines)
    for index, is_changed in enumerate(changed):
        if is_changed:
            for near in range(max(0, index - CONTEXT), min(len(lines), index + CONTEXT + 1)):
                keep[near] = True
    if not any(keep):  # nothing changed: the top of it
        keep[:limit] = [True] * min(limit, len(lines))
    rows: list[Row] = []
    hidden = 0
    shown = 0
    for index, line in enumerate(lines):
        if not keep[index] or shown >= limit:
            hidden += 1
            continue
        if hidden:
            rows.append(Row(0, f"... {hidden} unchanged line(s) ...", False))
            hidden = 0
        rows.append(Row(index + 1, line, changed[index]))
        shown += 1
    if hidden:
        rows.append(Row(0, f"... {hidden} more line(s) ...", False))
    changes = sum(changed)
    note = (f"{len(lines)} lines: showing {shown}, the changed ones with {CONTEXT} lines "
            f"of context" + (f" (the first {limit} of {changes} changed)" if changes > limit else ""))  # fmt: skip
    return rows, note


__all__ = ["Row", "changed_lines", "normalise", "shown_rows"]
