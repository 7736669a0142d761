"""The op facts registry (minddata.ops.registry): declaring facts, and every table that reads them.

Each op's facts are declared once, next to its kernels; these tests hold the places that use them to
the registry: the decoders of every device and driver, the fusion pairs, the GPU translations, and the
tolerance every device kernel must declare.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from testkit import jpeg_array, random_pixels

import minddata as md
from minddata import transforms, vision
from minddata.ops import registry
from minddata.ops.registry import OpFacts, declare_op, declared_ops, decoder_ops, op_facts, ops_on


@pytest.fixture
def scratch_registry(monkeypatch):
    """Declarations made by a test go into copies of the registry's tables, dropped afterwards."""
    monkeypatch.setattr(registry, "_STATED", {k: dict(v) for k, v in registry._STATED.items()})
    monkeypatch.setattr(registry, "_WHERE", {k: dict(v) for k, v in registry._WHERE.items()})
    monkeypatch.setattr(registry, "_decoders", None)


# ---------------------------------------------------------------------------------------------- declaring


def test_declaring_the_same_facts_twice_changes_nothing(scratch_registry):
    first = declare_op("ScratchOp", cost_ms_per_mp=2.5, decodes=True)
    again = declare_op("ScratchOp", cost_ms_per_mp=2.5, decodes=True)
    assert first == again == op_facts("ScratchOp")
    assert again == OpFacts("ScratchOp", decodes=True, cost_ms_per_mp=2.5)


def test_facts_declared_in_several_places_add_up(scratch_registry):
    declare_op("ScratchOp", cost_ms_per_mp=1.0, fusion_partners=["Resize"])
    declare_op("ScratchOp", tolerances={"GPU": 1.0, "GPU mean": 0.25})
    declare_op("ScratchOp", tolerances={"Dvpp": 32.0})
    facts = op_facts("ScratchOp")
    assert facts.cost_ms_per_mp == 1.0 and facts.fusion_partners == ("Resize",)
    assert facts.tolerances == {"Dvpp": 32.0, "GPU": 1.0, "GPU mean": 0.25}


def test_a_conflicting_declaration_names_the_op_the_fact_and_both_values(scratch_registry):
    declare_op("ScratchOp", cost_ms_per_mp=1.0)
    with pytest.raises(ValueError, match=r"ScratchOp: cost_ms_per_mp declared as 3\.0 at .*test_op_facts\.py:\d+, "
                                         r"but as 1\.0 at .*test_op_facts\.py:\d+"):
        declare_op("ScratchOp", cost_ms_per_mp=3.0)


def test_a_conflicting_tolerance_is_refused_per_device(scratch_registry):
    declare_op("ScratchOp", tolerances={"GPU": 1.0})
    declare_op("ScratchOp", tolerances={"Dvpp": 8.0})  # another device: no conflict
    with pytest.raises(ValueError, match=r"ScratchOp: tolerances\['GPU'\] declared as 2\.0"):
        declare_op("ScratchOp", tolerances={"GPU": 2.0})


def test_an_unknown_fact_is_refused_with_the_known_ones(scratch_registry):
    with pytest.raises(TypeError, match=r"declare_op\('ScratchOp'\): unknown facts \['cost'\].*cost_ms_per_mp"):
        declare_op("ScratchOp", cost=1.0)


def test_an_undeclared_op_has_every_fact_at_its_default():
    assert op_facts("NoSuchOpAnywhere") == OpFacts("NoSuchOpAnywhere")


def test_tolerance_prefers_the_backend_bound_and_defaults_the_mean_to_the_largest():
    facts = OpFacts("X", tolerances={"GPU": 1.0, "GPU mean": 0.25, "GPU:cuda": 32.0, "Dvpp": 8.0})
    assert facts.tolerance("GPU") == (1.0, 0.25)
    assert facts.tolerance("GPU", "cuda") == (32.0, 32.0)
    assert facts.tolerance("GPU", "torch-cuda") == (1.0, 0.25)
    assert facts.tolerance("Dvpp") == (8.0, 8.0)
    assert facts.tolerance("CPU") is None


def test_register_kernel_declares_the_tolerance_it_is_given(scratch_registry, monkeypatch):
    monkeypatch.setattr(registry, "_KERNELS", dict(registry._KERNELS))
    registry.register_kernel("ScratchOp", "Dvpp", tolerance=4.0, mean_tolerance=0.5)(lambda op, ctx, x: x)
    assert op_facts("ScratchOp").tolerance("Dvpp") == (4.0, 0.5)
    assert registry.has_kernel("ScratchOp", "Dvpp")


