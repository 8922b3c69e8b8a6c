"""Legal, distinct C identifiers for names that come from a model.

ONNX names are arbitrary strings (`input:0`, `int`, `1x`, `é`, the header's
own `MODEL_ARENA_BYTES`). A name the header declares must be an identifier
in both C and C++, must not be a keyword of either language or an
identifier the standards reserve (`__x`, `_X`, and `_x` at file scope), must
not be a macro that a program including the header may have defined (the
header's own, `<stdint.h>`'s, and the handful of everyday ones from the C
library), and must differ from every other name in the header.

`CNames.claim` turns a name into such an identifier deterministically:
characters outside `[A-Za-z0-9]` (and runs of them, underscores included)
become one `_`, leading and trailing `_` go, a name that is then empty or
starts with a digit gets the caller's prefix, and a result that is reserved
or already claimed gets `_`, then `_2`, `_3`, ... appended.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

C_KEYWORDS = frozenset("""
    auto break case char const continue default do double else enum extern float for goto if
    inline int long register restrict return short signed sizeof static struct switch typedef
    union unsigned void volatile while alignas alignof bool constexpr false nullptr
    static_assert thread_local true typeof typeof_unqual asm fortran
""".split())  # fmt: skip
"""C23's keywords (C89 to C23) and the common extensions `asm` and `fortran`."""

CPP_KEYWORDS = frozenset("""
    and and_eq bitand bitor catch char8_t char16_t char32_t class co_await co_return co_yield
    compl concept const_cast consteval constinit decltype delete dynamic_cast explicit export
    friend mutable namespace new noexcept not not_eq operator or or_eq private protected
    public reinterpret_cast requires static_cast template this throw try typeid typename
    using virtual wchar_t xor xor_eq
""".split())  # fmt: skip
"""C++23's keywords and alternative tokens that C does not already have."""

EVERYDAY_MACROS = frozenset("""
    NULL EOF BUFSIZ FILENAME_MAX stdin stdout stderr errno assert offsetof EXIT_SUCCESS
    EXIT_FAILURE RAND_MAX MB_CUR_MAX CHAR_BIT INT_MAX INT_MIN UINT_MAX LONG_MAX LONG_MIN
    ULONG_MAX linux unix i386
""".split())  # fmt: skip
"""Macros of <stdio.h>, <stdlib.h>, <errno.h>, <assert.h>, <stddef.h> and
<limits.h> (a member named `errno` would break any program that includes
<errno.h> before the header), and those GCC and Clang predefine in their
default GNU modes (`linux` and `unix` are 1 there)."""

# The typedefs and macros of <stdint.h>, which the header includes.
_STDINT = re.compile(
    r"u?int(_least|_fast)?\d+_t|u?int(max|ptr)_t"
    r"|U?INT(_LEAST|_FAST)?\d+_(MIN|MAX)|U?INT\d+_C|U?INTMAX_(MIN|MAX|C)|U?INTPTR_(MIN|MAX)"
    r"|PTRDIFF_(MIN|MAX)|SIG_ATOMIC_(MIN|MAX)|SIZE_MAX|WCHAR_(MIN|MAX)|WINT_(MIN|MAX)"
)
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NOT_ALNUM = re.compile(r"[^A-Za-z0-9]+")


def is_c_identifier(text: str) -> bool:
    """Whether `text` is an identifier in the basic (ASCII) character set."""
    return _IDENTIFIER.fullmatch(text) is not None


def is_reserved(identifier: str) -> bool:
    """Whether a header must not declare `identifier` (see the module doc)."""
    return (
        identifier in C_KEYWORDS
        or identifier in CPP_KEYWORDS
        or identifier in EVERYDAY_MACROS
        or identifier.startswith("_")
        or "__" in identifier
        or _STDINT.fullmatch(identifier) is not None
    )


class CNames:
    """Hands out distinct, unreserved C identifiers; `taken` are the header's own."""

    def __init__(self, taken: Iterable[str] = ()) -> None:
        self.claimed: set[str] = set(taken)

    def claim(self, name: str, prefix: str) -> str:
        """An identifier for `name`; `prefix` starts one that would be empty
        or start with a digit (e.g. `input` for an input)."""
        base = _NOT_ALNUM.sub("_", name).strip("_")
        if not base or base[0].isdigit():
            base = f"{prefix}_{base}" if base else prefix
        candidates = (base, f"{base}_", *(f"{base}_{n}" for n in range(2, len(self.claimed) + 3)))
        chosen = next(c for c in candidates if c not in self.claimed and not is_reserved(c))
        self.claimed.add(chosen)
        return chosen
