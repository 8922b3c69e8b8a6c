"""One compiled NPU segment as the host runs it: write the inputs into a
copy of its DRAM image, run its program in the functional simulator,
read the outputs back.

The program is checked once (`DeviceProgram.compile`: limits, tokens,
missing dependencies), which also gives an order the modules can run it
in; every run executes that order, so a run costs the instructions alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ember.dialects.npu.machine import check_program
from ember.lowering.graph_to_npu import NpuKernel
from ember.targets.npu.simulator.functional import Machine


@dataclass
class DeviceProgram:
    kernel: NpuKernel
    order: list[int]
    """The instructions in an order the modules can run them in (checked)."""

    @classmethod
    def compile(cls, kernel: NpuKernel) -> DeviceProgram:
        return cls(kernel, check_program(kernel.program, kernel.params))

    def run(self, arrays: Sequence[np.ndarray]) -> list[np.ndarray]:
        kernel = self.kernel
        dram = kernel.image.copy()
        for place, array in zip(kernel.inputs, arrays, strict=True):
            dram[place.address : place.address + place.nbytes] = place.store(array)
        machine = Machine(kernel.params, dram)
        for index in self.order:
            machine.execute(kernel.program[index], index)
        return [p.load(dram[p.address : p.address + p.nbytes]) for p in kernel.outputs]


__all__ = ["DeviceProgram"]
