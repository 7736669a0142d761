"""ICU regular expressions (the syntax of MindSpore's text ops) on the ``regex`` package.

``regex`` reads nearly all of ICU's syntax (``\\p{P}``, ``\\p{Han}``, possessive quantifiers); what it
lacks is rewritten here: ``\\x{hhhh}`` code points. ICU's replacement strings (``$1``, ``${name}``,
``\\$``) are expanded by :func:`expand`, as ICU's ``appendReplacement`` does.
"""

from __future__ import annotations

import functools
from typing import Any

__all__ = ["compile_icu", "expand"]


def _rewrite(pattern: str) -> str:
    out = []
    i = 0
    n = len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            if pattern[i + 1] == "x" and i + 2 < n and pattern[i + 2] == "{":
                end = pattern.find("}", i + 3)
                digits = pattern[i + 3 : end] if end > 0 else ""
                if digits and all(ch in "0123456789abcdefABCDEF" for ch in digits):
                    out.append(f"\\U{int(digits, 16):08X}")
                    i = end + 1
                    continue
            out.append(pattern[i : i + 2])
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


@functools.lru_cache(maxsize=256)
def compile_icu(pattern: str) -> Any:
    """The compiled ``regex`` pattern for an ICU ``pattern`` (raises ``regex.error`` when invalid)."""
    try:
        import regex
    except ImportError:
        raise ImportError(
            "the text ops' patterns need the regex package: pip install 'minddata[text]'"
        ) from None
    return regex.compile(_rewrite(pattern), regex.V0)


def expand(match: Any, template: str) -> str:
    """ICU's replacement: ``$n`` and ``${name}`` insert groups, a backslash makes the next character
    literal, everything else is literal."""
    out = []
    i = 0
    n = len(template)
    while i < n:
        c = template[i]
        if c == "\\" and i + 1 < n:
            out.append(template[i + 1])
            i += 2
        elif c == "$" and i + 1 < n and template[i + 1].isdigit():
            j = i + 1
            # ICU takes as many digits as still name an existing group.
            while j < n and template[j].isdigit() and int(template[i + 1 : j + 1]) <= match.re.groups:
                j += 1
            if j == i + 1:
                raise ValueError(
                    f"replacement {template!r} refers to group ${template[i + 1]}, which the pattern lacks"
                )
            out.append(match.group(int(template[i + 1 : j])) or "")
            i = j
        elif c == "$" and template.startswith("{", i + 1) and "}" in template[i + 2 :]:
            end = template.index("}", i + 2)
            out.append(match.group(template[i + 2 : end]) or "")
            i = end + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)
