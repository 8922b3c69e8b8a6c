"""Ahead-of-time output: an object file, a `.so` linked by the system compiler, a C header.

LLVM writes the object; the system `cc` links it, because it knows the
platform's crt files, libm and linker flags and we would only get them wrong.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

import llvmlite.binding as llvm

from ember.targets.cpu.errors import CodegenError

_C_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def emit_object(module: llvm.ModuleRef, target_machine: llvm.TargetMachine) -> bytes:
    """The module's machine code as an object file (ELF on Linux)."""
    try:
        return target_machine.emit_object(module)
    except RuntimeError as exc:
        raise CodegenError(f"LLVM code generation failed: {exc}") from exc


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
    object_code: bytes, out_path: str | os.PathLike[str], extra_args: Sequence[str] = ()
) -> Path:
    """Link `object_code` into the shared library `out_path` (with libm) and return its path."""
    out = Path(out_path)
    compiler = find_c_compiler()
    with tempfile.TemporaryDirectory(prefix="ember-link-") as scratch:
        obj = Path(scratch) / f"{out.stem}.o"
        obj.write_bytes(object_code)
        command = [compiler, "-shared", "-o", str(out), str(obj), "-lm", *extra_args]
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
    return out


def write_c_header(
    path: str | os.PathLike[str],
    function_name: str,
    params: list[tuple[str, str]],
    doc: str,
    defines: dict[str, int] | None = None,
) -> Path:
    """Write a header declaring `void function_name(params);`, usable from C and C++.

    `params` holds `(C type, name)` pairs, e.g. `("const float *", "input")`;
    `defines` adds integer macros (e.g. buffer sizes) before the declaration.
    """
    defines = defines or {}
    for name in [function_name, *(name for _, name in params), *defines]:
        if not _C_IDENTIFIER.fullmatch(name):
            raise CodegenError(f"'{name}' is not a valid C identifier for the header")
    out = Path(path)
    guard = "EMBER_" + re.sub(r"[^A-Za-z0-9]", "_", out.name).upper()
    arguments = ", ".join(_declarator(ctype, name) for ctype, name in params) or "void"
    comment = "\n".join(
        f" *{' ' if line else ''}{line}" for line in doc.replace("*/", "* /").splitlines()
    )
    out.write_text(
        (f"/*\n{comment}\n */\n" if comment else "")
        + f"#ifndef {guard}\n#define {guard}\n\n#include <stdint.h>\n\n"
        + "".join(f"#define {key} {value}\n" for key, value in defines.items())
        + ("\n" if defines else "")
        + '#ifdef __cplusplus\nextern "C" {\n#endif\n\n'
        f"void {function_name}({arguments});\n\n"
        "#ifdef __cplusplus\n}\n#endif\n\n"
        f"#endif /* {guard} */\n"
    )
    return out


def _declarator(ctype: str, name: str) -> str:
    """`float *x` rather than `float * x`; `int64_t n` for plain types."""
    ctype = ctype.strip()
    return f"{ctype}{name}" if ctype.endswith("*") else f"{ctype} {name}"
