"""Tests of minddata.samplers: MindSpore semantics, the engine protocol and argument errors."""

from __future__ import annotations

import doctest
import math
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minddata import samplers
from minddata.errors import ArgumentError
from minddata.samplers import (
    DistributedSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    SubsetSampler,
    WeightedRandomSampler,
    resolve_sampler,
)

FAST = settings(max_examples=60, deadline=None)


def idx(sampler, num_rows, seed=0, pass_index=0):
    return sampler._indices(num_rows, seed, pass_index).tolist()


def shards(num_rows, num_shards, seed, pass_index, shuffle=True):
    return [
        DistributedSampler(num_shards, k, shuffle=shuffle)._indices(num_rows, seed, pass_index)
        for k in range(num_shards)
    ]


class ReverseSampler(Sampler):
    def __iter__(self):
        yield from range(self.dataset_size - 1, -1, -1)


def all_samplers():
    """One of each sampler kind, for protocol-wide tests (valid on sources of >= 10 rows)."""
    return [
        SequentialSampler(),
        SequentialSampler(start_index=3, num_samples=4),
        RandomSampler(),
        RandomSampler(num_samples=5),
        RandomSampler(replacement=True, num_samples=7),
        DistributedSampler(3, 1),
        DistributedSampler(4, 3, shuffle=False, num_samples=2),
        DistributedSampler(3, 0, offset=2),
        SubsetSampler([9, 0, 4, 4]),
        SubsetRandomSampler([1, 2, 3], num_samples=2),
        WeightedRandomSampler([1.0, 0.0, 2.0, 3.0]),
        WeightedRandomSampler([1.0, 0.0, 2.0, 3.0], num_samples=3, replacement=False),
        ReverseSampler(num_samples=6),
    ]


# ---- output type ---------------------------------------------------------------------------------


@pytest.mark.parametrize("sampler", all_samplers(), ids=repr)
def test_indices_are_1d_int64(sampler):
    out = sampler._indices(10, 1, 0)
    assert out.dtype == np.int64 and out.ndim == 1


@pytest.mark.parametrize("sampler", all_samplers(), ids=repr)
def test_num_samples_matches_len_of_indices(sampler):
    assert sampler._num_samples(10) == len(sampler._indices(10, 1, 0))


@pytest.mark.parametrize("sampler", all_samplers(), ids=repr)
def test_sampler_pickles_and_gives_same_indices(sampler):
    clone = pickle.loads(pickle.dumps(sampler))
    assert idx(clone, 10, seed=5, pass_index=2) == idx(sampler, 10, seed=5, pass_index=2)


# ---- SequentialSampler ---------------------------------------------------------------------------


def test_sequential_reads_all_rows_in_order():
    assert idx(SequentialSampler(), 5) == [0, 1, 2, 3, 4]


def test_sequential_starts_at_start_index_and_caps_at_num_samples():
    assert idx(SequentialSampler(start_index=2, num_samples=3), 10) == [2, 3, 4]


def test_sequential_num_samples_beyond_end_stops_at_end():
    assert idx(SequentialSampler(start_index=3, num_samples=100), 5) == [3, 4]


def test_sequential_on_empty_source_is_empty():
    assert idx(SequentialSampler(), 0) == []


def test_sequential_start_index_past_end_raises():
    with pytest.raises(
        ArgumentError, match=r"SequentialSampler: `start_index` must be less than .*\(5\)\. Found: 5"
    ):
        SequentialSampler(start_index=5)._indices(5, 0, 0)


def test_sequential_negative_start_index_raises():
    with pytest.raises(ArgumentError, match=r"SequentialSampler: `start_index` must be .* 0\. Found: -1"):
        SequentialSampler(start_index=-1)


def test_sequential_float_start_index_raises_type_error():
    with pytest.raises(TypeError, match=r"SequentialSampler: `start_index` must be an int\. Found: 1.5"):
        SequentialSampler(start_index=1.5)


# ---- RandomSampler -------------------------------------------------------------------------------


