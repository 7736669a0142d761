"""Paths read from inside data files (COCO's ``file_name``, list files) stay inside the dataset.

A path from an annotation file is data, and data may be hostile or just wrong: ``../../x`` or
``/etc/hostname`` must not make a dataset read, and return, a file outside its folder. Every such
path is resolved against the dataset root and refused when it leaves it, symlinks included (the
check runs on the real path, when the file is read). Formats whose files legitimately hold absolute
paths pass ``trusted_roots``: folders, besides the dataset root, that paths may point into.

Errors name the data file, the entry and the rule, never the target's contents, and the same
message is given whether or not the target exists.

Examples:
    >>> import os, tempfile
    >>> root = tempfile.mkdtemp()
    >>> inside_root(root, "a/b.jpg", "CocoDataset", "images[0].file_name") == os.path.join(
    ...     os.path.realpath(root), "a", "b.jpg")
    True
    >>> inside_root(root, "../x.jpg", "CocoDataset", "images[1].file_name")
    Traceback (most recent call last):
    ...
    minddata.dataset._paths.PathEscapeError: CocoDataset: images[1].file_name '../x.jpg' leaves the dataset folder ...
"""

from __future__ import annotations

import os
from collections.abc import Sequence

__all__ = ["PathEscapeError", "check_trusted_roots", "inside_root"]


class PathEscapeError(ValueError):
    """A path from inside a data file points outside the dataset folder (and the trusted roots)."""


def check_trusted_roots(where: str, roots: Sequence[str | os.PathLike] | None) -> tuple[str, ...]:
    """``trusted_roots`` as real absolute folder paths; a clear error for anything else."""
    if roots is None:
        return ()
    if isinstance(roots, (str, os.PathLike)) or not all(isinstance(r, (str, os.PathLike)) for r in roots):
        raise TypeError(f"{where}: `trusted_roots` must be a list of folder paths. Found: {roots!r}")
    out = []
    for root in roots:
        path = os.fspath(root)
        if not os.path.isabs(path) or not os.path.isdir(path):
            raise ValueError(f"{where}: each of `trusted_roots` must be an existing absolute folder. Found: {path!r}")
        out.append(os.path.realpath(path))
    return tuple(out)


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def inside_root(
    root: str, name: object, where: str, entry: str, trusted_roots: Sequence[str] = (), *, resolve: bool = True
) -> str:
    """``name`` (from a data file's ``entry``) joined to ``root``; raises :class:`PathEscapeError`
    when the result leaves ``root`` and every one of ``trusted_roots``.

    ``resolve``: follow symlinks (``os.path.realpath``), as reading the file would; ``False`` checks
    the path's text only (cheap, for the first pass over an annotation file).
    """
    if not isinstance(name, str) or not name or "\x00" in name:
        raise PathEscapeError(f"{where}: {entry} must be a non-empty file path string. Found: {name!r}")
    real_root = os.path.realpath(root)
    joined = os.path.join(real_root, name)  # an absolute name replaces the root, as the OS would
    target = os.path.realpath(joined) if resolve else os.path.normpath(joined)
    allowed = (real_root, *trusted_roots)
    if any(_within(target, r) for r in allowed):
        return target
    hint = (
        "Paths in the data file must be relative to the dataset folder and stay inside it"
        + (" (symlinks are followed)" if resolve else "")
        + "; if the files really live elsewhere, pass trusted_roots=[<that folder>]"
    )
    raise PathEscapeError(f"{where}: {entry} {name!r} leaves the dataset folder {root}. {hint}")
