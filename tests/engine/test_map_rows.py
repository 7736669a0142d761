"""The map's row loop (engine/mapfn.py): one loop for thread and process workers, so a failing op is
reported the same way from either, also when its exception cannot be pickled."""

from __future__ import annotations

import pickle
import threading

import numpy as np
import pytest

import minddata as md
from minddata.engine.mapfn import UnpicklableError, error_type_name, portable_error
from minddata.errors import RowError


class LockedError(Exception):
    """An exception that holds a lock: neither pickle nor cloudpickle can send it to another process."""

    def __init__(self, message: str):
        super().__init__(message)
        self.lock = threading.Lock()


def fail_on_three(x):
    if int(x) == 3:
        raise LockedError("row three is bad")
    return x


def fail_plainly_on_three(x):
    if int(x) == 3:
        raise ValueError("row three is bad")
    return x


def _failure(fn, *, processes: bool) -> RowError:
    ds = md.NumpySlicesDataset({"x": np.arange(6)}, shuffle=False)
    ds = ds.map(fn, input_columns="x", num_parallel_workers=2, python_multiprocessing=processes)
    with pytest.raises(RowError) as caught:
        list(ds.create_tuple_iterator(num_epochs=1, output_numpy=True))
    return caught.value


def test_an_unpicklable_error_reads_the_same_from_thread_and_process_workers():
    from_threads = _failure(fail_on_three, processes=False)
    from_processes = _failure(fail_on_three, processes=True)
    assert str(from_threads) == str(from_processes)
    assert "op fail_on_three failed on row 3" in str(from_processes)
    assert str(from_processes).endswith("LockedError: row three is bad")
    assert (from_processes.op, from_processes.row) == (from_threads.op, from_threads.row) == ("fail_on_three", 3)


def test_a_picklable_error_keeps_its_type_across_the_process_boundary():
    from_threads = _failure(fail_plainly_on_three, processes=False)
    from_processes = _failure(fail_plainly_on_three, processes=True)
    assert str(from_threads) == str(from_processes)
    assert type(from_processes.__cause__) is type(from_threads.__cause__) is ValueError


def test_portable_error_keeps_a_picklable_error_as_it_is():
    error = ValueError("fine")
    assert portable_error(error) is error


def _fail_locally_on_three():
    class LocalError(Exception):  # defined in a function: only cloudpickle could send it, by value
        pass

    def fail_locally_on_three(x):
        if int(x) == 3:
            raise LocalError("row three is bad")
        return x

    return fail_locally_on_three


def test_an_error_of_a_class_defined_in_a_function_reads_the_same_from_process_workers():
    # The worker's reply is plain pickle: the error must travel as text, not break the whole chunk.
    from_threads = _failure(_fail_locally_on_three(), processes=False)
    from_processes = _failure(_fail_locally_on_three(), processes=True)
    assert str(from_threads) == str(from_processes)
    assert str(from_processes).endswith("failed on row 3 (source row 3): LocalError: row three is bad")


def test_portable_error_replaces_an_error_class_defined_in_a_function():
    class LocalError(Exception):
        pass

    stand_in = portable_error(LocalError("local"))
    assert isinstance(stand_in, UnpicklableError)
    assert (error_type_name(stand_in), str(stand_in)) == ("LocalError", "local")


def test_portable_error_replaces_an_unpicklable_error_by_its_type_name_and_message():
    stand_in = portable_error(LockedError("locked"))
    assert isinstance(stand_in, UnpicklableError)
    assert (error_type_name(stand_in), str(stand_in)) == ("LockedError", "locked")
    copy = pickle.loads(pickle.dumps(stand_in))
    assert (error_type_name(copy), str(copy)) == ("LockedError", "locked")