def test_random_is_a_permutation():
    assert sorted(idx(RandomSampler(), 50)) == list(range(50))


def test_random_reshuffles_each_pass():
    sampler = RandomSampler()
    assert idx(sampler, 50, pass_index=0) != idx(sampler, 50, pass_index=1)


def test_random_depends_on_seed():
    sampler = RandomSampler()
    assert idx(sampler, 50, seed=1) != idx(sampler, 50, seed=2)


def test_random_num_samples_takes_a_prefix_without_repeats():
    out = idx(RandomSampler(num_samples=10), 50)
    assert len(out) == 10 and len(set(out)) == 10


def test_random_with_replacement_draws_num_samples_in_range():
    out = idx(RandomSampler(replacement=True, num_samples=30), 40, seed=3)
    assert len(out) == 30 and all(0 <= i < 40 for i in out)


def test_random_with_replacement_repeats_rows():
    out = idx(RandomSampler(replacement=True), 100, seed=3)
    assert len(out) == 100 and len(set(out)) < 100


def test_random_num_samples_above_rows_is_capped_as_in_mindspore():
    assert RandomSampler(replacement=True, num_samples=50)._num_samples(10) == 10


def test_random_replacement_must_be_bool():
    with pytest.raises(TypeError, match=r"RandomSampler: `replacement` must be a bool\. Found: 1"):
        RandomSampler(replacement=1)


def test_random_and_subset_random_streams_differ():
    rows = list(range(30))
    assert idx(RandomSampler(), 30) != idx(SubsetRandomSampler(rows), 30)


# ---- DistributedSampler --------------------------------------------------------------------------


def test_distributed_unshuffled_takes_every_nth_row_and_wraps():
    assert idx(DistributedSampler(3, 1, shuffle=False), 7) == [1, 4, 0]


def test_distributed_shards_pad_to_equal_length():
    assert [len(s) for s in shards(10, 4, seed=0, pass_index=0)] == [3, 3, 3, 3]


def test_distributed_more_shards_than_rows_gives_one_row_each():
    assert [s.tolist() for s in shards(2, 4, 0, 0, shuffle=False)] == [[0], [1], [0], [1]]


def test_distributed_num_samples_caps_each_shard():
    assert idx(DistributedSampler(2, 1, shuffle=False, num_samples=2), 10) == [1, 3]


def test_distributed_shuffle_differs_by_pass():
    sampler = DistributedSampler(2, 0)
    assert idx(sampler, 40, pass_index=0) != idx(sampler, 40, pass_index=1)


def test_distributed_offset_shifts_starting_shard_without_padding():
    # Offset 1 of 3 shards: entry p goes to shard (p + 1) % 3; 7 rows -> sizes 2, 3, 2.
    got = [idx(DistributedSampler(3, k, shuffle=False, offset=1), 7) for k in range(3)]
    assert got == [[2, 5], [0, 3, 6], [1, 4]]


@pytest.mark.parametrize("offset", [0, 1, 3])
def test_distributed_offset_partitions_rows(offset):
    got = [idx(DistributedSampler(3, k, offset=offset), 8, seed=4) for k in range(3)]
    assert sorted(sum(got, [])) == list(range(8))


def test_distributed_on_empty_source_is_empty():
    assert idx(DistributedSampler(2, 0), 0) == []


def test_distributed_num_shards_zero_raises():
    with pytest.raises(
        ArgumentError, match=r"^DistributedSampler: `num_shards` must be greater than 0\. Found: 0$"
    ):
        DistributedSampler(0, 0)


@pytest.mark.parametrize("shard_id", [4, -1])
def test_distributed_shard_id_out_of_range_raises(shard_id):
    with pytest.raises(
        ArgumentError, match=rf"^DistributedSampler: `shard_id` must be in \[0, 4\)\. Found: {shard_id}$"
    ):
        DistributedSampler(4, shard_id)


