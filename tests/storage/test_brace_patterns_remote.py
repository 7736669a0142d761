"""Brace patterns in s3:// URLs of the file sources: expanded before listing, as for WebDataset."""

from __future__ import annotations

from s3kit import options

import minddata as md


def _rows(ds):
    return [tuple(v.tobytes() for v in r.values()) for r in ds.create_dict_iterator(num_epochs=1, output_numpy=True)]


def test_tfrecord_reads_a_brace_pattern_of_objects(s3_server, s3_files):
    remote = md.TFRecordDataset("s3://data/files/part-{0..1}.tfrecord", shuffle=False, storage_options=options(s3_server))
    local = md.TFRecordDataset([str(s3_files / "part-0.tfrecord"), str(s3_files / "part-1.tfrecord")], shuffle=False)
    assert _rows(remote) == _rows(local) and len(_rows(local)) == 14
