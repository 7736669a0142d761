"""docs/devices.md carries the table of device kernels generated from the registry (minddata._device_docs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from minddata._device_docs import (
    DOCS_PATH,
    TABLE_BEGIN,
    TABLE_END,
    device_kernel_table,
    main,
    render_devices_doc,
)
from minddata.ops.registry import op_facts, ops_on

ROOT = Path(__file__).resolve().parents[1]


def test_the_committed_devices_page_is_the_generated_one():
    text = (ROOT / DOCS_PATH).read_text(encoding="utf-8")
    assert render_devices_doc(text) == text, (
        f"{DOCS_PATH} is out of date with the kernel registry and the op facts: run "
        f"`python -m minddata._device_docs` and commit {DOCS_PATH}"
    )


def test_the_table_has_a_row_per_device_op_with_its_declared_tolerance():
    table = device_kernel_table()
    rows = {line.split(" | ")[0].removeprefix("| ").split(" (")[0].split(",")[0]: line
            for line in table.splitlines()[2:]}
    assert set(rows) == set(ops_on("GPU")) | set(ops_on("Dvpp"))
    largest, mean = op_facts("RandomRotation").tolerance("GPU")
    assert f"| {largest:g} (mean {mean:g}) |" in rows["RandomRotation"]
    assert "decodes" in rows["Decode"] and "nvjpg" in rows["Decode"]


def test_a_page_without_the_markers_is_refused_naming_them():
    with pytest.raises(ValueError, match="markers of the generated table are missing"):
        render_devices_doc("# Devices\n\nno table here\n")


def test_the_command_rewrites_only_the_table(tmp_path, capsys):
    page = tmp_path / "devices.md"
    page.write_text(f"# Devices\n\nbefore\n\n{TABLE_BEGIN}\n| stale |\n{TABLE_END}\n\nafter\n", encoding="utf-8")
    assert main([str(page)]) == 0
    text = page.read_text(encoding="utf-8")
    assert text == f"# Devices\n\nbefore\n\n{TABLE_BEGIN}\n{device_kernel_table()}{TABLE_END}\n\nafter\n"
    assert "updated" in capsys.readouterr().out