@pytest.mark.parametrize("offset", [-2, 5])
def test_distributed_offset_out_of_range_raises(offset):
    with pytest.raises(ArgumentError, match=rf"DistributedSampler: `offset` must be .*Found: {offset}"):
        DistributedSampler(4, 0, offset=offset)


def test_distributed_bool_num_shards_raises_type_error():
    with pytest.raises(TypeError, match=r"DistributedSampler: `num_shards` must be an int\. Found: True"):
        DistributedSampler(True, 0)


def test_distributed_shuffle_must_be_bool():
    with pytest.raises(TypeError, match=r"DistributedSampler: `shuffle` must be a bool\. Found: 'yes'"):
        DistributedSampler(2, 0, shuffle="yes")


def test_distributed_is_sharded_and_shuffled():
    sampler = DistributedSampler(2, 0)
    assert sampler.is_sharded() and sampler.is_shuffled()
    assert not DistributedSampler(2, 0, shuffle=False).is_shuffled()


# ---- SubsetSampler / SubsetRandomSampler ---------------------------------------------------------


def test_subset_keeps_given_order_and_repeats():
    assert idx(SubsetSampler([4, 0, 2, 2]), 5) == [4, 0, 2, 2]


def test_subset_num_samples_takes_prefix():
    assert idx(SubsetSampler([4, 0, 2], num_samples=2), 5) == [4, 0]


def test_subset_accepts_numpy_and_range():
    assert idx(SubsetSampler(np.array([3, 1], dtype=np.int32)), 5) == [3, 1]
    assert idx(SubsetSampler(range(2, 4)), 5) == [2, 3]


def test_subset_empty_indices_read_nothing():
    assert idx(SubsetSampler([]), 5) == []


def test_subset_index_out_of_range_names_sampler_index_and_range():
    with pytest.raises(ArgumentError, match=r"SubsetSampler: index 10 .*out of range.*\[0, 5\)"):
        SubsetSampler([1, 10])._indices(5, 0, 0)


def test_subset_negative_index_raises_at_construction():
    with pytest.raises(
        ArgumentError, match=r"SubsetSampler: `indices` must be .* 0\. Found: -1 at position 1"
    ):
        SubsetSampler([0, -1])


def test_subset_float_index_raises_type_error():
    with pytest.raises(TypeError, match=r"SubsetSampler: `indices` must be a sequence of ints\. Found: 1.5"):
        SubsetSampler([0, 1.5])


def test_subset_string_raises_type_error():
    with pytest.raises(TypeError, match=r"SubsetSampler: `indices` must be a sequence of ints"):
        SubsetSampler("012")


def test_subset_random_is_a_permutation_of_indices():
    assert sorted(idx(SubsetRandomSampler([8, 1, 5, 3]), 10)) == [1, 3, 5, 8]


def test_subset_random_reshuffles_each_pass():
    sampler = SubsetRandomSampler(list(range(0, 60, 2)))
    assert idx(sampler, 60, pass_index=0) != idx(sampler, 60, pass_index=1)


def test_subset_random_num_samples_draws_distinct_subset():
    out = idx(SubsetRandomSampler(list(range(20)), num_samples=5), 20)
    assert len(out) == 5 and len(set(out)) == 5


def test_subset_random_index_out_of_range_raises():
    with pytest.raises(ArgumentError, match=r"SubsetRandomSampler: index 7 .*\[0, 5\)"):
        SubsetRandomSampler([0, 7])._indices(5, 0, 0)


# ---- WeightedRandomSampler -----------------------------------------------------------------------


def test_weighted_never_draws_zero_weight_rows():
    out = idx(WeightedRandomSampler([0, 1, 0, 2], num_samples=4), 4, seed=2)
    assert set(out) <= {1, 3}


def test_weighted_draws_in_proportion_to_weights():
    out = np.array(idx(WeightedRandomSampler([1.0, 3.0]), 2))
    many = np.concatenate([WeightedRandomSampler([1.0, 3.0])._indices(2, 0, p) for p in range(4000)])
    assert len(out) == 2 and abs(many.mean() - 0.75) < 0.03


