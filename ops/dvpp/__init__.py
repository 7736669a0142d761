"""Dvpp kernels: the accelerator's fixed-function media engine (DESIGN.md §5).

Importing this package registers a Dvpp kernel for each op a media engine runs
(:mod:`minddata.ops.dvpp.kernels`); drivers load lazily (``acl``, DALI). The ``reference`` driver,
:mod:`minddata.ops.dvpp.rules`, models DVPP's rules and output on the CPU. The engine sees Dvpp
through :mod:`minddata.ops.dvpp.device` (the :class:`~minddata.ops.devices.Device` interface).
"""

import minddata.ops.dvpp.kernels  # noqa: F401  (imported to register its kernels)
