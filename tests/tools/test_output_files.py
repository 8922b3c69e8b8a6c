"""`ember.output_files.written`: a file is written whole or not at all, and
a path that is not a regular file is written in place, never replaced."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ember.output_files import write_bytes, written


def test_a_file_appears_only_when_it_is_whole(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    with written(path) as stream:
        stream.write("half")
        assert not path.exists()
        stream.write(" and the rest")
    assert path.read_text() == "half and the rest"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]
    umask = os.umask(0)
    os.umask(umask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask


def test_a_failure_leaves_nothing_and_keeps_what_was_there(tmp_path: Path) -> None:
    path = tmp_path / "out.bin"
    with pytest.raises(RuntimeError), written(path, "wb") as stream:
        stream.write(b"partial")
        raise RuntimeError("the command failed half-way")
    assert list(tmp_path.iterdir()) == []
    write_bytes(path, b"old")
    with pytest.raises(RuntimeError), written(path, "wb") as stream:
        stream.write(b"new but partial")
        raise RuntimeError("again")
    assert path.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.bin"]


def test_a_device_is_written_in_place(tmp_path: Path) -> None:
    with written("/dev/null") as stream:
        stream.write("nothing")
    assert Path("/dev/null").is_char_device()


def test_errors_name_the_file_asked_for(tmp_path: Path) -> None:
    with pytest.raises(IsADirectoryError) as directory, written(tmp_path):
        pass
    assert directory.value.filename == str(tmp_path)
    missing = tmp_path / "no" / "out.txt"
    with pytest.raises(FileNotFoundError) as absent, written(missing):
        pass
    assert absent.value.filename == str(missing)
