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

A model with symbolic dims (`N`, `S`) is compiled once for every size of
them. Its `NAME_run` takes the shapes as well (a `NAME_shapes` struct: one
`int64_t[rank]` per input and output) and the arena's size, returns an
error code, and is wrapped by an entry check in C
(`targets/cpu/entry_check.py`, written to `out/NAME_entry.c` and compiled
into the library): `NAME_prepare` checks the inputs' shapes against the
symbols and their ranges and gives the outputs' shapes and the arena the
call needs, `NAME_error` the message of a failed check. `NAME.json` lists
the symbols with their ranges, the dims as expressions over them and the
arena's formula.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import ModuleOp

from ember.dialects.graph.dims import dim_text
from ember.dialects.graph.symbolic import Dim, Range, SymExpr, range_text
from ember.errors import EmberError
from ember.options import DEFAULT_OPTIONS, Options
from ember.output_files import write_bytes, write_text
from ember.reference import entry_function
from ember.report import CompileReport
from ember.targets.calls import has_symbols, model_specs
from ember.targets.cpu.aot import CField, CFunction, CStruct, write_c_header
from ember.targets.cpu.c_names import CNames, is_c_identifier, is_reserved
from ember.targets.cpu.entry_check import (
    ERROR_CODES,
    ERROR_DOCS,
    CTensor,
    CVersion,
    EntryNames,
    entry_check_source,
)
from ember.targets.cpu.generic import arena_formula, lower_generic
from ember.targets.cpu.pipeline import fewer_collections, lower_to_loops, make_entry
from ember.targets.target import writable_directory
from ember.targets.versions import (
    Specialize,
    SymbolicSpec,
    model_ranges,
    specialized,
    symbolic_specs,
    version_sizes,
)

C_TYPES = {
    np.dtype(np.float32): "float",
    np.dtype(np.float64): "double",
    np.dtype(np.float16): "_Float16",
    np.dtype(np.int64): "int64_t",
    np.dtype(np.int32): "int32_t",
    np.dtype(np.int16): "int16_t",
    np.dtype(np.int8): "int8_t",
    np.dtype(np.uint64): "uint64_t",
    np.dtype(np.uint32): "uint32_t",
    np.dtype(np.uint16): "uint16_t",
    np.dtype(np.uint8): "uint8_t",
    np.dtype(np.bool_): "uint8_t",
    # The narrow types as their storage (docs/types.md): bfloat16's bits in
    # 16, and a byte per float8, float4, int4 or int2 element (the value in
    # its low bits, zero-extended).
    np.dtype(ml_dtypes.bfloat16): "uint16_t",
    **{np.dtype(t): "uint8_t" for t in (
        ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e4m3fnuz, ml_dtypes.float8_e5m2,
        ml_dtypes.float8_e5m2fnuz, ml_dtypes.float8_e8m0fnu, ml_dtypes.float4_e2m1fn, ml_dtypes.int4, ml_dtypes.uint4,
        ml_dtypes.int2, ml_dtypes.uint2)},
}  # fmt: skip


@dataclass(frozen=True)
class DeployedModel:
    library: Path
    header: Path
    weights: Path
    manifest: Path
    function: str
    buffers_struct: str
    arena_bytes: int | None
    """None for a model with symbolic dims (its `NAME_prepare` says it)."""
    entry_check: Path | None = None
    """The C source of a symbolic model's entry check (compiled into the library)."""

    @property
    def files(self) -> list[Path]:
        """The files written: library, header, weights, manifest (and entry check)."""
        paths = [self.library, self.header, self.weights, self.manifest, self.entry_check]
        return [p for p in paths if p is not None]


def _header_names(name: str) -> dict[str, str]:
    """The identifiers the header declares for model `name`, by role."""
    upper = name.upper()
    return {"function": f"{name}_run", "struct": f"{name}_buffers",
            "arena": f"{upper}_ARENA_BYTES", "weights": f"{upper}_WEIGHTS_BYTES",
            "inputs": f"{upper}_NUM_INPUTS", "outputs": f"{upper}_NUM_OUTPUTS",
            "set_threads": f"{name}_set_threads"}  # fmt: skip


