"""``python -m minddata.bench.object_store`` runs end to end on a tiny image set: its table and JSON
have every case, and its S3 server is gone when it exits. (Structure only: speed is not checked.)"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CASES = [("local files", None), ("local shards", None),
         *((source, ms) for ms in (0, 20) for source in ("s3 ImageFolder", "s3 WebDataset", "s3 WebDataset, index files",
                                                          "s3 WebDataset, index kept"))]


@pytest.mark.slow
def test_quick_run_prints_every_case_and_stops_its_server(tmp_path):
    env = dict(os.environ, MINDDATA_CACHE=str(tmp_path / "cache"),
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    out = tmp_path / "result.json"
    done = subprocess.run(
        [sys.executable, "-m", "minddata.bench.object_store", "--quick", "--rounds", "1", "--images", "20",
         "--shard-images", "8", "--json", str(out)],
        capture_output=True, text=True, timeout=110, env=env, cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("source"))
    assert lines[header].split() == ["source", "latency", "images", "images/s", "vs", "local", "vs", "local,", "same",
                                     "source", "steady", "img/s",
                                     "steady", "vs", "local", "peak", "RSS", "MB", "server", "CPU", "ms/image",
                                     "pipeline", "CPU", "ms/image", "proxy", "CPU", "ms/image"]
    rows = [re.split(r"\s{2,}", line.strip()) for line in lines[header + 2:header + 2 + len(CASES)]]
    assert [(r[0], r[1]) for r in rows] == [(s, "-" if ms is None else f"{ms} ms") for s, ms in CASES]
    assert all(r[2] == "20" and float(r[3]) > 0 for r in rows) and rows[0][4] == "1.00"
    assert rows[0][5] == rows[1][5] == "1.00"  # each local source against itself
    # shards against the local shards: the same ratio to local files, divided by theirs
    local_shards = float(rows[1][3])
    assert all(float(r[5]) == pytest.approx(float(r[3]) / local_shards, abs=0.011) for r in rows if "WebDataset" in r[0])
    # server CPU (an index kept or read from its file leaves a 20-image case a few GETs: below the clock's tick), pipeline CPU
    assert all(float(r[9]) > 0 for r in rows[2:] if "index" not in r[0]) and all(float(r[10]) > 0 for r in rows)
    assert [r[11] != "-" for r in rows] == [ms == 20 for _, ms in CASES]  # the proxy's CPU, where there is one
    report = json.loads(out.read_text())
    assert [(c["source"], c["latency_ms"]) for c in report["cases"]] == CASES
    assert all(len(c["rounds_images_per_s"]) == 1 and c["peak_rss_mb"] > 0 for c in report["cases"])
    port = int(re.search(r"to http://127\.0\.0\.1:(\d+)", done.stdout).group(1))
    with socket.socket() as s, pytest.raises(OSError):
        s.settimeout(2)
        s.connect(("127.0.0.1", port))
