"""The reference ResNet-18: its width option keeps the architecture and scales the channels."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed: the trainer needs it")

from minddata.trainer.nets import ResNet18, resnet18  # noqa: E402


def _conv_channels(net: torch.nn.Module) -> list[int]:
    return [m.out_channels for m in net.modules() if isinstance(m, torch.nn.Conv2d)]


def test_width_scales_every_convolution_and_keeps_the_layer_pattern():
    full, narrow = ResNet18(10), ResNet18(10, width=8)
    assert [c // 8 for c in _conv_channels(full)] == _conv_channels(narrow)
    assert narrow.fc.in_features == 64
    assert narrow(torch.zeros(2, 3, 32, 32)).shape == (2, 10)


def test_a_narrow_resnet18_is_the_local_definition():
    assert isinstance(resnet18(5, width=16), ResNet18)


@pytest.mark.parametrize("width", [0, -8, 2.5, True])
def test_width_must_be_a_positive_int(width):
    with pytest.raises(ValueError, match="`width` must be an int greater than 0"):
        ResNet18(10, width=width)
