"""GPU kernels: NVIDIA DALI translations of the op specs (``minddata[gpu]``).

Importing this package registers a GPU kernel for every op with a translation
(one module per op family, as ``minddata.ops.cpu``: ``resize.py``, ``crop.py``, ...; what they
share is :mod:`minddata.ops.gpu.translation`); it does not import DALI, which is loaded when a pipeline is
built, so ``minddata devices`` can list the GPU's ops on machines without it. The engine sees the
GPU through :mod:`minddata.ops.gpu.device` (the :class:`~minddata.ops.devices.Device` interface).
"""

import minddata.ops.gpu.kernels  # noqa: F401  (imported to register its kernels)
