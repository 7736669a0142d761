"""Reference networks for the examples and benchmarks.

``resnet18(num_classes)`` is torchvision's ResNet-18 when torchvision is installed, else
:class:`ResNet18`, the same architecture defined here, so that examples and benchmarks run on torch alone.
``width`` scales every layer's channels (64 is ResNet-18's own): a narrow ResNet-18 keeps the depth
and the layer pattern at a fraction of the compute, for benchmarks where the model must not hide
the data pipeline.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from minddata.dataset.iterators import import_torch

if TYPE_CHECKING:
    import torch
else:
    torch = import_torch("minddata.trainer.nets")  # an error that names the extra when torch is absent

__all__ = ["BasicBlock", "ResNet18", "resnet18"]


class BasicBlock(torch.nn.Module):
    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.conv1 = torch.nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = torch.nn.BatchNorm2d(cout)
        self.conv2 = torch.nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = torch.nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = torch.nn.Sequential(torch.nn.Conv2d(cin, cout, 1, stride, bias=False), torch.nn.BatchNorm2d(cout))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return torch.relu(out + (x if self.down is None else self.down(x)))


class ResNet18(torch.nn.Module):
    """ResNet-18 (He et al. 2015), as torchvision defines it; ``width`` channels in the first stage
    (64 in ResNet-18), doubled at each of the next three."""

    def __init__(self, num_classes: int = 1000, width: int = 64) -> None:
        super().__init__()
        if isinstance(width, bool) or not isinstance(width, int) or width < 1:
            raise ValueError(f"ResNet18: `width` must be an int greater than 0. Found: {width!r}")
        self.stem = torch.nn.Sequential(torch.nn.Conv2d(3, width, 7, 2, 3, bias=False), torch.nn.BatchNorm2d(width),
                                        torch.nn.ReLU(), torch.nn.MaxPool2d(3, 2, 1))
        layers, cin = [], width
        for cout, stride in ((width, 1), (2 * width, 2), (4 * width, 2), (8 * width, 2)):
            layers += [BasicBlock(cin, cout, stride), BasicBlock(cout, cout, 1)]
            cin = cout
        self.layers = torch.nn.Sequential(*layers)
        self.fc = torch.nn.Linear(8 * width, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.flatten(torch.nn.functional.adaptive_avg_pool2d(self.layers(self.stem(x)), 1), 1))


def resnet18(num_classes: int = 1000, width: int = 64) -> Any:
    """torchvision's ResNet-18 when torchvision is importable and ``width`` is 64, else :class:`ResNet18`."""
    if width != 64:
        return ResNet18(num_classes, width)
    try:
        import torchvision
    except ImportError:
        return ResNet18(num_classes)
    return torchvision.models.resnet18(num_classes=num_classes)
