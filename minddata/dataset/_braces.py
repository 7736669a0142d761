"""Brace patterns in file names, as the ``braceexpand`` package (what ``webdataset`` uses) expands them.

``shard-{000000..000099}.tar`` (a range: zero-padded when a bound starts with 0), ``{0..10..2}`` (a
step), ``{9..0}`` (downwards), ``{a..e}`` (letters), ``{train,val}`` (a list, whose items may hold
braces of their own: ``{a,b{1..2}}``), several groups multiplied out, ``\\{`` for a literal brace. A
group that is neither a range nor a list (``{x}``) stays as it is. Every source that takes a file
pattern expands it here (:func:`minddata.dataset._files.expand_files`, ``WebDataset``), before globs
are matched or buckets listed.
"""

from __future__ import annotations

import re
import string

from minddata.errors import ArgumentError

__all__ = ["brace_expand", "MAX_NAMES"]

# A pattern that names more files than this is a mistake (a missing ".." bound, a typo in a width).
MAX_NAMES = 1_000_000
_LETTERS = string.ascii_uppercase + string.ascii_lowercase
_INT_RANGE = re.compile(r"(-?\d+)\.\.(-?\d+)(?:\.\.-?(\d+))?")
_CHAR_RANGE = re.compile(r"([A-Za-z])\.\.([A-Za-z])(?:\.\.-?(\d+))?")
_ESCAPED = re.compile(r"\\(.)")


def brace_expand(pattern: str, where: str | None = None) -> list[str]:
    """Every name ``pattern`` stands for, in order (the pattern itself when it has no group); errors
    (an unclosed group, too many names) start with ``where``.

    >>> brace_expand("s-{000..004..2}.tar")
    ['s-000.tar', 's-002.tar', 's-004.tar']
    >>> brace_expand("{train,val{1..2}}/x")
    ['train/x', 'val1/x', 'val2/x']
    """
    if "{" not in pattern:  # backslashes kept: they are escapes only where braces are expanded
        return [pattern]
    try:
        names = _pattern(pattern, pattern)
    except ArgumentError as error:
        if where is None:
            raise
        raise ArgumentError(f"{where}: {error}") from None
    return [_ESCAPED.sub(r"\1", name) for name in names]


def _check_count(pattern: str, count: int) -> None:
    if count > MAX_NAMES:
        raise ArgumentError(
            f"the brace pattern {pattern} stands for more than {MAX_NAMES:,} names. Found: {count:,} or more. "
            "Check its ranges (a bound or a width mistyped), or pass a glob or a list."
        )


def _pattern(text: str, whole: str) -> list[str]:
    """The names of ``text``: its literal parts and top-level groups multiplied out."""
    parts: list[list[str]] = []
    start = pos = depth = 0
    while pos < len(text):
        char = text[pos]
        if char == "\\":
            pos += 2
            continue
        if char == "{":
            if depth == 0 and pos > start:
                parts.append([text[start:pos]])
                start = pos
            depth += 1
        elif char == "}" and depth > 0:
            depth -= 1
            if depth == 0:
                body = text[start + 1:pos]
                choices = _group(body, whole)
                if choices is None:  # not a range or a list: "{", the names of its body, "}"
                    parts.extend([["{"], _pattern(body, whole), ["}"]])
                else:
                    parts.append(choices)
                start = pos + 1
        pos += 1
    if depth:
        raise ArgumentError(
            f"the brace pattern {whole} has a '{{' without its '}}'. Close the group, or write a literal brace "
            "as '\\{'."
        )
    if start < len(text):
        parts.append([text[start:]])
    names = [""]
    for choices in parts:
        _check_count(whole, len(names) * len(choices))
        names = [name + choice for name in names for choice in choices]
    return names


def _group(body: str, whole: str) -> list[str] | None:
    """The names of one ``{body}`` group: a range or a list; None when it is neither (kept literally)."""
    numbers = _INT_RANGE.fullmatch(body)
    if numbers:
        return _int_range(*numbers.groups(), whole=whole)
    letters = _CHAR_RANGE.fullmatch(body)
    if letters:
        return _char_range(*letters.groups())
    items: list[str] = []
    start = pos = depth = 0
    while pos < len(body):
        char = body[pos]
        if char == "\\":
            pos += 2
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        elif char == "," and depth == 0:
            items.append(body[start:pos])
            start = pos + 1
        pos += 1
    if depth or not items:
        return None
    items.append(body[start:])
    out: list[str] = []
    for item in items:
        out.extend(_pattern(item, whole))
        _check_count(whole, len(out))
    return out


def _int_range(first: str, last: str, step: str | None, *, whole: str) -> list[str]:
    """``{first..last..step}``: zero-padded to the longer bound when a bound (not 0 itself) starts with 0."""
    padded = any(s.startswith(("0", "-0")) for s in (first, last) if s not in ("0", "-0"))
    width = max(len(first), len(last)) if padded else 0
    a, b, by = int(first), int(last), (int(step) or 1) if step else 1
    numbers = range(a, b + 1, by) if a < b else range(a, b - 1, -by)
    _check_count(whole, len(numbers))
    return [f"{i:0{width}d}" for i in numbers]


def _char_range(first: str, last: str, step: str | None) -> list[str]:
    by = (int(step) or 1) if step else 1
    a, b = _LETTERS.index(first), _LETTERS.index(last)
    if a < b:
        return list(_LETTERS[a:b + 1:by])
    return list(_LETTERS[a:(b - 1 if b else None):-by])
