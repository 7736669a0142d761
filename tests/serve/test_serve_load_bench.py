"""bench/serve_load.py runs end to end on a tiny load (a smoke test: no figure is checked), overload included."""

from __future__ import annotations

import json

import pytest

from minddata.bench import serve_load


def test_serve_load_smoke(tmp_path, monkeypatch):
    monkeypatch.setenv("MINDDATA_CACHE", str(tmp_path / "cache"))  # the generated JPEGs go there
    out = tmp_path / "load.json"
    args = ["--images", "16", "--requests", "24", "--cost-requests", "24", "--seconds", "5", "--concurrency", "1,8",
            "--overload-s", "2",
            "--pipelines", "infer224", "--json", str(out)]
    assert serve_load.main(args) == 0
    (result,) = json.loads(out.read_text())["results"]
    assert [level["status"] for level in result["serve"]] == [{"200": 24}, {"200": 24}]
    overload = result["overload"]
    assert set(overload["status"]) <= {"200", "503"}, overload["status"]  # every request answered, none failed
    assert overload["server_alive"] and result["serve_exit_status"] == 0
    assert result["baseline"]["status"] == {"200": 24}
    assert [cost["answer"] for cost in result["cpu_cost"]] == [".npy", "JSON", "binary tensor (v2 infer)"]
    assert all(cost["served"] == 24 and cost["server_cpu_ms_per_image"] > 0 and cost["client_cpu_ms_per_image"] > 0
               for cost in result["cpu_cost"])
    assert result["offline_cpu_ms_per_image"] > 0
    # the server's own count of its refusals is the client's count of 503s
    assert overload["server_refusals"] == overload["status"].get("503", 0)


def test_histogram_reads_give_quantile_bounds_and_the_share_within_a_bound():
    inf = float("inf")
    before = {0.005: 10.0, 0.01: 10.0, 0.05: 10.0, inf: 10.0, "count": 10.0}
    after = {0.005: 60.0, 0.01: 100.0, 0.05: 110.0, inf: 110.0, "count": 110.0}  # 100 new: 50, 40, 10
    assert serve_load._quantile_bound_ms(before, after, 50) == 5.0
    assert serve_load._quantile_bound_ms(before, after, 99) == 50.0
    assert serve_load._share_within(before, after, 0.01) == 0.9
    with pytest.raises(ValueError, match="0.02 s is not a bucket bound"):
        serve_load._share_within(before, after, 0.02)
