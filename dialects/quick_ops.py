"""Making many ops of one kind quickly.

An IRDL op's constructor checks its arguments against the op's definition
and builds its operand and property lists from them: about two thirds of
the time of making a small op (25 us of 33 on a Zen 4 core). A lowering
that makes thousands of additions, loads and stores of one shape pays that
check each time for the same outcome. `quick` checks once: the first op of
each key is made by its constructor, the later ones by `Operation.create`
with that op's properties (the same op; attributes are immutable, so the
properties dict is copied, not its values).

`quick` suits ops whose properties depend only on what the key names (the
op's kind and, say, its alignment or fastmath flags, a constant's value, a
view's static offsets and sizes) and whose result types the caller knows; an op with attributes or successors is not made this way.
An op with regions (a loop) may be: its regions are passed as they are.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

from xdsl.ir import Attribute, Operation, Region, SSAValue

_PROPERTIES: dict[Hashable, dict[str, Attribute]] = {}
"""The properties of the first op of each `quick` key."""

_MOST_KEYS = 1 << 16
"""Keys kept at most: keys that name values (a constant's, a view's offsets)
grow with the models a process compiles, so the cache starts afresh past
this many."""

OpT = TypeVar("OpT", bound=Operation)


def quick(build: Callable[[], OpT], key: Hashable, kind: type[OpT],
          operands: Sequence[SSAValue], result_types: Sequence[Attribute],
          regions: Sequence[Region] = ()) -> OpT:  # fmt: skip
    """The op `build()` makes (of type `kind`, with `operands`,
    `result_types` and `regions`), made by `kind.create` with the properties
    of the first op of `key`, which `build` made. `key` must name all that
    sets the op's properties."""
    properties = _PROPERTIES.get(key)
    if properties is None:
        op = build()
        assert type(op) is kind and not op.attributes and not op.successors
        if len(_PROPERTIES) >= _MOST_KEYS:
            _PROPERTIES.clear()
        _PROPERTIES[key] = dict(op.properties)
        return op
    return kind.create(operands=operands, result_types=result_types,
                       properties=dict(properties), regions=regions)  # fmt: skip


__all__ = ["quick"]
