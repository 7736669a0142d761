"""CPU kernels: the reference implementation of every op. Importing this package registers them.

One module per op family, named as its spec module in ``minddata.vision`` (``resize.py`` ↔
``minddata/vision/resize.py``); ``image.py`` holds the input checks they share, ``fused.py`` the
kernels of the optimizer's fused ops, ``jpeg.py`` the libjpeg-turbo binding.
"""

from minddata.ops import kernel_threads as _kernel_threads
from minddata.ops.cpu import (  # noqa: F401  (imported to register their kernels; PyAV loads on first use)
    adjust,
    affine,
    augment_policies,
    bbox,
    biquad,
    color,
    convert,
    crop,
    decode,
    effects,
    erase_mix,
    features,
    flip,
    fused,
    generic,
    masking,
    mixup,
    multi_crop,
    normalize,
    pad_erase,
    perspective,
    phase,
    reconstruct,
    resize,
    spectrogram,
    tensor_ops,
    text,
    text_tokenizers,
    video,
    waveform,
)

_kernel_threads.apply_if_held()  # a pipeline that started before OpenCV was imported
