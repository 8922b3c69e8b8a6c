"""Ahead-of-time compilation: a shared library, a C header and the weights.

`ember compile model.onnx -o out/` writes

    out/libNAME.so      the model as one C function (no Python needed)
    out/NAME.h          its declaration, with the sizes of its buffers
    out/NAME.weights    the weights blob, passed to the function by pointer
    out/NAME.json       the inputs' and outputs' names, shapes and dtypes

The function is `void NAME_run(const T *input..., T *output..., const void
*weights, void *arena)`: the caller loads the weights file into memory
(aligned to 64 bytes), allocates `NAME_ARENA_BYTES` bytes of scratch, and
passes dense row-major arrays.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import StringAttr

from ember.compiler import (
    DEFAULT_OPTIONS,
    CompileReport,
    Options,
    TensorSpec,
    lower_to_llvm,
    model_specs,
)
from ember.errors import EmberError
from ember.frontends.onnx import import_onnx
from ember.frontends.onnx.loader import ModelSource
from ember.reference import entry_function

C_TYPES = {
    np.dtype(np.float32): "float",
    np.dtype(np.float64): "double",
    np.dtype(np.int64): "int64_t",
    np.dtype(np.int32): "int32_t",
    np.dtype(np.int8): "int8_t",
    np.dtype(np.uint8): "uint8_t",
    np.dtype(np.bool_): "uint8_t",
}


@dataclass(frozen=True)
class DeployedModel:
    library: Path
    header: Path
    weights: Path
    manifest: Path
    function: str
    arena_bytes: int


def c_parameter_name(name: str, fallback: str) -> str:
    cleaned = re.sub(r"\W", "_", name)
    return cleaned if re.match(r"[A-Za-z_]", cleaned) else fallback


def _c_params(inputs: Sequence[TensorSpec], outputs: Sequence[TensorSpec]) -> list[tuple[str, str]]:
    params: list[tuple[str, str]] = []
    used: set[str] = set()
    for prefix, specs, const in (("input", inputs, "const "), ("output", outputs, "")):
        for index, spec in enumerate(specs):
            if spec.dtype not in C_TYPES:
                raise EmberError(
                    f"{prefix} '{spec.name}' has dtype {spec.dtype}, which has no C type here"
                )
            name = c_parameter_name(spec.name, f"{prefix}{index}")
            while name in used or name in ("weights", "arena"):
                name += "_"
            used.add(name)
            params.append((f"{const}{C_TYPES[spec.dtype]} *", name))
    return [*params, ("const void *", "weights"), ("void *", "arena")]


def compile_to_directory(
    model: ModelSource,
    out_dir: str | Path,
    name: str = "model",
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    options: Options = DEFAULT_OPTIONS,
    report: CompileReport | None = None,
) -> DeployedModel:
    """Compiles `model` ahead of time into `out_dir` (see the module doc);
    `report` collects the seconds per stage (and tells its listener)."""
    from ember.lowering.loop_to_llvm import to_llvmlite
    from ember.targets.cpu import (
        emit_object,
        host_target_machine,
        link_shared_library,
        optimize,
        parse_ir,
    )
    from ember.targets.cpu.aot import write_c_header

    if not re.fullmatch(r"[A-Za-z_]\w*", name):
        raise EmberError(f"--name '{name}' must be a C identifier")
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / f".{name}.probe"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as error:
        raise EmberError(f"{out}: cannot write the output directory: {error.strerror}") from None
    report = report or CompileReport()
    with report.stage("import"):
        module = import_onnx(model, input_shapes)
    func = entry_function(module)
    inputs, outputs = model_specs(func)
    function = f"{name}_run"
    func.sym_name = StringAttr(function)
    blob = lower_to_llvm(module, report, options)
    with report.stage("llvm-object"):
        machine = host_target_machine()
        llvm_module = parse_ir(str(to_llvmlite(module)), machine)
        optimize(llvm_module, machine)
        library = link_shared_library(emit_object(llvm_module, machine), out / f"lib{name}.so")
    arena = max(report.arena_bytes, 64)
    upper = name.upper()
    doc = (
        f"{name}: compiled by Ember for {machine.triple}.\n"
        f"Call {function}(inputs..., outputs..., weights, arena) with dense row-major arrays.\n"
        f"weights: the contents of {name}.weights ({blob.size} bytes), 64-byte aligned.\n"
        f"arena: {upper}_ARENA_BYTES bytes of scratch memory, 64-byte aligned.\n"
        + "".join(f"input  {s.name}: {s.dtype}{list(s.shape)}\n" for s in inputs)
        + "".join(f"output {s.name}: {s.dtype}{list(s.shape)}\n" for s in outputs)
    )
    header = write_c_header(out / f"{name}.h", function, _c_params(inputs, outputs), doc,
                            defines={f"{upper}_ARENA_BYTES": arena,
                                     f"{upper}_WEIGHTS_BYTES": int(blob.size)})  # fmt: skip
    weights = out / f"{name}.weights"
    weights.write_bytes(blob.tobytes())
    manifest = out / f"{name}.json"
    manifest.write_text(json.dumps({
        "function": function, "library": library.name, "weights": weights.name,
        "arena_bytes": arena,
        "inputs": [{"name": s.name, "shape": list(s.shape), "dtype": str(s.dtype)} for s in inputs],
        "outputs": [{"name": s.name, "shape": list(s.shape), "dtype": str(s.dtype)} for s in outputs],
    }, indent=2) + "\n")  # fmt: skip
    return DeployedModel(library, header, weights, manifest, function, arena)
