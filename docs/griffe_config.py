"""Griffe extension for the API reference: ``minddata.config`` defines most getters and setters when it is
imported, from each setting's one declaration (a field of ``RunOptions``), and appends the settings
table to its docstring then; reading the source alone (griffe's static analysis) sees neither. This adds
what importing the module defines to what the source shows."""

from __future__ import annotations

import sys
from typing import Any

import griffe


class GeneratedSettings(griffe.Extension):
    def on_module_members(self, *, mod: griffe.Module, agent: Any = None, **kwargs: Any) -> None:
        if mod.path != "minddata.config":
            return
        inspected = griffe.inspect(
            mod.path,
            filepath=mod.filepath,
            import_paths=[mod.filepath.parents[1], *sys.path],  # griffe imports with exactly these
            docstring_parser=getattr(agent, "docstring_parser", None),
            docstring_options=getattr(agent, "docstring_options", None),
        )
        for name, member in inspected.members.items():
            if name not in mod.members and not name.startswith("_"):
                mod.set_member(name, member)
        if inspected.docstring is not None:
            inspected.docstring.parent = mod
            mod.docstring = inspected.docstring
