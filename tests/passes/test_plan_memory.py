"""loop-plan-memory's placement: the indexed first fit gives exactly the
offsets of the plain greedy (every placed buffer checked, largest first),
and buffers live at the same time never share memory."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ember.dialects.loop import align
from ember.passes.loop.plan_memory import Interval, assign_offsets


def reference_offsets(intervals: list[Interval]) -> list[int]:
    """First fit against every placed interval that overlaps in time."""
    placed: list[Interval] = []
    offsets = {}
    for interval in sorted(intervals, key=lambda i: (-i.size, i.start)):
        offset = 0
        for other in sorted((p for p in placed if p.overlaps_in_time(interval)),
                            key=lambda p: offsets[id(p)]):  # fmt: skip
            if offset + interval.size <= offsets[id(other)]:
                break
            offset = max(offset, align(offsets[id(other)] + other.size))
        offsets[id(interval)] = offset
        placed.append(interval)
    return [offsets[id(i)] for i in intervals]


@st.composite
def random_intervals(draw: st.DrawFn) -> list[Interval]:
    intervals = []
    for _ in range(draw(st.integers(0, 40))):
        start = draw(st.integers(0, 30))
        end = start + draw(st.integers(0, 12))
        size = draw(st.sampled_from([1, 4, 64, 100, 256, 1000]))
        intervals.append(Interval(None, size, start, end))  # type: ignore[arg-type]
    return intervals


@settings(max_examples=200, deadline=None, database=None)
@given(random_intervals())
def test_offsets_match_the_plain_greedy(intervals: list[Interval]) -> None:
    expected = reference_offsets(intervals)
    arena = assign_offsets(intervals)
    assert [i.offset for i in intervals] == expected
    assert arena == align(max((i.offset + i.size for i in intervals), default=0))
    for a in intervals:
        for b in intervals:
            if a is not b and a.overlaps_in_time(b):
                assert a.offset + a.size <= b.offset or b.offset + b.size <= a.offset
