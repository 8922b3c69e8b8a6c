"""`#npu.schedule`: how one matrix product of an NPU segment is tiled to the
scratchpad and the accumulator, written on its graph op (`npu.schedule`).

    %y = graph.conv %x, %w {npu.schedule = #npu.schedule<block = 2x14, buffers = 2, regions = 2>} : ...

An output-stationary block of `block` = M x N output tiles stays in one of
`regions` accumulator regions while the k loop runs; each k step loads the
block's M tiles of A and N tiles of B into one of `buffers` scratchpad
slots (two or more: the next step's loads overlap this step's gemms).
`npu-default-schedule` writes the one the cycle estimate picks on every
product of a segment; `convert-graph-to-npu` runs what the IR says, so a
schedule can be read, edited and compared (`ember bench --target npu`).
"""

from __future__ import annotations

from xdsl.dialects.builtin import IntAttr
from xdsl.ir import ParametrizedAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

SCHEDULE_ATTR = "npu.schedule"
"""The name of the attribute a product's graph op carries its schedule in."""
TUNED_ATTR = "npu.tuned"
"""On a product whose schedule came from tuning records (`npu-apply-records`):
its task's key."""


@irdl_attr_definition
class NpuScheduleAttr(ParametrizedAttribute):
    """A product's tiling (see the module docstring)."""

    name = "npu.schedule"

    block_m: IntAttr
    block_n: IntAttr
    buffers: IntAttr
    regions: IntAttr

    def __init__(self, block_m: int, block_n: int, buffers: int = 2, regions: int = 2):
        super().__init__(IntAttr(block_m), IntAttr(block_n), IntAttr(buffers), IntAttr(regions))

    @property
    def values(self) -> tuple[int, int, int, int]:
        """(block_m, block_n, buffers, regions)."""
        return (self.block_m.data, self.block_n.data, self.buffers.data, self.regions.data)

    def verify(self) -> None:
        if min(self.values) < 1:
            raise VerifyException(f"{self.name}: every field must be at least 1, got "
                                  f"{self.values}")  # fmt: skip

    def print_parameters(self, printer: Printer) -> None:
        m, n, buffers, regions = self.values
        printer.print_string(f"<block = {m}x{n}, buffers = {buffers}, regions = {regions}>")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[IntAttr]:
        with parser.in_angle_brackets():
            parser.parse_keyword("block")
            parser.parse_punctuation("=")
            m, n = _block(parser)
            parser.parse_punctuation(",")
            parser.parse_keyword("buffers")
            parser.parse_punctuation("=")
            buffers = parser.parse_integer(allow_boolean=False, allow_negative=False)
            parser.parse_punctuation(",")
            parser.parse_keyword("regions")
            parser.parse_punctuation("=")
            regions = parser.parse_integer(allow_boolean=False, allow_negative=False)
        return [IntAttr(m), IntAttr(n), IntAttr(buffers), IntAttr(regions)]


def _block(parser: AttrParser) -> tuple[int, int]:
    """`MxN`: the lexer reads `2x14` as the integer 2 and the identifier `x14`."""
    start = parser.pos
    m = parser.parse_integer(allow_boolean=False, allow_negative=False)
    rest = parser.parse_identifier()
    if not rest.startswith("x") or not rest[1:].isdigit():
        parser.raise_error("npu.schedule: block must be MxN tiles, as 2x14", start, parser.pos)
    return m, int(rest[1:])


__all__ = ["SCHEDULE_ATTR", "TUNED_ATTR", "NpuScheduleAttr"]
