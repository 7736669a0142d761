"""Every runnable example in the public API's docstrings runs and shows what it claims."""

from __future__ import annotations

import doctest
import importlib
import tempfile

import pytest

MODULES = [
    "minddata",
    "minddata.config",
    "minddata.dataset.base",
    "minddata.dataset.serialization",
    "minddata.dataset.sources",
    "minddata.dataset.corpora_csv",
    "minddata.dataset.corpora_imdb",
    "minddata.dataset.corpora_json",
    "minddata.dataset.corpora_lines",
    "minddata.dataset.corpora_tagging",
    "minddata.dataset.corpora_translation",
    "minddata.dataset.cache",
    "minddata.dataset.mnist_family",
    "minddata.dataset.voc",
    "minddata.dataset.svhn",
    "minddata.dataset.stl10",
    "minddata.dataset.celeba",
    "minddata.dataset.caltech",
    "minddata.dataset.flowers102",
    "minddata.dataset.food101",
    "minddata.dataset.places365",
    "minddata.dataset.lsun",
    "minddata.dataset.sbu",
    "minddata.dataset.omniglot",
    "minddata.dataset.div2k",
    "minddata.dataset.cityscapes",
    "minddata.dataset.kitti",
    "minddata.dataset.wider_face",
    "minddata.dataset.sbd",
    "minddata.dataset.photo_tour",
    "minddata.dataset.lfw",
    "minddata.dataset.semeion",
    "minddata.dataset.flickr",
    "minddata.dataset.manifest",
    "minddata.dataset.sun397",
    "minddata.dataset.rendered_sst2",
    "minddata.dataset.webdataset",
    "minddata.samplers",
    "minddata.transforms",
    "minddata.vision",
    "minddata.vision.bbox",
    "minddata.vision.convert",
    "minddata.vision.image_io",
    "minddata.vision.mixup",
    "minddata.vision.multi_crop",
    "minddata.vision.pad_erase",
    "minddata.vision.perspective",
    "minddata.vision.resize",
    "minddata.vision.video",
    "minddata.vision.adjust",
    "minddata.vision.augment_policies",
    "minddata.text",
    "minddata.text.utils",
    "minddata.text.vocab",
    "minddata.text.tokenizers",
    "minddata.text.transforms",
    "minddata.text.vectors",
    "minddata.dataset.text",
    "minddata.audio",
    "minddata.audio.utils",
    "minddata.audio.spectrogram",
    "minddata.audio.masking",
    "minddata.audio.waveform",
    "minddata.audio.biquad",
    "minddata.audio.phase",
    "minddata.audio.features",
    "minddata.audio.effects",
    "minddata.audio.reconstruct",
    "minddata.mindrecord.mindpage",
    "minddata.dataset.speech",
    "minddata.dataset.tedlium",
    "minddata.dataset.rank_sync",
    "minddata.dataset.audio",
    "minddata.vision._utils",
    "minddata.vision.affine",
    "minddata.vision.color",
    "minddata.vision.crop",
    "minddata.vision.decode",
    "minddata.vision.erase_mix",
    "minddata.vision.flip",
    "minddata.vision.normalize",
    "minddata.ops.base",
    "minddata.engine.procpool.parent",
    "minddata.engine.debughooks",
    "minddata.dataset.debug",
    "minddata.engine.procpool.shm",
    "minddata.engine.autotune",
    "minddata.profiler",
    "minddata._devices",
    "minddata.ops.probe",
    "minddata.ops.formats",
    "minddata.ops.file_bytes",
    "minddata.ops.plans.affine",
    "minddata.ops.plans.color",
    "minddata.ops.plans.crop",
    "minddata.ops.plans.decode",
    "minddata.ops.plans.flip",
    "minddata.ops.plans.image",
    "minddata.ops.plans.resize",
    "minddata.ops.dvpp.rules",
    "minddata.ops.gpu.segment",
    "minddata.ops.gpu.adjust",
    "minddata.ops.gpu.pad_erase",
    "minddata.ops.registry",
    "minddata._device_docs",
    "minddata.engine.placement",
    "minddata.engine.fusions",
    "minddata.engine.compiler",
    "minddata.engine.ray_executor.split",
    "minddata.engine.ray_executor.codec",
    "minddata._progress",
    "minddata.bench.command",
    "minddata.bench.floor",
    "minddata._command_line",
    "minddata._standard_pipelines",
    "minddata.bench.plot",
    "minddata.bench.verdict",
    "minddata.serve.protocol",
    "minddata.serve.pipeline",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name, tmp_path, monkeypatch):
    # Examples make their files with tempfile, as a user's script would; here those land in this
    # test's own folder, which pytest removes, instead of accumulating in the machine's /tmp.
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"


def test_public_names_resolve():
    import minddata as md

    for name in md.__all__:
        assert getattr(md, name) is not None, name
    assert md.vision.Decode and md.transforms.TypeCast
