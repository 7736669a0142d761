"""The per-row random streams: a context's generator, reused from row to row, draws what a fresh
``row_rng`` for that row draws."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minddata.ops.base import KernelContext, restart_row_rng, row_rng

U64 = st.integers(0, 2**64 - 1)


def _draws(rng: np.random.Generator) -> list:
    # 32-bit draws leave half a word buffered (has_uint32), 64-bit ones a partly used block.
    return [rng.integers(0, 7, dtype=np.int32).item(), rng.random(), rng.integers(0, 2**40).item(),
            rng.normal(), rng.uniform(2.0, 3.0, size=3).tolist(), rng.permutation(5).tolist()]


@settings(max_examples=60, deadline=None)
@pytest.mark.filterwarnings("ignore:invalid value encountered in cast:RuntimeWarning")
@given(seed=U64, pass_index=U64, row=U64, op_position=st.integers(0, 50), earlier=st.integers(0, 9))
def test_a_restarted_generator_draws_as_a_fresh_one(seed, pass_index, row, op_position, earlier):
    used = row_rng(seed ^ 1, pass_index, row ^ 5, op_position)
    for _ in range(earlier):  # the row before leaves any state behind
        _draws(used)
    restart_row_rng(used, seed, pass_index, row, op_position)
    assert _draws(used) == _draws(row_rng(seed, pass_index, row, op_position))


def test_a_context_gives_each_row_its_own_stream_and_keeps_it_within_the_row():
    ctx = KernelContext(seed=11, pass_index=2, row_index=0, op_position=3)
    seen = []
    for row in (0, 1, 1, 7, 0):
        ctx.row_index = row
        seen.append((row, ctx.rng.random()))
    fresh = {row: row_rng(11, 2, row, 3) for row in (0, 1, 7)}
    # Row 1 asked twice in a row continues its stream; row 0 asked again later starts it over.
    assert seen == [(0, fresh[0].random()), (1, fresh[1].random()), (1, fresh[1].random()),
                    (7, fresh[7].random()), (0, row_rng(11, 2, 0, 3).random())]


def test_restarting_one_generator_leaves_another_of_the_same_thread_alone():
    # The restart reuses one state dict per thread: the setter must copy it, never keep it.
    first, second = row_rng(1, 0, 0, 0), row_rng(1, 0, 0, 1)
    restart_row_rng(first, 3, 1, 10, 2)
    restart_row_rng(second, 4, 2, 20, 5)
    assert _draws(first) == _draws(row_rng(3, 1, 10, 2))
    assert _draws(second) == _draws(row_rng(4, 2, 20, 5))
