"""`CNames`: model names become legal, distinct, unreserved C identifiers."""

from __future__ import annotations

import pytest

from ember.targets.cpu.c_names import CNames, is_c_identifier, is_reserved


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("input", "input"),
        ("input:0", "input_0"),
        ("a.b-c/d", "a_b_c_d"),
        ("x__y", "x_y"),  # no double underscore anywhere (reserved in C++)
        ("__init__", "init"),
        ("_Bool", "Bool"),  # no leading underscore (reserved at file scope)
        ("int", "int_"),  # a C keyword
        ("class", "class_"),  # a C++ keyword
        ("and", "and_"),  # a C++ alternative token
        ("int8_t", "int8_t_"),  # a <stdint.h> typedef
        ("INT32_MAX", "INT32_MAX_"),  # ... and macro
        ("errno", "errno_"),  # a macro of the C library
        ("linux", "linux_"),  # predefined as 1 by gcc -std=gnu17, the default
        ("7up", "input_7up"),
        ("", "input"),
        ("???", "input"),
        ("é", "input"),  # only ASCII identifiers are portable
        ("MODEL_ARENA_BYTES", "MODEL_ARENA_BYTES_"),  # the header's own macro
    ],
)
def test_claim(name: str, expected: str) -> None:
    assert CNames(["MODEL_ARENA_BYTES"]).claim(name, "input") == expected


def test_names_that_sanitise_alike_stay_distinct() -> None:
    names = CNames(["model_run"])
    claimed = [names.claim(n, "t") for n in ["a.b", "a-b", "a_b", "a_b_", "a_", "a", "model_run"]]
    assert claimed == ["a_b", "a_b_", "a_b_2", "a_b_3", "a", "a_", "model_run_"]
    assert len(set(claimed)) == len(claimed)
    assert all(is_c_identifier(c) and not is_reserved(c) for c in claimed)


@pytest.mark.parametrize(
    "identifier", ["return", "_x", "_X", "a__b", "uint_least16_t", "SIZE_MAX", "UINT64_C", "NULL"]
)
def test_reserved(identifier: str) -> None:
    assert is_reserved(identifier)


@pytest.mark.parametrize("identifier", ["x", "returns", "int8", "MODEL_X", "x_2", "size"])
def test_not_reserved(identifier: str) -> None:
    assert not is_reserved(identifier)
