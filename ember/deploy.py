"""Ahead-of-time compilation: a shared library, a C header and the weights.

`ember compile model.onnx -o out/` writes

    out/libNAME.so      the model as one C function (no Python needed)
    out/NAME.h          its declaration, the buffers struct and the sizes
    out/NAME.weights    the weights blob, passed to the function by pointer
    out/NAME.json       each input's and output's ONNX name, C name, shape, dtype

The function is `void NAME_run(const NAME_buffers *buffers, const void
*weights, void *arena)`. `NAME_buffers` holds one pointer per input, then
one per output, in the model's order (the function reads it as an array of
pointers, the packed ABI of `convert-loop-to-llvm`, so any number of them
works); each member is named after its ONNX name, made a legal and distinct
C identifier (`targets/cpu/c_names.py`), and its comment gives the ONNX
name, dtype and shape. The caller loads the weights file into memory
(aligned to 64 bytes), allocates `NAME_ARENA_BYTES` bytes of scratch and
passes dense row-major arrays. docs/deploying.md has a complete program.

Parallel loops run on the library's own thread pool, split among the
thread count given at compile time (`Options.threads`); the header also
declares `void NAME_set_threads(int64_t threads)`, which changes that count
for every later call (1: run on the calling thread alone; 0: back to the
compiled count). A library compiled for one thread has no pool, and its
`NAME_set_threads` does nothing.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ember.compiler import TensorSpec, model_specs
from ember.dialects.graph.symbolic import Range
from ember.errors import EmberError
from ember.frontends.onnx import import_onnx
from ember.frontends.onnx.loader import ModelSource
from ember.options import DEFAULT_OPTIONS, Options
from ember.reference import entry_function
from ember.report import CompileReport
from ember.targets.cpu.aot import CField
from ember.targets.cpu.c_names import CNames, is_c_identifier, is_reserved
from ember.targets.cpu.pipeline import fewer_collections, lower_to_llvm, make_entry

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
    buffers_struct: str
    arena_bytes: int


def _header_names(name: str) -> dict[str, str]:
    """The identifiers the header declares for model `name`, by role."""
    upper = name.upper()
    return {"function": f"{name}_run", "struct": f"{name}_buffers",
            "arena": f"{upper}_ARENA_BYTES", "weights": f"{upper}_WEIGHTS_BYTES",
            "inputs": f"{upper}_NUM_INPUTS", "outputs": f"{upper}_NUM_OUTPUTS",
            "set_threads": f"{name}_set_threads"}  # fmt: skip


def _quoted(name: str) -> str:
    """An ONNX name as a JSON string (ASCII, escapes visible) for a comment."""
    return json.dumps(name)


def buffer_fields(
    inputs: Sequence[TensorSpec], outputs: Sequence[TensorSpec], taken: Sequence[str]
) -> list[CField]:
    """The members of the buffers struct: inputs then outputs, each named by
    `CNames` (distinct from `taken`, the header's own names)."""
    names = CNames(taken)
    fields: list[CField] = []
    for kind, specs, const in (("input", inputs, "const "), ("output", outputs, "")):
        for spec in specs:
            if spec.dtype not in C_TYPES:
                raise EmberError(
                    f"{kind} '{spec.name}' has dtype {spec.dtype}, which has no C type here"
                )
            shape = ", ".join(map(str, spec.shape))
            fields.append(CField(f"{const}{C_TYPES[spec.dtype]} *", names.claim(spec.name, kind),
                                 f"{kind} {_quoted(spec.name)}: {spec.dtype}[{shape}]"))  # fmt: skip
    return fields


def compile_to_directory(
    model: ModelSource,
    out_dir: str | Path,
    name: str = "model",
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    options: Options = DEFAULT_OPTIONS,
    report: CompileReport | None = None,
    dims: Mapping[str, Range] | None = None,
) -> DeployedModel:
    """Compiles `model` ahead of time into `out_dir` (see the module doc);
    `report` collects the seconds per stage (and tells its listener);
    `input_shapes` and `dims` are `import_onnx`'s."""
    from ember.targets.cpu import (
        PTHREAD_LINK_ARGS,
        CFunction,
        CStruct,
        emit_object,
        host_target_machine,
        link_shared_library,
        link_thread_pool,
        optimize,
        parse_ir,
        to_llvmlite,
        write_c_header,
    )

    if not is_c_identifier(name) or is_reserved(name):
        raise EmberError(
            f"--name '{name}' must be a C identifier that does not start with '_' "
            "or contain '__' and is not a keyword"
        )
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
        module = import_onnx(model, input_shapes, dims)
    func = entry_function(module)
    inputs, outputs = model_specs(func)
    if not outputs:
        raise EmberError("the model has no outputs, so there is nothing to deploy")
    header_names = _header_names(name)
    function, struct = header_names["function"], header_names["struct"]
    guard = f"EMBER_{name.upper()}_H"
    fields = buffer_fields(inputs, outputs, [guard, *header_names.values()])
    make_entry(func, function)  # the header's struct is the packed buffers array
    blob = lower_to_llvm(module, report, options)
    with report.stage("llvm-object"):
        machine = host_target_machine()
        with fewer_collections():
            llvm_text = str(to_llvmlite(module))
        llvm_module = parse_ir(llvm_text, machine)
        pool = link_thread_pool(llvm_module, machine, header_names["set_threads"])
        optimize(llvm_module, machine)
        library = link_shared_library(emit_object(llvm_module, machine), out / f"lib{name}.so",
                                      PTHREAD_LINK_ARGS if pool else ())  # fmt: skip
    arena = max(report.arena_bytes, 64)
    doc = (
        f"{name}: compiled by Ember for {machine.triple}.\n\n"
        f"{function}(&buffers, weights, arena) runs the model once:\n"
        f"  buffers  a {struct}: a pointer to each input and output, dense row-major\n"
        f"  weights  the contents of {name}.weights ({header_names['weights']} bytes),\n"
        "           64-byte aligned\n"
        f"  arena    {header_names['arena']} bytes of scratch memory, 64-byte aligned;\n"
        "           calls that share an arena must not overlap in time\n"
        f"Parallel loops run on {options.threads} thread(s); "
        f"{header_names['set_threads']} changes that.\n"
        f'{name}.json maps each ONNX name to its member here ("c_name").'
    )
    struct_doc = (
        f"One pointer per input, then one per output, in the model's order: {function}\n"
        f"reads it as an array of {header_names['inputs']} + {header_names['outputs']} pointers."
    )
    defines = {header_names["arena"]: arena, header_names["weights"]: int(blob.size),
               header_names["inputs"]: len(inputs), header_names["outputs"]: len(outputs)}  # fmt: skip
    set_threads = CFunction(header_names["set_threads"], [("int64_t", "threads")], (
        f"Threads for the parallel loops of later calls (the calling thread and\n"
        f"workers of this library's pool): 1 runs on the calling thread alone, 0 or\n"
        f"less restores the count it was compiled for ({options.threads})."))  # fmt: skip
    header = write_c_header(out / f"{name}.h", function, [(f"const {struct} *", "buffers"),
                            ("const void *", "weights"), ("void *", "arena")], doc,
                            defines, [CStruct(struct, fields, struct_doc)], [set_threads])  # fmt: skip
    weights = out / f"{name}.weights"
    weights.write_bytes(blob.tobytes())
    manifest = out / f"{name}.json"
    entries = [{"name": s.name, "c_name": f.name, "shape": list(s.shape), "dtype": str(s.dtype)}
               for s, f in zip([*inputs, *outputs], fields)]  # fmt: skip
    manifest.write_text(json.dumps({
        "function": function, "buffers_struct": struct, "library": library.name,
        "weights": weights.name, "arena_bytes": arena, "threads": options.threads,
        "set_threads": header_names["set_threads"],
        "inputs": entries[: len(inputs)], "outputs": entries[len(inputs):],
    }, indent=2) + "\n")  # fmt: skip
    return DeployedModel(library, header, weights, manifest, function, struct, arena)
