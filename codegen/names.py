"""Names in messages and generated code: C++ identifiers, and the closest match to a typo."""

from __future__ import annotations

import difflib
import re

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# C++ keywords a kernel must not be named after.
CPP_KEYWORDS = frozenset(
    "alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t "
    "char16_t char32_t class compl concept const consteval constexpr constinit const_cast "
    "continue co_await co_return co_yield decltype default delete do double dynamic_cast "
    "else enum explicit export extern false float for friend goto if inline int long "
    "mutable namespace new noexcept not not_eq nullptr operator or or_eq private protected "
    "public register reinterpret_cast requires return short signed sizeof static "
    "static_assert static_cast struct switch template this thread_local throw true try "
    "typedef typeid typename union unsigned using virtual void volatile wchar_t while xor "
    "xor_eq".split()
)


def closest(word: str, choices, n: int = 3) -> list[str]:
    return difflib.get_close_matches(word, sorted(choices), n=n, cutoff=0.6)


def did_you_mean(word: str, choices, fallback: str) -> str:
    near = closest(word, choices)
    return "did you mean " + " or ".join(f"'{c}'" for c in near) + "?" if near else fallback


def is_cpp_identifier(name: object) -> bool:
    return isinstance(name, str) and bool(_IDENT.match(name)) and name not in CPP_KEYWORDS
