"""Schemathesis fuzzes every route of the service's OpenAPI document against a real ``minddata serve``
process: no 5xx answers except the deliberate 503 (overload, shutting down) and 504 (deadline)."""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, settings

from minddata.bench.serve_process import ServerProcess

PIPELINE = "infer224"


@pytest.fixture(scope="module")
def server():
    with ServerProcess([PIPELINE, "--max-batch", "4", "--max-delay-ms", "2", "--max-body-mb", "1"]) as proc:
        yield proc


@pytest.fixture(scope="module")
def api(server):
    return schemathesis.openapi.from_url(f"{server.url}/openapi.json")


schema = schemathesis.pytest.from_fixture("api")


@schema.parametrize()
@settings(max_examples=15, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
def test_no_unintended_server_errors(case):
    response = case.call(timeout=30)
    assert response.status_code < 500 or response.status_code in (503, 504), (
        f"{case.method} {case.path} answered {response.status_code}: {response.text[:500]}"
    )