# ---------------------------------------------------------------------------------------------- the declarations


def test_every_declared_op_has_a_cpu_kernel():
    missing = [f.name for f in declared_ops() if f.name not in ops_on("CPU")]
    assert not missing, f"facts declared for ops without a CPU kernel (a misspelt name?): {missing}"


@pytest.mark.parametrize("device", ["GPU", "Dvpp"])
def test_every_device_kernel_declares_its_tolerance(device):
    missing = [name for name in ops_on(device) if op_facts(name).tolerance(device) is None]
    assert not missing, f"{device} kernels without a tolerance against the CPU kernel: {missing}"


def test_a_decoder_declared_after_the_decoders_were_asked_for_is_among_them(scratch_registry):
    before = decoder_ops()
    assert decoder_ops() is before  # kept: kernels ask per row
    declare_op("ScratchDecoder", decodes=True)
    assert decoder_ops() == before | {"ScratchDecoder"}


def test_decoders_are_the_ops_declared_as_decoding():
    assert decoder_ops() == {f.name for f in declared_ops() if f.decodes}
    assert {"Decode", "FusedDecodeResize", "FusedDecodeRandomResizedCrop", "RandomCropDecodeResize"} <= decoder_ops()


def test_every_gpu_decoder_reads_the_encoded_bytes_first_and_every_other_translation_does_not():
    from minddata.ops.gpu.translation import TRANSLATIONS

    assert set(TRANSLATIONS) == set(ops_on("GPU"))
    first_only = {name for name, tr in TRANSLATIONS.items() if tr.first_only}
    assert first_only == decoder_ops() & set(TRANSLATIONS)


def test_the_dvpp_decoder_driver_runs_exactly_the_declared_decoders():
    from minddata.ops.dvpp.kernels import DRIVER_OPS

    assert set(DRIVER_OPS["nvjpg"]) == decoder_ops() & set(ops_on("Dvpp"))
    assert set(DRIVER_OPS["reference"]) == set(ops_on("Dvpp"))
    assert set(DRIVER_OPS["ascend"]) <= set(DRIVER_OPS["reference"])


def test_placement_prices_the_image_ops_it_used_to():
    priced = {f.name for f in declared_ops() if f.cost_ms_per_mp is not None}
    assert {"Decode", "Resize", "Normalize", "RandomColorAdjust"} <= priced
    assert {f.name for f in declared_ops() if f.float_output} >= {"Normalize", "Rescale"}


# ---------------------------------------------------------------------------------------------- fusion partners


def _declared_pairs() -> set[tuple[str, str]]:
    return {(f.name, partner) for f in declared_ops() for partner in f.fusion_partners}


def test_every_fusion_rewrite_is_declared_as_fusion_partners():
    from minddata.engine.fusions import FUSIONS

    undeclared = {(f.first, f.second) for f in FUSIONS} - _declared_pairs()
    assert not undeclared, (
        f"fusions of engine/fusions.py whose first op does not declare the second as a fusion partner: {undeclared}; "
        "add it to fusion_partners where the first op's CPU kernel declares its facts"
    )


# The first op and the input it takes, the partner built with typical arguments.
_FIRST = {"Decode": (vision.Decode, lambda: jpeg_array(random_pixels(40, 48, 0))), "Normalize": (lambda: vision.Normalize([1.0, 2.0, 3.0], [4.0, 5.0, 6.0]),
                                                           lambda: np.zeros((8, 8, 3), np.uint8))}
_PARTNER = {
    "Resize": lambda: vision.Resize((16, 16)),
    "RandomResizedCrop": lambda: vision.RandomResizedCrop(16),
    "HWC2CHW": vision.HWC2CHW,
    "TypeCast": lambda: transforms.TypeCast(np.float16),
    "ToType": lambda: vision.ToType(np.float32),
}


@pytest.mark.parametrize(("first", "partner"), sorted(_declared_pairs()))
def test_every_declared_fusion_partner_is_fused_by_the_optimizer(first, partner):
    assert first in _FIRST and partner in _PARTNER, f"{first}+{partner}: add the ops to this test's tables"
    make_first, row = _FIRST[first]
    md.config.set_fast_decode_resize(True)  # Decode+Resize fuses on the CPU only when asked
    ds = md.GeneratorDataset(lambda: iter([(row(),), (row(),)]), column_names=["image"], shuffle=False)
    ds = ds.map([make_first(), _PARTNER[partner]()], input_columns="image").batch(2)
    plan = ds.explain()
    assert re.search(rf"{first}(\+| → ){partner}\b", plan), f"{first} then {partner} is not fused:\n{plan}"