def test_weighted_default_num_samples_is_one_per_row():
    assert WeightedRandomSampler([1, 1])._num_samples(10) == 10


def test_weighted_without_replacement_draws_distinct_rows():
    out = idx(WeightedRandomSampler([1, 2, 3, 4, 0], num_samples=4, replacement=False), 5)
    assert sorted(out) == [0, 1, 2, 3]


def test_weighted_without_replacement_too_many_samples_raises_at_construction():
    with pytest.raises(ArgumentError, match=r"WeightedRandomSampler: .*nonzero weights \(2\)\. Found: 3"):
        WeightedRandomSampler([1, 0, 1], num_samples=3, replacement=False)


def test_weighted_without_replacement_default_count_too_large_raises_at_run():
    with pytest.raises(ArgumentError, match=r"WeightedRandomSampler: without replacement.*Found: 2"):
        WeightedRandomSampler([1, 0, 1], replacement=False)._indices(3, 0, 0)


@pytest.mark.parametrize("weights", [[1, -1], [1, float("nan")], [1, float("inf")]])
def test_weighted_bad_weight_raises(weights):
    with pytest.raises(
        ArgumentError, match=r"WeightedRandomSampler: `weights` must be finite and .*position 1"
    ):
        WeightedRandomSampler(weights)


def test_weighted_all_zero_raises():
    with pytest.raises(ArgumentError, match=r"WeightedRandomSampler: `weights` must have a positive sum"):
        WeightedRandomSampler([0, 0])


def test_weighted_empty_raises():
    with pytest.raises(ArgumentError, match=r"WeightedRandomSampler: `weights` must be a non-empty"):
        WeightedRandomSampler([])


def test_weighted_non_numeric_raises_type_error():
    with pytest.raises(TypeError, match=r"WeightedRandomSampler: `weights` must be a sequence of numbers"):
        WeightedRandomSampler([1, "a"])


def test_weighted_more_weights_than_rows_raises():
    with pytest.raises(ArgumentError, match=r"WeightedRandomSampler: `weights` has 3 entries .* 2 rows"):
        WeightedRandomSampler([1, 1, 1])._indices(2, 0, 0)


# ---- num_samples, shared by every sampler --------------------------------------------------------

CONSTRUCTORS = {
    "SequentialSampler": lambda n: SequentialSampler(num_samples=n),
    "RandomSampler": lambda n: RandomSampler(num_samples=n),
    "DistributedSampler": lambda n: DistributedSampler(2, 0, num_samples=n),
    "SubsetSampler": lambda n: SubsetSampler([0, 1], num_samples=n),
    "SubsetRandomSampler": lambda n: SubsetRandomSampler([0, 1], num_samples=n),
    "WeightedRandomSampler": lambda n: WeightedRandomSampler([1, 1], num_samples=n),
    "ReverseSampler": lambda n: ReverseSampler(num_samples=n),
}


@pytest.mark.parametrize("name", CONSTRUCTORS)
def test_negative_num_samples_raises(name):
    with pytest.raises(
        ArgumentError, match=rf"^{name}: `num_samples` must be None or greater than 0.*Found: -1$"
    ):
        CONSTRUCTORS[name](-1)


@pytest.mark.parametrize("name", CONSTRUCTORS)
def test_float_num_samples_raises_type_error(name):
    with pytest.raises(TypeError, match=rf"^{name}: `num_samples` must be None or an int\. Found: 2.0"):
        CONSTRUCTORS[name](2.0)


@pytest.mark.parametrize("name", CONSTRUCTORS)
def test_zero_num_samples_means_all(name):
    assert CONSTRUCTORS[name](0)._num_samples(4) == CONSTRUCTORS[name](None)._num_samples(4)


@pytest.mark.parametrize("name", CONSTRUCTORS)
def test_builtin_get_num_samples_returns_given_value(name):
    assert CONSTRUCTORS[name](3).get_num_samples() == 3
    assert CONSTRUCTORS[name](None).get_num_samples() is None


# ---- user samplers -------------------------------------------------------------------------------


