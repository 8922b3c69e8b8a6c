"""`ember compile --target npu -o OUT`: each NPU segment's program binary
and DRAM image, and a manifest saying how to run them.

    OUT/NAME.npu0.npu       the program (docs/npu-isa.md; `ember-opt OUT/NAME.npu0.npu` disassembles it)
    OUT/NAME.npu0.dram      its DRAM image: the weights in place, zeros elsewhere
    OUT/NAME.npu.json       the manifest

The manifest lists the machine's parameters and, per segment, its files,
the DRAM address, shape and type of every operand and result, and its
cycles and utilisation per layer (the cycle model's figures); and the ops
that run on the host, which `ember run --target npu` compiles for the CPU
(they are not part of these files).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from ember.lowering.graph_to_npu import NpuKernel, Placement
from ember.output_files import write_bytes, write_text
from ember.targets.npu.isa import encode_program
from ember.targets.npu.report import NpuReport


def _placement(place: Placement) -> dict[str, object]:
    return {"address": place.address, "shape": list(place.shape), "dtype": place.dtype.name}


def write_npu_directory(kernels: list[NpuKernel], report: NpuReport, output: str | Path,
                        name: str) -> list[Path]:  # fmt: skip
    """Writes the files above for a model's segments (`kernels`, in order)
    and its report; returns their paths, the manifest last."""
    folder = Path(output)
    folder.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    segments = []
    for kernel, cycles in zip(kernels, report.segments, strict=True):
        binary = folder / f"{name}.{kernel.name}.npu"
        image = folder / f"{name}.{kernel.name}.dram"
        write_bytes(binary, encode_program(kernel.program))
        write_bytes(image, kernel.image.tobytes())
        written += [binary, image]
        segments.append({
            "name": kernel.name, "program": binary.name, "dram_image": image.name,
            "dram_bytes": int(kernel.image.size),
            "inputs": [_placement(p) for p in kernel.inputs],
            "outputs": [_placement(p) for p in kernel.outputs],
            "cycles": cycles.cycles, "utilization": round(cycles.utilization, 4),
            "layers": [{"ops": layer.ops, "shape": layer.shape, "schedule": layer.schedule,
                        "cycles": layer.cycles, "utilization": round(layer.utilization, 4)}
                       for layer in cycles.layers],
        })  # fmt: skip
    params = dataclasses.asdict(kernels[0].params) if kernels else {}
    manifest = folder / f"{name}.npu.json"
    write_text(manifest, json.dumps({"params": params, "segments": segments,
                                    "host_ops": report.host_ops}, indent=2) + "\n")  # fmt: skip
    return [*written, manifest]


__all__ = ["write_npu_directory"]
