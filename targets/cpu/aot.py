"""Ahead-of-time output: an object file, a `.so` linked by the system compiler, a C header.

LLVM writes the object; the system `cc` links it, because it knows the
platform's crt files, libm and linker flags and we would only get them wrong.
A model with parallel loops gets its own copy of the thread pool linked in
(`thread_pool_part`): every symbol of it internal or hidden but a per-model
`NAME_set_threads`, so two Ember libraries in one process never share or
clash, and the library needs only libc's POSIX threads. The model's module
comes in parts (`module_parts.py`), compiled on the codegen workers
(`parallel_codegen.py`) as the JIT's are; the library links their objects.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from llvmlite import ir

from ember.lowering.loop_to_llvm.parallel import PARALLEL_FOR
from ember.output_files import write_bytes, write_text
from ember.targets.cpu.c_names import is_c_identifier, is_reserved
from ember.targets.cpu.errors import CodegenError
from ember.targets.cpu.module_parts import hide
from ember.targets.cpu.runtime import runtime_module, set_threads_stub

PTHREAD_LINK_ARGS = ("-lpthread",)
"""What a library with the thread pool links with (a no-op where libc has
the threads, as glibc 2.34 and later do; needed before)."""


def thread_pool_part(calls_pool: bool, triple: str, set_threads: str) -> str:
    """The library's thread pool as a part of its own (IR text), for parts
    that call `ember_parallel_for` (`calls_pool`): that entry hidden (the
    parts reach it, the library does not export it), `void set_threads(int64_t)`
    (the run-time override of the thread count, `runtime.py`) exported,
    everything else internal. Without parallel loops, a `set_threads` that
    does nothing, so the C API is the same either way."""
    if calls_pool:
        return hide(str(runtime_module(triple, set_threads)), [PARALLEL_FOR])
    stub = ir.Module(name="ember_runtime")
    stub.triple = triple
    set_threads_stub(stub, set_threads)
    return str(stub)


def find_c_compiler() -> str:
    """`$CC` if set and found, else `cc`, `gcc` or `clang` from PATH."""
    candidates = [os.environ.get("CC", ""), "cc", "gcc", "clang"]
    for name in filter(None, candidates):
        path = shutil.which(name)
        if path is not None:
            return path
    raise CodegenError(
        "no C compiler found to link the shared library (looked for $CC, cc, gcc, clang); "
        "install one, e.g. `apt-get install gcc`"
    )


def link_shared_library(
    object_code: bytes | Sequence[bytes],
    out_path: str | os.PathLike[str],
    extra_args: Sequence[str] = (),
    c_sources: Sequence[Path] = (),
) -> Path:
    """Link `object_code` (one object, or several: a module's parts) into
    the shared library `out_path` (with libm) and return its path;
    `c_sources` (C11, e.g. an entry check) are compiled into it, with their
    own directories on the include path."""
    out = Path(out_path)
    compiler = find_c_compiler()
    includes = sorted({f"-I{source.parent}" for source in c_sources})
    c_flags = ["-std=c11", "-O2", "-fPIC", *includes] if c_sources else []
    objects = [object_code] if isinstance(object_code, bytes) else list(object_code)
    with tempfile.TemporaryDirectory(prefix="ember-link-") as scratch:
        names = (
            [f"{out.stem}.o"]
            if len(objects) == 1
            else [f"{out.stem}_{i}.o" for i in range(len(objects))]
        )
        paths = [Path(scratch) / name for name in names]
        for path, code in zip(paths, objects):
            path.write_bytes(code)
        # Linked in the scratch folder, then written whole: a failed link
        # leaves no library, and a library that was there stays.
        linked = Path(scratch) / out.name
        command = [compiler, "-shared", *c_flags, "-o", str(linked), *map(str, paths),
                   *map(str, c_sources), "-lm", *extra_args]  # fmt: skip
        try:
            result = subprocess.run(command, capture_output=True, text=True, check=False)
        except OSError as exc:
            raise CodegenError(f"cannot run the C compiler {compiler}: {exc}") from exc
        if result.returncode != 0:
            stderr = " | ".join(filter(None, map(str.strip, result.stderr.splitlines())))
            raise CodegenError(
                f"linking {out} failed ({' '.join(command)} exited with "
                f"{result.returncode}): {stderr or '(no output)'}"
            )
        write_bytes(out, linked.read_bytes())
        os.chmod(out, linked.stat().st_mode & 0o777)  # executable, as the linker made it
    return out


@dataclass(frozen=True)
class CField:
    """One member of a struct in a header: `ctype name; /* comment */`, or
    `ctype name[length];` for an array."""

    ctype: str
    name: str
    comment: str = ""
    length: int | None = None


@dataclass(frozen=True)
class CFunction:
    """`returns name(params);` after the main declaration, with `comment` above it."""

    name: str
    params: Sequence[tuple[str, str]]
    comment: str = ""
    returns: str = "void"


@dataclass(frozen=True)
class CStruct:
    """`typedef struct name { fields } name;`, with `comment` above it."""

    name: str
    fields: Sequence[CField]
    comment: str = ""


def write_c_header(
    path: str | os.PathLike[str],
    function_name: str,
    params: list[tuple[str, str]],
    doc: str,
    defines: dict[str, int] | None = None,
    structs: Sequence[CStruct] = (),
    functions: Sequence[CFunction] = (),
    returns: str = "void",
) -> Path:
    """Write a header declaring `returns function_name(params);`, usable from C and C++.

    `params` holds `(C type, name)` pairs, e.g. `("const float *", "input")`;
    `defines` adds integer macros (e.g. buffer sizes) and `structs` typedefs
    before the declaration, `functions` more declarations after it. Every name must be an identifier that is no C or
    C++ keyword and not reserved (`c_names.is_reserved`), and every name the
    header declares at file scope or as a macro must be distinct from the
    others and from every parameter and struct member (one named like a macro
    would be expanded), so the header compiles wherever it is included.
    """
    defines = defines or {}
    out = Path(path)
    guard = "EMBER_" + re.sub(r"[^A-Za-z0-9]+", "_", out.name).strip("_").upper()
    file_scope = [guard, function_name, *defines, *(struct.name for struct in structs),
                  *(f.name for f in functions)]  # fmt: skip
    parameters = [name for _, name in params]
    members = [*parameters, *(field.name for struct in structs for field in struct.fields),
               *(name for f in functions for _, name in f.params)]  # fmt: skip
    for name in [*file_scope, *members]:
        if not is_c_identifier(name):
            raise CodegenError(f"'{name}' is not a valid C identifier for the header")
        if is_reserved(name):
            raise CodegenError(f"'{name}' is a C or C++ keyword or a reserved identifier")
    clashes = _duplicates(file_scope) | (set(file_scope) & set(members))
    for scope in [parameters, *([f.name for f in struct.fields] for struct in structs),
                  *([name for _, name in f.params] for f in functions)]:  # fmt: skip
        clashes |= _duplicates(scope)
    if clashes:
        raise CodegenError(f"the header would declare {', '.join(sorted(clashes))} twice")
    arguments = ", ".join(_declarator(ctype, name) for ctype, name in params) or "void"
    write_text(
        out,
        _comment(doc)
        + f"#ifndef {guard}\n#define {guard}\n\n#include <stddef.h>\n#include <stdint.h>\n\n"
        + "".join(f"#define {key} {value}\n" for key, value in defines.items())
        + ("\n" if defines else "")
        + '#ifdef __cplusplus\nextern "C" {\n#endif\n\n'
        + "".join(map(_struct, structs))
        + f"{_declarator(returns, function_name)}({arguments});\n\n"
        + "".join(map(_function, functions))
        + "#ifdef __cplusplus\n}\n#endif\n\n"
        f"#endif /* {guard} */\n",
    )
    return out


def _comment_text(text: str) -> str:
    """`text` that cannot end a comment early, nor splice lines by a trigraph."""
    return re.sub(r"\?(?=\?)", "?\\\\", text.replace("*/", "* /"))


def _comment(doc: str) -> str:
    lines = _comment_text(doc).splitlines()
    if not lines:
        return ""
    return "/*\n" + "".join(f" *{' ' if line else ''}{line}\n" for line in lines) + " */\n"


def _struct(struct: CStruct) -> str:
    fields = "".join(
        f"    {_declarator(field.ctype, field.name)}"
        + ("" if field.length is None else f"[{field.length}]")
        + ";"
        + (f"  /* {_comment_text(field.comment)} */" if field.comment else "")
        + "\n"
        for field in struct.fields
    )
    return (
        _comment(struct.comment) + f"typedef struct {struct.name} {{\n{fields}}} {struct.name};\n\n"
    )


def _function(function: CFunction) -> str:
    arguments = ", ".join(_declarator(ctype, name) for ctype, name in function.params) or "void"
    declarator = _declarator(function.returns, function.name)
    return _comment(function.comment) + f"{declarator}({arguments});\n\n"


def _duplicates(names: Sequence[str]) -> set[str]:
    return {name for name, count in Counter(names).items() if count > 1}


def _declarator(ctype: str, name: str) -> str:
    """`float *x` rather than `float * x`; `int64_t n` for plain types."""
    ctype = ctype.strip()
    return f"{ctype}{name}" if ctype.endswith("*") else f"{ctype} {name}"