def test_user_sampler_sees_dataset_size():
    assert idx(ReverseSampler(), 4) == [3, 2, 1, 0]


def test_user_sampler_is_truncated_to_num_samples():
    assert idx(ReverseSampler(num_samples=2), 4) == [3, 2]


def test_user_sampler_sees_resolved_num_samples():
    class CountingSampler(Sampler):
        def __iter__(self):
            return iter(range(self.num_samples))

    assert idx(CountingSampler(), 3) == [0, 1, 2]


def test_user_sampler_may_oversample_with_explicit_num_samples():
    class Twice(Sampler):
        def __iter__(self):
            for i in range(self.dataset_size):
                yield i
                yield i

    assert idx(Twice(num_samples=6), 3) == [0, 0, 1, 1, 2, 2]


def test_user_sampler_infinite_iterator_stops_at_dataset_size():
    class Forever(Sampler):
        def __iter__(self):
            while True:
                yield 0

    assert Forever()._num_samples(5) == 5


def test_user_sampler_out_of_range_index_raises():
    class Bad(Sampler):
        def __iter__(self):
            yield from (0, 9)

    with pytest.raises(ArgumentError, match=r"Bad: index 9 .*\[0, 3\)"):
        Bad()._indices(3, 0, 0)


def test_user_sampler_non_int_index_raises_type_error():
    class Bad(Sampler):
        def __iter__(self):
            yield from (0, "x")

    with pytest.raises(TypeError, match=r"Bad: `__iter__ output` must be a sequence of ints\. Found: 'x'"):
        Bad()._indices(3, 0, 0)


def test_user_sampler_without_iter_raises_not_implemented():
    with pytest.raises(NotImplementedError, match=r"Sampler: a Sampler subclass must override __iter__"):
        Sampler()._indices(3, 0, 0)


def test_user_sampler_reset_runs_before_later_passes():
    class Resettable(ReverseSampler):
        resets = 0

        def reset(self):
            type(self).resets += 1

    sampler = Resettable()
    sampler._indices(3, 0, 0)
    sampler._indices(3, 0, 1)
    assert Resettable.resets == 1


def test_user_sampler_without_super_init_works():
    class NoInit(Sampler):
        def __init__(self):
            self.num_samples = 2

        def __iter__(self):
            yield from range(self.dataset_size)

    assert idx(NoInit(), 5) == [0, 1]


def test_builtin_sampler_is_not_iterable():
    with pytest.raises(TypeError, match=r"RandomSampler is not iterable on its own"):
        iter(RandomSampler())


# ---- children ------------------------------------------------------------------------------------


def test_parent_indices_index_into_child_output():
    parent = SequentialSampler(start_index=1, num_samples=2)
    parent.add_child(SubsetSampler([9, 7, 5, 3]))
    assert idx(parent, 10) == [7, 5]


def test_parent_row_count_is_child_sample_count():
    parent = DistributedSampler(2, 1, shuffle=False)
    parent.add_child(SequentialSampler(start_index=4))
    assert idx(parent, 10) == [5, 7, 9]
    assert parent._num_samples(10) == 3


def test_random_parent_permutes_child_output():
    parent = RandomSampler()
    parent.add_child(SubsetSampler([11, 3, 7, 5, 19]))
    assert sorted(idx(parent, 20, seed=3)) == [3, 5, 7, 11, 19]


def test_same_class_child_draws_a_different_stream_from_parent():
    # Reusing one (seed, pass) stream would apply the same permutation twice: perm[perm].
    parent = RandomSampler()
    parent.add_child(RandomSampler())
    perm = RandomSampler()._indices(30, 3, 0)
    assert idx(parent, 30, seed=3) != perm[perm].tolist()


def test_user_parent_sees_child_count_as_dataset_size():
    parent = ReverseSampler()
    parent.add_child(SubsetSampler([2, 4, 6]))
    assert idx(parent, 10) == [6, 4, 2]


