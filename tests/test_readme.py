"""The README's promises: its example runs as written, and its test command installs pinned versions."""

from __future__ import annotations

import re
import subprocess
import sys
from importlib.metadata import requires
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]


def _first_pipeline_code() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## A first pipeline"):]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_first_pipeline_runs_as_written_in_an_empty_folder(tmp_path):
    done = subprocess.run([sys.executable, "-c", _first_pipeline_code()], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    printed = done.stdout.splitlines()
    assert len(printed) == 200 // 32, done.stdout  # drop_remainder: 6 full batches of 200 images
    assert all(line.startswith("(32, 3, 224, 224) [") for line in printed), done.stdout


def _extra_requirements(extra: str, seen: set[str] | None = None) -> set[str]:
    """The distribution names the installed ``minddata[extra]`` asks for on this machine, through the
    extras it names of itself (``minddata[torch]`` inside ``dev``)."""
    seen = seen if seen is not None else set()
    seen.add(extra)
    names: set[str] = set()
    for line in requires("minddata") or []:
        requirement = Requirement(line)
        if requirement.marker is None or not requirement.marker.evaluate({"extra": extra}):
            continue
        if canonicalize_name(requirement.name) == "minddata":
            for inner in requirement.extras - seen:
                names |= _extra_requirements(inner, seen)
        else:
            names.add(canonicalize_name(requirement.name))
    return names


def test_constraints_pin_everything_the_dev_extra_installs():
    pinned = {
        canonicalize_name(match.group(1))
        for match in re.finditer(r"^([A-Za-z0-9_.\-]+)==", (ROOT / "constraints.txt").read_text(), re.M)
    }
    wanted = _extra_requirements("dev")
    assert {"pytest", "torch", "ray", "schemathesis"} <= wanted, wanted
    assert not wanted - pinned, (
        f"constraints.txt pins no version of {sorted(wanted - pinned)}, which the dev extra installs: "
        "run `bash .ci/pin` to refresh it"
    )
