"""Reference networks for the examples and benchmarks.

``resnet18(num_classes)`` is torchvision's ResNet-18 when torchvision is installed, else
:class:`ResNet18`, the same architecture defined here, so that examples and benchmarks run on torch alone.
"""

from __future__ import annotations

from typing import Any

from minddata.dataset.iterators import import_torch

torch = import_torch("minddata.trainer.nets")

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
    """ResNet-18 (He et al. 2015), as torchvision defines it."""

    def __init__(self, num_classes: int = 1000) -> None:
        super().__init__()
        self.stem = torch.nn.Sequential(torch.nn.Conv2d(3, 64, 7, 2, 3, bias=False), torch.nn.BatchNorm2d(64),
                                        torch.nn.ReLU(), torch.nn.MaxPool2d(3, 2, 1))
        layers, cin = [], 64
        for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
            layers += [BasicBlock(cin, cout, stride), BasicBlock(cout, cout, 1)]
            cin = cout
        self.layers = torch.nn.Sequential(*layers)
        self.fc = torch.nn.Linear(512, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.flatten(torch.nn.functional.adaptive_avg_pool2d(self.layers(self.stem(x)), 1), 1))


def resnet18(num_classes: int = 1000) -> Any:
    """torchvision's ResNet-18 when torchvision is importable, else :class:`ResNet18`."""
    try:
        import torchvision
    except ImportError:
        return ResNet18(num_classes)
    return torchvision.models.resnet18(num_classes=num_classes)
