"""CPU kernels: the reference implementation of every op. Importing this package registers them."""

from minddata.ops.cpu import generic, image  # noqa: F401  (imported to register their kernels)
