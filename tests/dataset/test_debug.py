"""Debug mode (config.set_debug_mode) and its hooks (minddata.dataset.debug)."""

from __future__ import annotations

import os
import threading

import numpy as np
import pytest

import minddata as md
from minddata.dataset import debug


class Recorder(debug.DebugHook):
    def __init__(self):
        super().__init__()
        self.calls: list[tuple] = []

    def compute(self, *args):
        self.calls.append((self.prev_op_name, [np.asarray(a).tolist() for a in args]))
        return args


def _add_one(x):
    return x + 1


def _double(x):
    return x * 2


def _values(data) -> list[int]:
    return [int(row[0]) for row in data.create_tuple_iterator(num_epochs=1, output_numpy=True)]


def test_hooks_see_each_ops_input_and_output():
    hook = Recorder()
    md.config.set_debug_mode(True, debug_hook_list=[hook])
    data = md.NumpySlicesDataset({"x": [1, 5]}, shuffle=False).map([_add_one, _double], input_columns="x")
    assert _values(data) == [4, 12]
    assert hook.calls == [
        (None, [1]),
        ("_add_one", [2]),
        ("_double", [4]),
        (None, [5]),
        ("_add_one", [6]),
        ("_double", [12]),
    ]


def test_hooks_are_not_called_without_debug_mode():
    hook = Recorder()
    md.config.set_debug_mode(False, debug_hook_list=[hook])
    data = md.NumpySlicesDataset({"x": [1, 5]}, shuffle=False).map([_add_one, _double], input_columns="x")
    assert _values(data) == [4, 12]
    assert hook.calls == []


def test_debug_mode_runs_every_map_in_one_thread_of_this_process():
    places: list[tuple[int, int]] = []

    def where(x):
        places.append((os.getpid(), threading.get_ident()))
        return x * 3

    md.config.set_rows_per_chunk(1)
    data = md.NumpySlicesDataset({"x": list(range(12))}, shuffle=False)
    data = data.map(where, input_columns="x", num_parallel_workers=4, python_multiprocessing=True)
    md.config.set_debug_mode(True, debug_hook_list=[])
    assert _values(data) == [3 * i for i in range(12)]
    assert len(places) == 12 and len(set(places)) == 1 and places[0][0] == os.getpid()


def test_the_default_hook_prints_types_and_shapes(capsys):
    md.config.set_debug_mode(True)
    data = md.NumpySlicesDataset({"x": np.zeros((1, 2, 3), np.float32)}, shuffle=False).map(
        _double, input_columns="x"
    )
    list(data.create_tuple_iterator(num_epochs=1, output_numpy=True))
    out = capsys.readouterr().out
    assert (
        "[Dataset debugger] the input of the first transform: column 0: type ndarray, shape (2, 3), dtype float32"
        in out
    )
    assert (
        "[Dataset debugger] the output of _double: column 0: type ndarray, shape (2, 3), dtype float32" in out
    )


def test_debug_mode_seeds_with_1_when_no_seed_was_set():
    data = md.NumpySlicesDataset({"x": list(range(16))}, shuffle=True)
    md.config.set_debug_mode(True, debug_hook_list=[])
    debugged = _values(data)
    md.config.load_defaults()
    md.config.set_seed(1)
    assert debugged == _values(data)


@pytest.mark.parametrize(
    "args, message",
    [
        ((1,), "debug_mode_flag must be a bool"),
        ((True, (debug.PrintDataHook(),)), "debug_hook_list must be a list"),
        ((True, [print]), "must be a DebugHook"),
    ],
)
def test_set_debug_mode_checks_its_arguments(args, message):
    with pytest.raises(TypeError, match=message):
        md.config.set_debug_mode(*args)


def test_a_hook_without_compute_says_so():
    with pytest.raises(NotImplementedError, match="must override compute"):
        debug.DebugHook()(1)
