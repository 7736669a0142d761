"""CPU kernels: the reference implementation of every op. Importing this package registers them."""

import minddata.ops.cpu.color  # noqa: F401  (imported to register its kernels)
import minddata.ops.cpu.erase_mix  # noqa: F401  (imported to register its kernels)
import minddata.ops.cpu.fused  # noqa: F401  (imported to register its kernels)
import minddata.ops.cpu.geometry  # noqa: F401  (imported to register its kernels)
import minddata.ops.cpu.normalize  # noqa: F401  (imported to register its kernels)
from minddata.ops.cpu import generic, image  # noqa: F401  (imported to register their kernels)
