"""Probes: a short seeded mutation-fuzz pass over TFRecord, CSV and images (bench/fuzz.py).

Every mutated input must give well-formed rows or a minddata error naming its file; anything else
(another exception type, an error without the file, a malformed row) is counted and fails the test.
The long run is ``python -m minddata.bench.fuzz`` (see bench/RESULTS.md).
"""

from __future__ import annotations

import collections

import pytest

from minddata.bench.fuzz import TARGETS, run

INPUTS_PER_TARGET = 60


@pytest.mark.parametrize("target", list(TARGETS))
def test_mutated_inputs_give_rows_or_an_error_naming_the_file(target):
    outcomes = run({target: TARGETS[target]}, INPUTS_PER_TARGET, None, seed=20261201)[target]
    crashes = {k: n for k, n in outcomes.items() if k.startswith("crash")}
    assert not crashes, f"{sum(crashes.values())} of {INPUTS_PER_TARGET} inputs crashed: {crashes}"
    assert sum(outcomes.values()) == INPUTS_PER_TARGET
    # The mutator must reach both outcomes, or the probe tests nothing.
    assert outcomes["rows"] and outcomes["error"], collections.Counter(outcomes)


def test_the_fuzz_cli_reports_outcomes_by_kind(capsys):
    from minddata.bench.fuzz import main

    assert main(["--count", "3", "--targets", "csv", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "csv: 3 inputs:" in out and "0 crash(es)" in out
