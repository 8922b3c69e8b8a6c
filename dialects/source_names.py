"""Source names: which nodes of the model an op came from.

Every op the ONNX importer makes carries its node's name as its location
(`loc("conv1/7x7_s2")`, printed with `--print-debuginfo`); a node without a
name is named after its first output, as Netron does. The name travels
down with the computation, each step setting it in O(1) per op it makes:

- graph passes give an op they build the location of the op it replaces
  (`passes/graph/builders.insert_op`); one that merges ops (BatchNorm
  folded into a Conv, a `graph.fused` group) gets all their names, a
  `loc(fused["conv1", "bn1", "relu1"])`;
- `convert-graph-to-tensor` gives the tensor-level ops of a graph op its
  location, and a `loop.kernel` its group's; `convert-tensor-to-loop` and
  `loop-generate` pass it on to the buffers' ops and the outermost loops;
  `loop-fuse` merges the names of the nests it merges; `loop-form-kernels`
  gives a kernel its nest's;
- `loop-outline-kernels` puts the kernel's location on its call, lists on
  the kernel function the names of every call site that shares it
  (`ember.source_names`) and drops them inside its body, so names never
  make otherwise equal kernels differ (locations are not part of
  structural equivalence, and the function's attributes are not either);
  a new kernel function's symbol ends in its first name;
- the profile, the trace, the NPU report, the fusion report and
  diagnostics (`ember.dialects.schedule.describe`, the verifier's
  `CompileError`) name kernels and ops by them (`conv1 + relu1 (kernel 3)`).

A location that is not a name (`loc(unknown)`, a file position) names
nothing; the tools then fall back to the op's own description.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from xdsl.dialects.builtin import (
    UNKNOWN_LOC,
    ArrayAttr,
    FusedLoc,
    LocationAttr,
    NameLoc,
    NoneAttr,
    StringAttr,
    UnknownLoc,
)
from xdsl.ir import Attribute, Operation

SOURCE_NAMES_ATTR = "ember.source_names"
"""On a kernel function: the source names of each call site sharing it."""

MAX_SHOWN_NAMES = 3
"""How many names `describe_names` shows before '+N more'."""


def name_location(name: str) -> LocationAttr:
    """The location of an op made from the model's node `name`."""
    return NameLoc(StringAttr(name), NoneAttr())


def location_names(location: Attribute) -> list[str]:
    """The source names a location holds, in order (none for an unknown one)."""
    if isinstance(location, NameLoc):
        return [location.desc.data]
    if isinstance(location, FusedLoc):
        assert isinstance(location.locations, ArrayAttr)
        return [name for inner in location.locations.data for name in location_names(inner)]
    return []


def source_names(op: Operation) -> list[str]:
    """The names of the model's nodes `op` came from."""
    return location_names(op.location)


def merged_location(locations: Iterable[Attribute]) -> LocationAttr:
    """One location naming every source of `locations`, each name once, in
    order: unknown when none names anything, a name when one does, else a
    fused location of the names."""
    names = list(dict.fromkeys(n for location in locations for n in location_names(location)))
    if not names:
        return UNKNOWN_LOC
    if len(names) == 1:
        return name_location(names[0])
    return FusedLoc(ArrayAttr([name_location(n) for n in names]), NoneAttr())


def inherit_location(new: Operation, source: Operation) -> None:
    """Gives `new` the location of `source`, the op it was made from, unless it has one."""
    if isinstance(new.location, UnknownLoc):
        new.location = source.location


def describe_names(names: Sequence[str], limit: int = MAX_SHOWN_NAMES) -> str:
    """`a + b + c`, or `a + b + c + …` past `limit` names; '' for none."""
    shown = " + ".join(names[:limit])
    return f"{shown} + …" if len(names) > limit else shown


__all__ = [
    "SOURCE_NAMES_ATTR",
    "describe_names",
    "inherit_location",
    "location_names",
    "merged_location",
    "name_location",
    "source_names",
]
