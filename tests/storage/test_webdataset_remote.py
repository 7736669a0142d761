"""WebDataset shards in object storage: ranged reads give the local rows exactly, also under faults."""

from __future__ import annotations

import pytest
from s3kit import SECRET, options

import minddata as md
from minddata.errors import ArgumentError, MinddataError, RowError


def rows(ds, **kw):
    return [(str(r["__key__"]), bytes(r["jpg"]), int(r["cls"]), str(r["txt"]))
            for r in ds.create_dict_iterator(num_epochs=1, output_numpy=True, **kw)]


def local(root, **kw):
    return md.WebDataset(str(root / "train-{000000..000002}.tar"), **kw)


def test_glob_rows_equal_local(s3_server, s3_shards):
    remote = md.WebDataset("s3://data/shards/train-*.tar", shuffle=False, storage_options=options(s3_server))
    assert rows(remote) == rows(local(s3_shards, shuffle=False))
    assert remote.get_dataset_size() == 18


def test_brace_pattern_lists_the_objects(s3_server, s3_shards):
    remote = md.WebDataset("s3://data/shards/train-{000001..000002}.tar", shuffle=False, storage_options=options(s3_server))
    assert [key for key, *_ in rows(remote)] == [f"s{s}/{i:03d}" for s in (1, 2) for i in range(6)]


def test_http_url_is_read_by_ranges(s3_server, s3_client, s3_shards):
    s3_client.put_object_acl(Bucket="data", Key="shards/train-000000.tar", ACL="public-read")
    url = f"http://127.0.0.1:{s3_server}/data/shards/train-000000.tar"
    remote = md.WebDataset(url, shuffle=False, storage_options=options(s3_server))
    assert rows(remote) == rows(md.WebDataset(str(s3_shards / "train-000000.tar"), shuffle=False))


def test_shuffled_sharded_rows_exact_under_faults(s3_shards, faults):
    md.config.set_seed(3)
    kw = dict(shuffle=True, num_shards=2, shard_id=0, num_parallel_workers=2)
    faults.set_rates({"503": 0.2, "drop": 0.1, "cut": 0.15, "delay": 0.05}, seed=11)
    got = rows(md.WebDataset("s3://data/shards/train-*.tar", storage_options=options(faults.url), **kw))
    counts = dict(faults.counts)
    faults.set_rates({})
    want = rows(local(s3_shards, **kw))
    assert got == want and len(set(got)) == len(got)
    assert counts.get("503", 0) + counts.get("drop", 0) + counts.get("cut", 0) > 0


@pytest.mark.parametrize("shuffle", [False, md.Shuffle.FILES])
def test_streamed_in_order_rows_exact_under_faults(s3_shards, faults, shuffle):
    md.config.set_seed(4)
    kw = dict(shuffle=shuffle, num_parallel_workers=2)
    faults.set_rates({"503": 0.2, "drop": 0.15, "cut": 0.25}, seed=5)
    got = rows(md.WebDataset("s3://data/shards/train-*.tar", storage_options=options(faults.url), **kw))
    counts = dict(faults.counts)
    faults.set_rates({})
    assert got == rows(local(s3_shards, **kw))
    assert counts.get("503", 0) + counts.get("drop", 0) + counts.get("cut", 0) > 0


def test_exact_resume(s3_server, s3_shards):
    md.config.set_seed(5)
    ds = md.WebDataset("s3://data/shards/train-*.tar", shuffle=True, storage_options=options(s3_server))
    full = rows(ds)
    it = ds.create_dict_iterator(num_epochs=1, output_numpy=True)
    head = [str(next(it)["__key__"]) for _ in range(7)]
    state = it.get_state()
    tail = [key for key, *_ in rows(ds, state=state)]
    assert head + tail == [key for key, *_ in full]


def test_missing_object_names_url(s3_server, s3_shards):
    with pytest.raises(MinddataError) as info:
        md.WebDataset("s3://data/shards/nope.tar", storage_options=options(s3_server))
    assert "s3://data/shards/nope.tar" in str(info.value) and "404" in str(info.value)


def test_glob_matching_nothing_names_pattern(s3_server, s3_shards):
    with pytest.raises(ArgumentError, match=r"s3://data/shards/val-\*\.tar matches no object"):
        md.WebDataset("s3://data/shards/val-*.tar", storage_options=options(s3_server))


def test_retries_exhausted_name_url_status_and_tries(s3_shards, faults):
    ds = md.WebDataset("s3://data/shards/train-000000.tar", shuffle=False,
                       storage_options=options(faults.url, max_attempts=3, access_key_id="AKIDX", secret_access_key=SECRET))
    faults.set_rates({"503": 1.0})  # after the index: the sample's ranged GET gets 503 SlowDown
    with pytest.raises(MinddataError) as info:
        rows_ = list(ds.create_dict_iterator(num_epochs=1, output_numpy=True))
        assert rows_ is None
    text = str(info.value)
    assert "s3://data/shards/train-000000.tar" in text and "503" in text and "SlowDown" in text
    assert "after 3 tries" in text and SECRET not in text


def test_row_error_when_an_object_vanishes(s3_server, s3_client, s3_shards):
    s3_client.put_object(Bucket="data", Key="tmp/one.tar", Body=(s3_shards / "train-000000.tar").read_bytes())
    ds = md.WebDataset("s3://data/tmp/one.tar", shuffle=False, storage_options=options(s3_server))
    s3_client.delete_object(Bucket="data", Key="tmp/one.tar")
    with pytest.raises(RowError, match="s3://data/tmp/one.tar"):
        list(ds.create_dict_iterator(num_epochs=1, output_numpy=True))


def _augmented(endpoint, **shard):
    """The s3:// shards, globally shuffled, decoded and randomly cropped: a sample's crop shows whether
    its random draws follow it across ranks."""
    from minddata import vision

    ds = md.WebDataset("s3://data/shards/train-*.tar", shuffle=True, storage_options=options(endpoint), **shard)
    return ds.map([vision.Decode(), vision.RandomResizedCrop(8)], input_columns="jpg")


def _samples(it, count=None):
    out = []
    for row in it:
        out.append((str(row["__key__"]), bytes(row["jpg"])))
        if count is not None and len(out) == count:
            break
    return out


def test_states_of_two_ranks_resume_on_three_over_faults(s3_server, s3_shards, faults):
    md.config.set_seed(9)
    truth = dict(_samples(_augmented(s3_server).create_dict_iterator(num_epochs=1, output_numpy=True)))
    before, states = [], []
    for rank in range(2):
        md.config.set_seed(9)
        it = _augmented(s3_server, num_shards=2, shard_id=rank).create_dict_iterator(num_epochs=1, output_numpy=True)
        before += _samples(it, 3 + rank)
        states.append(it.get_state())
        it.close()
    faults.set_rates({"503": 0.2, "drop": 0.1, "cut": 0.1}, seed=5)  # the resumed ranks read through faults
    after = []
    for rank in range(3):
        md.config.set_seed(9)
        ds = _augmented(faults.url, num_shards=3, shard_id=rank)
        after += _samples(ds.create_dict_iterator(num_epochs=1, output_numpy=True, state=states))
    faulted = sum(faults.counts.get(kind, 0) for kind in ("503", "drop", "cut"))
    faults.set_rates({})
    for key, crop in before + after:
        assert crop == truth[key], f"sample {key} differs from the single-rank run's"
    left = set(truth) - {key for key, _ in before}
    resumed = [key for key, _ in after]
    assert set(resumed) == left, "a consumed sample was read again or one left was skipped"
    assert len(resumed) == len(left), "each sample the two ranks left is read once"
    assert faulted > 0