def test_get_child_returns_added_child():
    child = RandomSampler()
    parent = SequentialSampler()
    parent.add_child(child)
    assert parent.get_child() is child and SequentialSampler().get_child() is None


def test_second_child_raises():
    parent = SequentialSampler()
    parent.add_child(RandomSampler())
    with pytest.raises(ArgumentError, match=r"SequentialSampler: this sampler already has a child"):
        parent.add_child(RandomSampler())


def test_child_cycle_raises():
    parent = SequentialSampler()
    child = RandomSampler()
    parent.add_child(child)
    with pytest.raises(ArgumentError, match=r"RandomSampler: .*its own descendant"):
        child.add_child(parent)


def test_non_sampler_child_raises_type_error():
    with pytest.raises(TypeError, match=r"SequentialSampler: `sampler` must be a Sampler"):
        SequentialSampler().add_child([1, 2])


@pytest.mark.parametrize(
    ("own", "child", "expected"), [(3, 5, 3), (3, None, 3), (None, 5, 5), (None, None, None)]
)
def test_get_num_samples_combines_with_child_as_in_mindspore(own, child, expected):
    parent = SequentialSampler(num_samples=own)
    parent.add_child(RandomSampler(num_samples=child))
    assert parent.get_num_samples() == expected


def test_is_shuffled_follows_child():
    parent = SequentialSampler()
    parent.add_child(RandomSampler())
    assert parent.is_shuffled() and not SequentialSampler().is_shuffled()


def test_repr_shows_arguments():
    assert repr(SequentialSampler(start_index=2)) == "SequentialSampler(start_index=2, num_samples=None)"


# ---- resolve_sampler -----------------------------------------------------------------------------


def resolve(**kwargs):
    args = dict(
        sampler=None,
        shuffle=None,
        num_samples=None,
        num_shards=None,
        shard_id=None,
        default_shuffle=True,
        where="ImageFolderDataset",
    )
    args.update(kwargs)
    return resolve_sampler(**args)


def test_resolve_returns_given_sampler():
    sampler = SubsetSampler([1])
    assert resolve(sampler=sampler) is sampler


@pytest.mark.parametrize("indices", [[3, 1], (3, 1), np.array([3, 1])])
def test_resolve_turns_index_sequence_into_subset_sampler(indices):
    sampler = resolve(sampler=indices, num_samples=1)
    assert isinstance(sampler, SubsetSampler) and idx(sampler, 5) == [3]


def test_resolve_wraps_other_iterables():
    sampler = resolve(sampler={0: "a", 2: "b"}.keys())
    assert idx(sampler, 5) == [0, 2]


def test_resolve_rejects_non_iterable_sampler():
    with pytest.raises(TypeError, match=r"ImageFolderDataset: `sampler` must be a Sampler or an iterable"):
        resolve(sampler=1.5)


def test_resolve_sampler_with_shuffle_raises():
    with pytest.raises(
        ArgumentError, match=r"ImageFolderDataset: `sampler` and `shuffle` cannot be given together"
    ):
        resolve(sampler=RandomSampler(), shuffle=False)


@pytest.mark.parametrize(("num_shards", "shard_id"), [(2, 0), (2, None), (None, 0)])
def test_resolve_sampler_with_sharding_raises(num_shards, shard_id):
    with pytest.raises(
        ArgumentError, match=r"ImageFolderDataset: `sampler` and `num_shards`/`shard_id` cannot"
    ):
        resolve(sampler=RandomSampler(), num_shards=num_shards, shard_id=shard_id)


def test_resolve_sampler_object_with_num_samples_raises():
    with pytest.raises(ArgumentError, match=r"ImageFolderDataset: `sampler` and `num_samples` cannot"):
        resolve(sampler=RandomSampler(), num_samples=3)


@pytest.mark.parametrize(("num_shards", "shard_id"), [(2, None), (None, 0)])
def test_resolve_half_of_sharding_pair_raises(num_shards, shard_id):
    with pytest.raises(
        ArgumentError, match=r"ImageFolderDataset: `num_shards` and `shard_id` must be given together"
    ):
        resolve(num_shards=num_shards, shard_id=shard_id)