def _symbolic_names(name: str) -> dict[str, str]:
    """The further identifiers a symbolic model's header declares, by role."""
    upper = name.upper()
    return {"shapes": f"{name}_shapes", "prepare": f"{name}_prepare", "error": f"{name}_error",
            "symbols": f"{upper}_NUM_SYMBOLS",
            **{code: f"{upper}_{code}" for code in ERROR_CODES}}  # fmt: skip


def _quoted(name: str) -> str:
    """An ONNX name as a JSON string (ASCII, escapes visible) for a comment."""
    return json.dumps(name)


def buffer_fields(
    inputs: Sequence[SymbolicSpec], outputs: Sequence[SymbolicSpec], taken: Sequence[str]
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
            shape = ", ".join(map(dim_text, spec.dims))
            fields.append(CField(f"{const}{C_TYPES[spec.dtype]} *", names.claim(spec.name, kind),
                                 f"{kind} {_quoted(spec.name)}: {spec.dtype}[{shape}]"))  # fmt: skip
    return fields


def check_name(name: str) -> None:
    """An EmberError unless `name` can prefix the header's C identifiers."""
    if not is_c_identifier(name) or is_reserved(name):
        raise EmberError(
            f"--name '{name}' must be a C identifier that does not start with '_' "
            "or contain '__' and is not a keyword"
        )


def _output_directory(out_dir: str | Path, name: str) -> Path:
    check_name(name)
    return writable_directory(Path(out_dir), name)


def _object_code(modules: Sequence[ModuleOp], report: CompileReport, set_threads: str,
                 hidden: Sequence[str]) -> tuple[list[bytes], bool, str]:  # fmt: skip
    """The modules (from `lower_to_loops`, consumed) as objects for this CPU,
    lowered and compiled part by part (`streamed_codegen.py`), the thread
    pool's last; `hidden` names functions not to export. Returns the
    objects, whether the pool is among them, and the target triple (each
    version's kernels are named after its entry, so the parts of several
    never clash)."""
    from ember.targets.cpu import (
        LLVM_OPT_LEVEL,
        compile_streamed,
        host_target_machine,
        launches_parallel_loops,
        thread_pool_part,
    )

    triple = host_target_machine().triple
    pool = any(launches_parallel_loops(module) for module in modules)
    objects = []
    for index, module in enumerate(modules):
        last = index == len(modules) - 1
        extra = [thread_pool_part(pool, triple, set_threads)] if last else []
        with fewer_collections():
            objects += compile_streamed(module, report, LLVM_OPT_LEVEL, hidden, extra_parts=extra)
    return [part.code for part in objects], pool, triple


@dataclass
class _Lowered:
    """One version of a symbolic model, lowered to LLVM."""

    module: ModuleOp
    weights: np.ndarray
    version: CVersion


def _lower_versions(module: ModuleOp, name: str, specialize: Specialize,
                    report: CompileReport, options: Options) -> list[_Lowered]:  # fmt: skip
    """A static version per combination of `specialize`'s sizes, then the
    generic one (left out where its ops do not lower with symbolic sizes
    yet and there are static versions), their weights placed one after
    another in one blob (64-byte aligned)."""
    func = entry_function(module)
    lowered: list[_Lowered] = []
    offset = 0

    def add(version_module: ModuleOp, weights: np.ndarray, kernel: str, arena: Dim,
            sizes: Mapping[str, int] | None) -> None:  # fmt: skip
        nonlocal offset
        lowered.append(_Lowered(version_module, weights, CVersion(kernel, offset, arena, sizes)))
        offset += -(-weights.size // 64) * 64

    for index, sizes in enumerate(version_sizes(func, specialize)):
        version = specialized(module, sizes)
        version_report = CompileReport()
        make_entry(entry_function(version), f"{name}_kernel_{index}")
        weights = lower_to_loops(version, version_report, options)
        add(version, weights, f"{name}_kernel_{index}", max(version_report.arena_bytes, 64), sizes)
    try:
        weights = lower_generic(module, f"{name}_kernel", report, options)
    except EmberError:
        if not lowered:
            raise
        return lowered  # the static versions alone, as ember.compile's VersionedModel
    add(module, weights, f"{name}_kernel", arena_formula(report), None)
    return lowered


def _weights_blob(lowered: Sequence[_Lowered]) -> np.ndarray:
    """The versions' weights at their offsets."""
    end = lowered[-1].version.weights_offset + lowered[-1].weights.size
    blob = np.zeros(end, dtype=np.uint8)
    for part in lowered:
        start = part.version.weights_offset
        blob[start : start + part.weights.size] = part.weights.view(np.uint8)
    return blob


def deploy_module(
    module: ModuleOp,
    out_dir: str | Path,
    name: str = "model",
    options: Options = DEFAULT_OPTIONS,
    report: CompileReport | None = None,
    specialize: Specialize = "auto",
) -> DeployedModel:
    """Compiles `module` (graph IR, consumed) ahead of time into `out_dir`
    (see the module doc); `report` collects the seconds per stage (and tells
    its listener). A model with symbolic
    dims is compiled once for every size of them, with a C entry check
    (`targets/cpu/entry_check.py`), and once more for each combination of
    `specialize`'s sizes (`{"N": [1, 8]}`), the version the sizes select;
    the default, `"auto"`, is `versions.AUTO_DOC`, and `"none"` leaves
    the generic version alone."""
    from ember.targets.cpu import PTHREAD_LINK_ARGS, link_shared_library

    out = _output_directory(out_dir, name)
    report = report or CompileReport()
    func = entry_function(module)
    symbolic = has_symbols(func)
    if not symbolic:
        model_specs(func)  # static shapes, element types with a NumPy dtype
        if specialize not in ("auto", "none", {}):
            raise EmberError("--specialize: the model has no symbolic dims (it is compiled for "
                             "its one shape)")  # fmt: skip
    inputs, outputs = symbolic_specs(func)
    if not outputs:
        raise EmberError("the model has no outputs, so there is nothing to deploy")
    names = _header_names(name) | (_symbolic_names(name) if symbolic else {})
    guard = f"EMBER_{name.upper()}_H"
    kernels = f"{name}_kernel"  # and {name}_kernel_0, 1, ...: never exported
    fields = buffer_fields(inputs, outputs, [guard, kernels, *names.values()])
    if symbolic:
        lowered = _lower_versions(module, name, specialize, report, options)
        blob = _weights_blob(lowered)
        modules, hidden = [v.module for v in lowered], [v.version.kernel for v in lowered]
    else:
        make_entry(func, names["function"])  # the header's struct is the packed buffers array
        blob = lower_to_loops(module, report, options)
        modules, hidden = [module], []
    object_code, pool, triple = _object_code(modules, report, names["set_threads"], hidden)
    set_threads = CFunction(names["set_threads"], [("int64_t", "threads")], (
        f"Threads for the parallel loops of later calls (the calling thread and\n"
        f"workers of this library's pool): 1 runs on the calling thread alone, 0 or\n"
        f"less restores the count it was compiled for ({options.threads})."))  # fmt: skip
    header_parts = _HeaderParts(name, names, fields, inputs, outputs, int(blob.size),
                                f"{name}: compiled by Ember for {triple}.\n\n", (
        f"\nParallel loops run on {options.threads} thread(s); "
        f"{names['set_threads']} changes that.\n"
        f'{name}.json maps each ONNX name to its member here ("c_name").'), set_threads)  # fmt: skip
    contents: dict[str, Any] = {
        "function": names["function"], "buffers_struct": names["struct"],
        "library": f"lib{name}.so", "weights": f"{name}.weights", "threads": options.threads,
        "set_threads": names["set_threads"],
    }  # fmt: skip
    entry_check: Path | None = None
    arena: int | None = None
    if symbolic:
        versions = [v.version for v in lowered]
        header = header_parts.symbolic(out, model_ranges(func), versions)
        entry_check = out / f"{name}_entry.c"
        tensors = [CTensor(s.name, f.name, s.dims) for s, f in zip([*inputs, *outputs], fields)]
        entry_names = EntryNames(header.name, names["shapes"], names["struct"], names["prepare"],
                                 names["function"], names["error"], f"{name.upper()}_")  # fmt: skip
        write_text(entry_check, entry_check_source(entry_names, tensors[: len(inputs)],
                               tensors[len(inputs):], model_ranges(func), versions))  # fmt: skip
        contents |= _symbolic_manifest(names, model_ranges(func), versions)
    else:
        arena = max(report.arena_bytes, 64)
        header = header_parts.static(out, arena)
        contents["arena_bytes"] = arena
    library = link_shared_library(object_code, out / f"lib{name}.so",
                                  PTHREAD_LINK_ARGS if pool else (),
                                  [entry_check] if entry_check else [])  # fmt: skip
    weights = out / f"{name}.weights"
    write_bytes(weights, blob.tobytes())
    manifest = out / f"{name}.json"
    entries = [{"name": s.name, "c_name": f.name, "shape": [_json_dim(d) for d in s.dims],
                "dtype": str(s.dtype)} for s, f in zip([*inputs, *outputs], fields)]  # fmt: skip
    contents |= {"inputs": entries[: len(inputs)], "outputs": entries[len(inputs) :]}
    write_text(manifest, json.dumps(contents, indent=2) + "\n")
    return DeployedModel(library, header, weights, manifest, names["function"], names["struct"],
                         arena, entry_check)  # fmt: skip


def _symbolic_manifest(names: Mapping[str, str], ranges: Mapping[str, Range],
                       versions: Sequence[CVersion]) -> dict[str, Any]:  # fmt: skip
    """What `NAME.json` says of a symbolic model beyond its buffers."""
    generic = [v for v in versions if v.sizes is None]
    return {
        "shapes_struct": names["shapes"], "prepare": names["prepare"], "error": names["error"],
        "symbols": [{"name": n, "range": list(r)} for n, r in sorted(ranges.items())],
        "arena_formula": dim_text(generic[0].arena) if generic else None,
        "versions": [{"sizes": dict(v.sizes), "arena_bytes": v.arena}
                     for v in versions if v.sizes is not None],
        "error_codes": ERROR_CODES,
    }  # fmt: skip


@dataclass(frozen=True)
class _HeaderParts:
    """What the static and the symbolic header share."""

    name: str
    names: Mapping[str, str]
    fields: list[CField]
    inputs: Sequence[SymbolicSpec]
    outputs: Sequence[SymbolicSpec]
    weights_bytes: int
    doc_head: str
    doc_tail: str
    set_threads: CFunction

    def _write(self, out: Path, params: list[tuple[str, str]], doc: str, defines: dict[str, int],
               structs: list[CStruct], functions: list[CFunction], returns: str = "void") -> Path:  # fmt: skip
        names = self.names
        struct_doc = (
            f"One pointer per input, then one per output, in the model's order: "
            f"{names['function']}\n"
            f"reads it as an array of {names['inputs']} + {names['outputs']} pointers."
        )
        defines |= {names["weights"]: self.weights_bytes, names["inputs"]: len(self.inputs),
                    names["outputs"]: len(self.outputs)}  # fmt: skip
        buffers = CStruct(names["struct"], self.fields, struct_doc)
        return write_c_header(out / f"{self.name}.h", names["function"], params,
                              self.doc_head + doc + self.doc_tail, defines,
                              [buffers, *structs], [*functions, self.set_threads], returns)  # fmt: skip

    def static(self, out: Path, arena: int) -> Path:
        names = self.names
        params = [(f"const {names['struct']} *", "buffers"), ("const void *", "weights"),
                  ("void *", "arena")]  # fmt: skip
        return self._write(out, params, _static_doc(self.name, names), {names["arena"]: arena},
                           [], [])  # fmt: skip

    def symbolic(self, out: Path, ranges: Mapping[str, Range],
                 versions: Sequence[CVersion]) -> Path:  # fmt: skip
        names = self.names
        shape_fields = [CField("int64_t", f.name, f"{f.comment.split(':')[0]}", len(s.dims))
                        for f, s in zip(self.fields, [*self.inputs, *self.outputs]) if s.dims]  # fmt: skip
        shapes = CStruct(names["shapes"], shape_fields, (
            "Each input's and output's shape, for the tensors of rank 1 or more (a\n"
            f"scalar has no member): the caller sets the inputs', {names['prepare']}\n"
            "writes the outputs'."))  # fmt: skip
        functions = [
            CFunction(names["prepare"], [(f"{names['shapes']} *", "shapes"),
                                         ("size_t *", "arena_bytes")], (
                "Checks the inputs' shapes in *shapes (see above), then writes the\n"
                "outputs' shapes into it and the arena these shapes need into\n"
                f"*arena_bytes (if not NULL). Returns {names['OK']} or an error code."),
                "int"),
            CFunction(names["error"], [], (
                f"The message of this thread's last error from {names['prepare']} or\n"
                f"{names['function']} (which input, axis and symbol, and why)."), "const char *"),
        ]  # fmt: skip
        params = [(f"const {names['struct']} *", "buffers"), (f"const {names['shapes']} *", "shapes"),
                  ("const void *", "weights"), ("void *", "arena"), ("size_t", "arena_bytes")]  # fmt: skip
        defines = {names["symbols"]: len(ranges),
                   **{names[code]: value for code, value in ERROR_CODES.items()}}  # fmt: skip
        doc = _symbolic_doc(self.name, names, self.inputs, ranges, versions)
        return self._write(out, params, doc, defines, [shapes], functions, "int")


def _json_dim(dim: Dim) -> int | str:
    return dim_text(dim) if isinstance(dim, SymExpr) else int(dim)


def _static_doc(name: str, names: Mapping[str, str]) -> str:
    return (
        f"{names['function']}(&buffers, weights, arena) runs the model once:\n"
        f"  buffers  a {names['struct']}: a pointer to each input and output, dense row-major\n"
        f"  weights  the contents of {name}.weights ({names['weights']} bytes),\n"
        "           64-byte aligned\n"
        f"  arena    {names['arena']} bytes of scratch memory, 64-byte aligned;\n"
        "           calls that share an arena must not overlap in time"
    )


def _symbolic_doc(name: str, names: Mapping[str, str], inputs: Sequence[SymbolicSpec],
                  ranges: Mapping[str, Range], versions: Sequence[CVersion]) -> str:  # fmt: skip
    symbols = "".join(f"  {n:<8} {range_text(r)}\n" for n, r in sorted(ranges.items()))
    shapes = "".join(f"  {s.describe()}\n" for s in inputs)
    codes = "".join(f"  {names[code]:<24} {value}: {ERROR_DOCS[code].replace('NAME', name)}\n"
                    for code, value in ERROR_CODES.items())  # fmt: skip
    static = [v for v in versions if v.sizes is not None]
    generic = [v for v in versions if v.sizes is None]
    chosen = "".join(f"  {', '.join(f'{n}={v}' for n, v in sorted(version.sizes.items())):<24}"
                     f" arena {version.arena} bytes\n"
                     for version in static if version.sizes is not None)  # fmt: skip
    if generic and static:
        which = (f"It holds a version compiled for each of these sizes:\n{chosen}"
                 "and a generic one that runs at every other size, with an arena of\n"
                 f"{dim_text(generic[0].arena)} (and at least 64) bytes.\n\n")  # fmt: skip
    elif generic:
        which = ("One generic version runs at every size, with an arena of\n"
                 f"{dim_text(generic[0].arena)} (and at least 64) bytes.\n\n")  # fmt: skip
    else:
        which = (f"It holds a version for each of these sizes, and no other:\n{chosen}"
                 "(its ops do not all lower with symbolic sizes yet).\n\n")  # fmt: skip
    return (
        "The model is compiled for the sizes of its symbols (their ranges):\n"
        f"{symbols}"
        f"and takes its inputs at these shapes:\n{shapes}"
        "A symbol's size comes from the first input dim that is the symbol alone;\n"
        "every other input dim must agree with the sizes, and each size must lie\n"
        f"in its range.\n\n{which}"
        f"{names['prepare']}(&shapes, &arena_bytes) checks the inputs' shapes and\n"
        "gives the outputs' and the arena's size; then\n"
        f"{names['function']}(&buffers, &shapes, weights, arena, arena_bytes) runs the model:\n"
        f"  buffers  a {names['struct']}: a pointer to each input and output, dense row-major\n"
        f"  shapes   a {names['shapes']}: each input's and output's shape\n"
        f"  weights  the contents of {name}.weights ({names['weights']} bytes),\n"
        "           64-byte aligned\n"
        f"  arena    arena_bytes of scratch memory, 64-byte aligned, at least what\n"
        f"           {names['prepare']} says; calls that share an arena must not\n"
        "           overlap in time\n"
        f"Both check the shapes first and return {names['OK']} or an error code, with\n"
        f"{names['error']}() the message (it names the input, the axis and the symbol):\n"
        f"{codes}"
    ).rstrip("\n")
