"""Files written whole or not at all.

A command that fails half-way must not leave an empty or partial output
file behind, where a build system or a user would take it for a result:
`written(path)` writes to a temporary name in the same directory (so the
rename stays on one file system) and renames it to `path` only when the
`with` block ends without an exception; otherwise it removes it, and `path`
keeps whatever it held before. A path that is not a regular file
(`/dev/null`, `/dev/stdout`, a named pipe) is written in place.

    with written("model.mlir") as stream:
        print_module(module, stream)

Every command that writes a file (`ember-opt -o`, `ember import -o`, the
files of `ember compile -o DIR`, `ember run --output`) writes it this way.
"""

from __future__ import annotations

import errno
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, Literal


@contextmanager
def written(path: str | os.PathLike[str], mode: Literal["w", "wb"] = "w") -> Iterator[IO[Any]]:
    """A stream onto a temporary file next to `path`, renamed to `path`
    when the block succeeds and removed when it raises."""
    target = Path(path)
    if target.is_dir():
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(target))
    if target.exists() and not target.is_file():
        # /dev/null, /dev/stdout, a named pipe: written in place, never replaced.
        with open(target, mode) as stream:
            yield stream
        return
    try:
        descriptor, scratch = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp",
                                               dir=target.parent)  # fmt: skip
    except OSError as error:  # named after the file asked for, not the scratch one
        raise type(error)(error.errno, error.strerror, str(target)) from None
    try:
        with os.fdopen(descriptor, mode) as stream:
            yield stream
        # mkstemp makes the file private (0600); a result gets the usual mode.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(scratch, 0o666 & ~umask)
        os.replace(scratch, target)
    except BaseException:
        Path(scratch).unlink(missing_ok=True)
        raise


def write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """`Path.write_bytes`, whole or not at all."""
    with written(path, "wb") as stream:
        stream.write(data)


def write_text(path: str | os.PathLike[str], text: str) -> None:
    """`Path.write_text`, whole or not at all."""
    with written(path) as stream:
        stream.write(text)


__all__ = ["write_bytes", "write_text", "written"]