def test_resolve_shard_id_out_of_range_raises():
    with pytest.raises(
        ArgumentError, match=r"^ImageFolderDataset: `shard_id` must be in \[0, 4\)\. Found: 4$"
    ):
        resolve(num_shards=4, shard_id=4)


def test_resolve_num_shards_zero_raises():
    with pytest.raises(
        ArgumentError, match=r"^ImageFolderDataset: `num_shards` must be greater than 0\. Found: 0$"
    ):
        resolve(num_shards=0, shard_id=0)


def test_resolve_negative_num_samples_raises():
    with pytest.raises(
        ArgumentError, match=r"^ImageFolderDataset: `num_samples` must be None or greater than 0"
    ):
        resolve(num_samples=-2)


def test_resolve_non_bool_shuffle_raises_type_error():
    with pytest.raises(TypeError, match=r"ImageFolderDataset: `shuffle` must be a bool\. Found: 'no'"):
        resolve(shuffle="no")


@pytest.mark.parametrize(
    ("shuffle", "default_shuffle", "expected"),
    [(None, True, True), (None, False, False), (False, True, False)],
)
def test_resolve_sharding_gives_distributed_sampler(shuffle, default_shuffle, expected):
    sampler = resolve(
        num_shards=4, shard_id=2, shuffle=shuffle, default_shuffle=default_shuffle, num_samples=3
    )
    assert isinstance(sampler, DistributedSampler)
    assert (sampler.num_shards, sampler.shard_id, sampler.shuffle, sampler.num_samples) == (4, 2, expected, 3)


@pytest.mark.parametrize(
    ("shuffle", "default_shuffle", "expected"),
    [
        (None, True, RandomSampler),
        (None, False, SequentialSampler),
        (True, False, RandomSampler),
        (False, True, SequentialSampler),
    ],
)
def test_resolve_shuffle_picks_random_or_sequential(shuffle, default_shuffle, expected):
    sampler = resolve(shuffle=shuffle, default_shuffle=default_shuffle, num_samples=2)
    assert type(sampler) is expected and sampler.num_samples == 2


def test_resolve_shuffled_num_samples_does_not_repeat_rows():
    out = idx(resolve(shuffle=True, num_samples=50), 50, seed=1)
    assert sorted(out) == list(range(50))


# ---- properties ----------------------------------------------------------------------------------

seeds = st.integers(min_value=0, max_value=2**32 - 1)
passes = st.integers(min_value=0, max_value=1000)


@FAST
@given(
    n=st.integers(1, 200), num_shards=st.integers(1, 8), seed=seeds, pass_index=passes, shuffle=st.booleans()
)
def test_shards_cover_every_row_with_equal_sizes(n, num_shards, seed, pass_index, shuffle):
    parts = shards(n, num_shards, seed, pass_index, shuffle)
    assert all(len(p) == math.ceil(n / num_shards) for p in parts)
    assert set(np.concatenate(parts).tolist()) == set(range(n))


