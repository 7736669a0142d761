"""The bench's kernel floor: each step's candidates compute the pipeline's own pixels, the fastest is kept,
and the bench prints the floor next to each standard pipeline."""

from __future__ import annotations

import re

import cv2
import numpy as np
import pytest

from minddata._standard_pipelines import MEAN, STD
from minddata.bench import floor, images
from minddata.cli import main
from minddata.ops.cpu import jpeg
from minddata.ops.cpu.normalize import normalize_into


@pytest.fixture(scope="module")
def jpegs(tmp_path_factory):
    root = tmp_path_factory.mktemp("floor")
    images.generate(root, num_images=6, num_classes=2, seed=5, size=(96, 72))
    return floor.sample_files(root, 6)


@pytest.mark.parametrize("pipeline, steps", [
    ("train", ["read", "crop-decode + resize", "flip", "normalize into batch"]),
    ("infer224", ["read", "decode", "resize", "center crop", "normalize into batch"]),
    ("yolo416", ["read", "decode", "resize", "normalize into batch"]),
])
def test_each_step_keeps_its_fastest_candidate_and_the_floor_spreads_them_over_the_cores(jpegs, pipeline, steps):
    result = floor.measure_floor(pipeline, jpegs, cores=3, repeats=1)
    assert [s.name for s in result.steps] == steps
    for step in result.steps:
        assert step.us_per_image > 0
        assert step.us_per_image == min(step.candidates.values()) == step.candidates[step.kernel]
    assert result.images == len(jpegs)
    assert result.images_per_s == pytest.approx(3e6 / sum(s.us_per_image for s in result.steps))
    assert result.all_cores_images_per_s > 0


def test_the_all_cores_run_gives_each_thread_its_own_chain_over_every_input():
    calls: list[list[int]] = []

    def make_chain():
        seen: list[int] = []
        calls.append(seen)
        return lambda i, x: seen.append(i)

    rate = floor._all_cores(make_chain, ["a", "b", "c"], cores=2, passes=2)
    assert rate > 0 and len(calls) == 2
    assert all(seen == [0, 1, 2] * 3 for seen in calls)  # a warm pass, then two timed passes


def test_a_failing_chain_stops_the_all_cores_run_with_its_error():
    def make_chain():
        def chain(i, x):
            raise ValueError(f"bad input {x}")
        return chain

    with pytest.raises(ValueError, match="bad input a"):
        floor._all_cores(make_chain, ["a"], cores=2, passes=1)


def test_every_decode_candidate_gives_minddatas_pixels(jpegs):
    data = np.fromfile(jpegs[0], np.uint8)
    reference = jpeg.decode(data)
    for name, decode in floor._decode_candidates().items():
        assert np.array_equal(decode(0, data), reference), name


def test_every_normalize_candidate_writes_the_normalize_kernels_floats():
    image = np.random.default_rng(0).integers(0, 256, (40, 30, 3), dtype=np.uint8)
    reference = np.empty((3, 40, 30), np.float32)
    mean = np.asarray(MEAN, np.float32)
    std = np.asarray(STD, np.float32)
    normalize_into(image, mean, std, reference, True)
    slots = np.empty((2, 3, 40, 30), np.float32)
    for name, normalize in floor._normalize_candidates(slots, MEAN, STD).items():
        assert np.array_equal(normalize(1, image), reference), name
    # and the same as the Normalize op on its own, then HWC -> CHW
    direct = ((image.astype(np.float32) - mean) / std).transpose(2, 0, 1)
    assert np.array_equal(reference, direct)


def test_undecodable_files_are_left_out_and_none_left_is_refused(jpegs, tmp_path):
    bad = tmp_path / "bad.jpg"
    bad.write_bytes(b"\xff\xd8 not a jpeg")
    result = floor.measure_floor("yolo416", [bad, *jpegs[:2]], cores=1, repeats=1)
    assert result.images == 2
    with pytest.raises(ValueError, match=r"none of the 1 files given decodes as a JPEG.*--data"):
        floor.measure_floor("yolo416", [bad], cores=1, repeats=1)


def test_the_resize_and_flip_candidates_give_the_pipelines_pixels(jpegs):
    # cv2.resize at the sizes the floor computes, and cv2.flip where the keyed draw flips, against the
    # pipelines' own kernels.
    from minddata import vision
    from minddata.ops.base import KernelContext
    from minddata.ops.cpu.flip import random_horizontal_flip
    from minddata.ops.cpu.resize import resize
    from minddata.ops.plans.flip import flips
    from minddata.ops.plans.resize import resize_output_size

    image = jpeg.decode(np.fromfile(jpegs[0], np.uint8))
    for size in (256, (416, 416)):
        op = vision.Resize(size)
        height, width = resize_output_size(*image.shape[:2], size)
        ours = resize(op, KernelContext(1, 0, 0, 1), image)
        assert np.array_equal(cv2.resize(image, (width, height), interpolation=cv2.INTER_LINEAR), ours), size
    flip = vision.RandomHorizontalFlip()
    for i in range(6):
        ours = random_horizontal_flip(flip, KernelContext(1, 0, i, 2), image)
        bare = cv2.flip(image, 1) if flips(KernelContext(1, 0, i, 2).rng, flip.prob) else image
        assert np.array_equal(bare, ours), i


def test_an_unknown_pipeline_is_refused_naming_the_choices(jpegs):
    with pytest.raises(ValueError, match=r"one of \['train', 'infer224', 'yolo416'\]. Found: 'nope'"):
        floor.measure_floor("nope", jpegs)


def test_bench_prints_the_floor_and_the_share_of_it(capsys, tmp_path):
    root = tmp_path / "data"
    images.generate(root, num_images=8, num_classes=2, seed=3, size=(64, 48))
    rc = main(["bench", "--data", str(root), "--pipeline", "infer224", "--batch-size", "4", "--rounds", "1"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    header = next(line for line in out.splitlines() if line.startswith("pipeline "))
    assert "floor" in header.split() and "vs floor" in header
    row = next(line for line in out.splitlines() if line.startswith("infer224 "))
    assert re.search(r"\s\d+%(\s|$)", row), row  # vs floor
    assert "  infer224: " in out and "us per image = read" in out
    assert re.search(r"chained on all \d+ cores at once \(no pipeline\): [\d,]+ images/s", out)
    assert "; steady" not in out  # two batches are too few for a steady state


def test_two_measurements_of_a_floor_keep_each_kernels_faster_time():
    from minddata.bench.floor import Floor, Step, fastest_of

    before = Floor("p", (Step("read", "a", 30.0, {"a": 30.0}), Step("decode", "x", 1000.0, {"x": 1000.0, "y": 1100.0})),
                   cores=2, images=10, all_cores_images_per_s=1400.0)
    after = Floor("p", (Step("read", "a", 12.0, {"a": 12.0}), Step("decode", "y", 1050.0, {"x": 1300.0, "y": 1050.0})),
                  cores=2, images=10, all_cores_images_per_s=1300.0)
    both = fastest_of(before, after)
    assert [(s.kernel, s.us_per_image) for s in both.steps] == [("a", 12.0), ("x", 1000.0)]
    assert both.steps[1].candidates == {"x": 1000.0, "y": 1050.0} and both.all_cores_images_per_s == 1400.0
    assert both.us_per_image == 1012.0 and fastest_of(after, before).us_per_image == 1012.0
    with pytest.raises(ValueError, match="do not have the same steps"):
        fastest_of(before, Floor("p", (Step("read", "a", 1.0),), cores=2, images=10))
