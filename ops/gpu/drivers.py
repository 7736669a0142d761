"""Which GPU driver runs a segment: NVIDIA DALI or PyTorch.

Backends (``probe.gpu_backend()`` says which one this machine gets): ``"cuda"`` and ``"dali-cpu"`` run
:class:`~minddata.ops.gpu.segment.DaliSegment`; ``"torch-cuda"`` and ``"torch-cpu"`` run
:class:`~minddata.ops.gpu.torch_segment.TorchSegment`. Both share the ops' host-side plans, so they
draw the same random parameters.
"""

from __future__ import annotations

from typing import Any

from minddata.ops.base import Op

__all__ = ["BACKENDS", "make_segment", "unsupported_reason", "is_real_gpu", "describe"]

BACKENDS = ("cuda", "dali-cpu", "torch-cuda", "torch-cpu")


def is_real_gpu(backend: str | None) -> bool:
    """Whether ``backend`` runs on a GPU (not an emulation on the CPU)."""
    return backend in ("cuda", "torch-cuda")


def describe(backend: str | None) -> str:
    return {
        "cuda": "one DALI pipeline on the GPU",
        "dali-cpu": "one DALI pipeline on DALI CPU (emulation)",
        "torch-cuda": "one torch segment on the GPU",
        "torch-cpu": "one torch segment on CPU tensors (emulation)",
    }.get(backend or "cuda", f"one segment on {backend}")


def make_segment(ops: list[Op], *, backend: str, **kwargs: Any) -> Any:
    """The segment that runs ``ops`` on ``backend`` (see the module docstring)."""
    if backend.startswith("torch"):
        from minddata.ops.gpu.torch_segment import TorchSegment

        # DALI's own knobs: the share of decoding sent to NVJPG and DALI's CPU threads.
        kwargs.pop("hw_decoder_load", None)
        kwargs.pop("num_threads", None)
        return TorchSegment(ops, backend=backend, **kwargs)
    from minddata.ops.gpu.segment import DaliSegment

    return DaliSegment(ops, backend=backend, **kwargs)


def unsupported_reason(op: Op, backend: str | None) -> str | None:
    """``None`` when ``op`` runs on ``backend``'s driver, else why not."""
    if backend is not None and backend.startswith("torch"):
        from minddata.ops.gpu.torch_segment import torch_unsupported_reason

        return torch_unsupported_reason(op)
    from minddata.ops.gpu.translation import unsupported_reason as dali_reason

    return dali_reason(op)