@FAST
@given(n=st.integers(1, 200), num_shards=st.integers(1, 8), seed=seeds, pass_index=passes)
def test_shards_agree_on_one_permutation_and_are_disjoint_before_padding(n, num_shards, seed, pass_index):
    parts = shards(n, num_shards, seed, pass_index)
    # Interleave the shards back: entry p of the order is shard p % k, position p // k.
    order = [int(parts[p % num_shards][p // num_shards]) for p in range(n)]
    assert sorted(order) == list(range(n))  # unpadded entries: disjoint across shards, cover all rows
    total = len(parts[0]) * num_shards
    padded = [int(parts[p % num_shards][p // num_shards]) for p in range(n, total)]
    assert padded == [order[p % n] for p in range(n, total)]  # padding wraps to the start of the order


@FAST
@given(n=st.integers(1, 200), seed=seeds, pass_index=passes)
def test_same_seed_and_pass_give_same_indices(n, seed, pass_index):
    for sampler in (
        RandomSampler(),
        DistributedSampler(3, 2),
        SubsetRandomSampler(range(n)),
        WeightedRandomSampler(np.arange(n) + 1.0),
    ):
        assert idx(sampler, n, seed, pass_index) == idx(sampler, n, seed, pass_index)


@FAST
@given(n=st.integers(10, 200), seed=seeds, pass_index=passes)
def test_different_pass_gives_different_permutation(n, seed, pass_index):
    for sampler in (RandomSampler(), DistributedSampler(1, 0), SubsetRandomSampler(range(n))):
        assert idx(sampler, n, seed, pass_index) != idx(sampler, n, seed, pass_index + 1)


@FAST
@given(
    n=st.integers(0, 60),
    num_samples=st.one_of(st.none(), st.integers(0, 80)),
    k=st.integers(1, 5),
    offset=st.integers(-1, 5),
)
def test_num_samples_equals_len_of_indices(n, num_samples, k, offset):
    candidates = [
        SequentialSampler(num_samples=num_samples),
        RandomSampler(num_samples=num_samples),
        RandomSampler(replacement=True, num_samples=num_samples),
        DistributedSampler(k, k - 1, num_samples=num_samples, offset=min(offset, k)),
        SubsetSampler(range(n), num_samples=num_samples),
        SubsetRandomSampler(range(0, n, 2), num_samples=num_samples),
        ReverseSampler(num_samples=num_samples),
    ]
    if n:
        candidates.append(WeightedRandomSampler(np.ones(n), num_samples=num_samples))
    for sampler in candidates:
        assert sampler._num_samples(n) == len(sampler._indices(n, 7, 1)), sampler


def test_module_examples_run():
    result = doctest.testmod(samplers, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0


# ---- PKSampler ----------------------------------------------------------------------------------


def pk(num_val, labels, **kwargs):
    from minddata.samplers import PKSampler, with_labels

    return with_labels(PKSampler(num_val, **kwargs), lambda: np.asarray(labels))


LABELS = [0, 0, 0, 1, 1, 2, 2, 2, 2, 3]


@pytest.mark.parametrize("num_val", [1, 2, 3])
def test_pk_gives_num_val_rows_of_each_class_in_label_order(num_val):
    rows = idx(pk(num_val, LABELS), len(LABELS), seed=5)
    assert [LABELS[i] for i in rows] == [c for c in range(4) for _ in range(num_val)]
    for c in range(4):  # without replacement while the class has enough rows
        mine = [i for i in rows if LABELS[i] == c]
        if LABELS.count(c) >= num_val:
            assert len(set(mine)) == num_val


def test_pk_shuffle_reorders_classes_per_pass_and_num_samples_caps():
    orders = {tuple(LABELS[i] for i in idx(pk(1, LABELS, shuffle=True), 10, seed=3, pass_index=p)) for p in range(8)}
    assert len(orders) > 1 and all(sorted(o) == [0, 1, 2, 3] for o in orders)
    assert len(idx(pk(2, LABELS, num_samples=5), 10)) == 5
    assert pk(2, LABELS, num_samples=5)._num_samples(10) == 5


def test_pk_sampler_reads_image_folder_labels(image_folder):
    import minddata as md

    ds = md.ImageFolderDataset(str(image_folder), sampler=md.PKSampler(3, shuffle=True))
    labels = [int(r["label"]) for r in ds.create_dict_iterator(num_epochs=1, output_numpy=True)]
    assert sorted(labels) == [0, 0, 0, 1, 1, 1, 2, 2, 2] and ds.get_dataset_size() == 9
    assert labels[0] == labels[1] == labels[2]


def test_pk_sampler_needs_a_source_with_labels():
    import minddata as md

    with pytest.raises(ArgumentError, match="PKSampler needs the class label"):
        md.NumpySlicesDataset({"x": [1, 2]}, sampler=md.PKSampler(2))
    with pytest.raises(ArgumentError, match="num_class"):
        md.PKSampler(2, num_class=3)
