"""Global pipeline settings, named as in ``mindspore.dataset.config``.

Settings are read when an iterator is created, so changing them affects pipelines iterated afterwards:
the iterator takes one frozen :class:`RunOptions` snapshot (:func:`snapshot`) and hands it, through
its runtime and every kernel's context, to worker threads and worker processes alike. Kernels read
``ctx.options``, never these globals, so a setting has the same effect in every kind of worker.

Examples:
    >>> import minddata as md
    >>> md.config.set_seed(1)
    >>> md.config.get_seed()
    1
"""

from __future__ import annotations

import dataclasses
import enum
import multiprocessing
import os
import random
import threading

import numpy as np

from minddata.errors import warn

__all__ = [
    "ErrorSamplesMode",
    "RunOptions",
    "snapshot",
    "set_seed",
    "get_seed",
    "seed_is_set",
    "set_num_parallel_workers",
    "get_num_parallel_workers",
    "set_prefetch_size",
    "get_prefetch_size",
    "set_error_samples_mode",
    "get_error_samples_mode",
    "set_enable_fusion",
    "get_enable_fusion",
    "set_fast_decode_resize",
    "get_fast_decode_resize",
    "set_rows_per_chunk",
    "get_rows_per_chunk",
    "set_worker_shm_size",
    "get_worker_shm_size",
    "set_framework",
    "get_framework",
    "set_max_image_pixels",
    "get_max_image_pixels",
    "set_device_fallback",
    "get_device_fallback",
    "set_dvpp_driver",
    "get_dvpp_driver",
    "set_dvpp_policy",
    "get_dvpp_policy",
    "set_gpu_emulation",
    "get_gpu_emulation",
    "set_gpu_device_id",
    "get_gpu_device_id",
    "set_gpu_driver",
    "get_gpu_driver",
    "set_profiling",
    "get_profiling",
    "set_autotune",
    "get_autotune",
    "get_autotune_budget",
    "load_defaults",
    "set_multiprocessing_start_method",
    "get_multiprocessing_start_method",
    "set_enable_autotune",
    "get_enable_autotune",
    "set_autotune_interval",
    "get_autotune_interval",
    "set_auto_num_workers",
    "get_auto_num_workers",
    "set_monitor_sampling_interval",
    "get_monitor_sampling_interval",
    "set_callback_timeout",
    "get_callback_timeout",
    "set_iterator_mode",
    "get_iterator_mode",
    "set_fast_recovery",
    "get_fast_recovery",
    "set_numa_enable",
    "get_numa_enable",
    "set_video_backend",
    "get_video_backend",
    "set_enable_shared_mem",
    "get_enable_shared_mem",
    "set_multiprocessing_timeout_interval",
    "get_multiprocessing_timeout_interval",
    "set_enable_watchdog",
    "get_enable_watchdog",
    "set_auto_offload",
    "get_auto_offload",
    "set_sending_batches",
    "get_sending_batches",
    "set_dynamic_shape",
    "get_dynamic_shape",
    "set_debug_mode",
    "get_debug_mode",
    "load",
]

_lock = threading.Lock()

# MindSpore's dataset seed when none was set (std::mt19937::default_seed).
DEFAULT_SEED = 5489

# Pillow's decompression-bomb error threshold (2 x PIL.Image.MAX_IMAGE_PIXELS): about 179 MP, 537 MB
# as RGB. Larger headers are almost always hostile or corrupt, and decoding one could exhaust memory.
DEFAULT_MAX_IMAGE_PIXELS = 178_956_970


class ErrorSamplesMode(str, enum.Enum):
    """What a map does with a row whose op raised: ``RAISE`` the error, ``SKIP`` the row, or
    ``REPLACE`` it with the nearest good row before it (keeps the row count)."""

    RAISE = "raise"
    SKIP = "skip"
    REPLACE = "replace"
    # MindSpore's name for RAISE.
    RETURN = "raise"


def _default_workers() -> int:
    return max(1, min(8, os.cpu_count() or 1))


_START_METHODS = ("fork", "spawn", "forkserver")


def _default_start_method() -> str:
    # Linux forks, as MindSpore and torch's DataLoader do there; macOS and Windows spawn (fork is
    # unsafe or absent there, and CPython itself changed the macOS default to spawn).
    if os.name == "posix" and os.uname().sysname == "Linux":
        return "fork"
    return "spawn"


_state: dict[str, object] = {}


def load_defaults() -> None:
    """Restore every setting to its default."""
    with _lock:
        _state.clear()
        _state.update(
            seed=None,
            num_parallel_workers=_default_workers(),
            prefetch_size=16,
            error_samples_mode=ErrorSamplesMode.RAISE,
            enable_fusion=True,
            fast_decode_resize=False,
            rows_per_chunk=32,
            worker_shm_size=16 << 20,
            framework="numpy",
            max_image_pixels=DEFAULT_MAX_IMAGE_PIXELS,
            device_fallback="error",
            dvpp_driver="auto",
            dvpp_policy="error",
            gpu_emulation=False,
            gpu_device_id=None,
            gpu_driver="auto",
            profiling=False,
            autotune=False,
            autotune_cpu_budget=None,
            autotune_memory_budget=None,
            multiprocessing_start_method=_default_start_method(),
            autotune_interval=0,
            autotune_save_prefix=None,
            auto_num_workers=False,
            monitor_sampling_interval=10,
            callback_timeout=60,
            iterator_copy=False,
            iterator_parallel_convert=True,
            fast_recovery=True,
            numa_enable=False,
            video_backend="CPU",
            enable_shared_mem=True,
            multiprocessing_timeout_interval=300,
            enable_watchdog=True,
            auto_offload=False,
            sending_batches=0,
            dynamic_shape=False,
            debug_mode=False,
            debug_hooks=None,
        )


load_defaults()
_warned_workers = False


@dataclasses.dataclass(frozen=True)
class RunOptions:
    """Every setting, frozen when an iterator is created (:func:`snapshot`); it travels by pickle to
    worker processes with the map's work, so threads and processes see the same values.

    ``seed`` is the configured seed, or ``None`` when none was set.

    Examples:
        >>> import minddata as md
        >>> md.config.set_max_image_pixels(1000)
        >>> options = md.config.snapshot()
        >>> md.config.set_max_image_pixels(None)
        >>> options.max_image_pixels
        1000
        >>> md.config.load_defaults()
    """

    seed: int | None
    num_parallel_workers: int
    prefetch_size: int
    error_samples_mode: ErrorSamplesMode
    enable_fusion: bool
    fast_decode_resize: bool
    rows_per_chunk: int
    worker_shm_size: int
    framework: str
    max_image_pixels: int | None
    device_fallback: str
    dvpp_driver: str
    dvpp_policy: str
    gpu_emulation: bool
    gpu_device_id: int | None
    gpu_driver: str
    profiling: bool
    autotune: bool
    autotune_cpu_budget: float | None
    autotune_memory_budget: int | None
    multiprocessing_start_method: str
    autotune_interval: int
    autotune_save_prefix: str | None
    auto_num_workers: bool
    monitor_sampling_interval: int
    callback_timeout: int
    iterator_copy: bool
    iterator_parallel_convert: bool
    fast_recovery: bool
    numa_enable: bool
    video_backend: str
    enable_shared_mem: bool
    multiprocessing_timeout_interval: int
    enable_watchdog: bool
    auto_offload: bool
    sending_batches: int
    dynamic_shape: bool
    debug_mode: bool
    debug_hooks: tuple | None


def snapshot() -> RunOptions:
    """The current settings as one immutable :class:`RunOptions`."""
    with _lock:
        return RunOptions(**_state)  # type: ignore[arg-type]


def _positive_int(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"config.{name}: the value must be an int. Found: {value!r} ({type(value).__name__})")
    if value <= 0:
        raise ValueError(f"config.{name}: the value must be greater than 0. Found: {value}")
    return int(value)


def set_seed(seed: int) -> None:
    """Seed every random choice of pipelines created afterwards (shuffles, samplers, random ops).

    With a seed set, output is bit-identical across runs and whatever the worker counts. Like
    MindSpore, this also seeds Python's ``random`` and NumPy's global generator.
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2**32:
        raise ValueError(f"config.set_seed: seed must be an int in [0, 2**32). Found: {seed!r}")
    with _lock:
        _state["seed"] = int(seed)
    random.seed(int(seed))
    np.random.seed(int(seed))


def get_seed() -> int:
    """The seed in use: the one set by :func:`set_seed`, or MindSpore's default 5489 when none was set.

    This seed keys everything that the ranks of a data-parallel job must draw alike: the permutation
    of a sharded sampler or source (``num_shards``/``shard_id``), the file order of a sharded stream
    and ``split(randomize=True)``. So shards are disjoint and cover each epoch whether or not a seed
    was set, as in MindSpore, whose distributed sampler also starts from this value.

    What needs no agreement between ranks (unsharded shuffles, shuffle buffers, random
    augmentations) draws, when no seed was set, from a fresh seed per iterator taken from the OS, as
    MindSpore does; that one is ``iterator.get_state()["seed"]``.

    Examples:
        >>> import minddata as md
        >>> md.config.load_defaults()
        >>> md.config.get_seed()
        5489
        >>> md.config.set_seed(7)
        >>> md.config.get_seed()
        7
        >>> md.config.load_defaults()
    """
    seed = _state["seed"]
    return DEFAULT_SEED if seed is None else int(seed)


def seed_is_set() -> bool:
    return _state["seed"] is not None


def set_num_parallel_workers(num: int) -> None:
    """Default worker count of maps and sources that are not given one.

    Unlike MindSpore, a count above the number of cores is accepted (with one warning): threads that
    wait on I/O or release the GIL can usefully outnumber cores.
    """
    num = _positive_int("set_num_parallel_workers", num)
    warn_if_oversubscribed(num)
    with _lock:
        _state["num_parallel_workers"] = num


def warn_if_oversubscribed(num: int) -> None:
    global _warned_workers
    cores = os.cpu_count() or 1
    if num > cores and not _warned_workers:
        _warned_workers = True
        warn(
            "num_parallel_workers=%d is more than this machine's %d cores; allowed, but CPU-bound ops "
            "will not get faster past %d",
            num, cores, cores,
        )


def get_num_parallel_workers() -> int:
    return int(_state["num_parallel_workers"])


def set_prefetch_size(size: int) -> None:
    """Rows buffered ahead of the consumer by each pipeline stage (MindSpore's connector queue size)."""
    _state["prefetch_size"] = _positive_int("set_prefetch_size", size)


def get_prefetch_size() -> int:
    return int(_state["prefetch_size"])


def set_error_samples_mode(mode: str | ErrorSamplesMode) -> None:
    """How a map treats a row whose op raises: ``"raise"`` (default), ``"skip"`` or ``"replace"``."""
    try:
        _state["error_samples_mode"] = ErrorSamplesMode(getattr(mode, "value", mode))
    except ValueError:
        raise ValueError(
            f"config.set_error_samples_mode: mode must be one of 'raise', 'skip', 'replace'. Found: {mode!r}"
        ) from None


def get_error_samples_mode() -> ErrorSamplesMode:
    return _state["error_samples_mode"]  # type: ignore[return-value]


def set_enable_fusion(enable: bool) -> None:
    """Switch the graph optimizer's op fusion on (default) or off."""
    if not isinstance(enable, bool):
        raise TypeError(f"config.set_enable_fusion: enable must be a bool. Found: {enable!r}")
    _state["enable_fusion"] = enable


def get_enable_fusion() -> bool:
    return bool(_state["enable_fusion"])


def set_fast_decode_resize(enable: bool) -> None:
    """Let fusion decode JPEGs at a reduced DCT scale (1/2, 1/4, 1/8) before a deterministic
    ``Resize`` to a small size (off by default).

    Off, ``Decode → Resize`` gives MindSpore's pixels: the full decode, then the resize. On, the
    decoder's own downscaling (an averaging filter) replaces part of the resize's, which saves some
    decode time (the entropy decoding is not reduced, so 10-25%) and gives other pixels: measured on
    200 generated ImageNet-like images (``python -m minddata.bench.fusion_pixels``), 5-9 grey levels
    of mean absolute difference (per image at most 12). A model trained on MindSpore's (or this
    library's default) preprocessing then sees inputs it was not trained on. Random crops
    (``RandomResizedCrop`` after ``Decode``, ``RandomCropDecodeResize``) always use the reduced
    scale: their pixels are random anyway (docs/mindspore_differences.md gives the measured
    difference).

    Examples:
        >>> import minddata as md
        >>> md.config.set_fast_decode_resize(True)
        >>> md.config.get_fast_decode_resize()
        True
        >>> md.config.load_defaults()
    """
    if not isinstance(enable, bool):
        raise TypeError(f"config.set_fast_decode_resize: enable must be a bool. Found: {enable!r}")
    _state["fast_decode_resize"] = enable


def get_fast_decode_resize() -> bool:
    return bool(_state["fast_decode_resize"])


def set_rows_per_chunk(rows: int) -> None:
    """Rows moved together between stages. Larger chunks cost less per row and add latency."""
    _state["rows_per_chunk"] = _positive_int("set_rows_per_chunk", rows)


def get_rows_per_chunk() -> int:
    return int(_state["rows_per_chunk"])


def set_worker_shm_size(nbytes: int) -> None:
    """Initial shared-memory arena per worker process, in bytes; arenas grow when a chunk needs more."""
    _state["worker_shm_size"] = _positive_int("set_worker_shm_size", nbytes)


def get_worker_shm_size() -> int:
    return int(_state["worker_shm_size"])


_FRAMEWORKS = ("numpy", "torch", "jax", "cupy")


def set_framework(name: str) -> None:
    """Tensor type returned by iterators created with ``output_numpy=False``: ``"numpy"`` (default),
    ``"torch"``, ``"jax"`` or ``"cupy"``. Rows made on the GPU reach torch and CuPy (and JAX, through
    CuPy and DLPack) without leaving the GPU; host rows are handed over without a copy where the
    framework allows (torch, JAX on the CPU) and copied to the device otherwise."""
    if name not in _FRAMEWORKS:
        raise ValueError(f"config.set_framework: name must be one of {_FRAMEWORKS}. Found: {name!r}")
    _state["framework"] = name


def get_framework() -> str:
    return str(_state["framework"])


def set_max_image_pixels(n: int | None) -> None:
    """Largest image (width x height, read from its header) that ``vision.Decode`` will decode.

    A larger image is refused before any pixel is decoded, so a small file claiming a huge size (a
    "decompression bomb") cannot exhaust memory. The default, 178,956,970, is where Pillow refuses
    images outright (twice ``PIL.Image.MAX_IMAGE_PIXELS``). ``None`` removes the limit.

    Examples:
        >>> import minddata as md
        >>> md.config.set_max_image_pixels(4096 * 4096)
        >>> md.config.get_max_image_pixels()
        16777216
        >>> md.config.set_max_image_pixels(None)
        >>> md.config.get_max_image_pixels() is None
        True
        >>> md.config.load_defaults()
    """
    _state["max_image_pixels"] = None if n is None else _positive_int("set_max_image_pixels", n)


def get_max_image_pixels() -> int | None:
    """The limit set by :func:`set_max_image_pixels` (``None``: no limit)."""
    value = _state["max_image_pixels"]
    return None if value is None else int(value)  # type: ignore[call-overload]


# --- devices (DESIGN.md §5) -----------------------------------------------------------------------

_FALLBACKS = ("error", "cpu")
_DVPP_DRIVERS = ("auto", "nvjpg", "ascend", "reference")
_DVPP_POLICIES = ("error", "cpu")


def _choice(name: str, value: object, choices: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value.lower() not in choices:
        raise ValueError(f"config.{name}: the value must be one of {choices}. Found: {value!r}")
    return value.lower()


def set_device_fallback(mode: str) -> None:
    """What a pipeline does when an op is placed on a device this machine lacks.

    ``"error"`` (default): creating the iterator raises :class:`~minddata.errors.DeviceError` naming
    the op, the device, what is missing and the fix. ``"cpu"``: the op runs on the CPU instead, with
    one warning per iterator in the ``minddata`` log.

    Examples:
        >>> import minddata as md
        >>> md.config.set_device_fallback("cpu")
        >>> md.config.get_device_fallback()
        'cpu'
        >>> md.config.load_defaults()
    """
    _state["device_fallback"] = _choice("set_device_fallback", mode, _FALLBACKS)


def get_device_fallback() -> str:
    return str(_state["device_fallback"])


def set_dvpp_driver(name: str) -> None:
    """Which driver runs ops placed on ``"Dvpp"``.

    ``"auto"`` (default): the first hardware engine found (``"nvjpg"``: NVIDIA's hardware JPEG decoder
    through DALI; ``"ascend"``: Huawei DVPP through CANN's ``acl``); none found means Dvpp is absent.
    ``"reference"``: a CPU model of DVPP's rules (JPEG-only decode, size limits, alignment, YUV420SP
    output); never chosen automatically, it previews how a pipeline behaves on Dvpp and tests placement.

    Examples:
        >>> import minddata as md
        >>> md.config.set_dvpp_driver("reference")
        >>> md.config.get_dvpp_driver()
        'reference'
        >>> md.config.load_defaults()
    """
    _state["dvpp_driver"] = _choice("set_dvpp_driver", name, _DVPP_DRIVERS)


def get_dvpp_driver() -> str:
    return str(_state["dvpp_driver"])


def set_dvpp_policy(policy: str) -> None:
    """What a Dvpp op does with a row its engine can't take (a PNG for Decode, an image outside the
    size limits): ``"error"`` (default) fails the row, naming the row and the rule (then
    ``set_error_samples_mode`` applies); ``"cpu"`` runs that row alone on the CPU kernel and counts it
    (``iterator.device_stats.cpu_rows``)."""
    _state["dvpp_policy"] = _choice("set_dvpp_policy", policy, _DVPP_POLICIES)


def get_dvpp_policy() -> str:
    return str(_state["dvpp_policy"])


def set_gpu_emulation(enable: bool) -> None:
    """Run ops placed on ``"GPU"`` through DALI's CPU backend (``device_id=None``) when no GPU is
    visible: the same translated DALI pipeline, on the CPU. For testing the translation and previewing
    output on machines without a GPU (CI); never faster than the CPU kernels, and placement
    (``device="auto"``) never chooses it."""
    if not isinstance(enable, bool):
        raise TypeError(f"config.set_gpu_emulation: enable must be a bool. Found: {enable!r}")
    _state["gpu_emulation"] = enable


def get_gpu_emulation() -> bool:
    return bool(_state["gpu_emulation"])


def set_gpu_device_id(device_id: int | None) -> None:
    """The CUDA device GPU and Dvpp (nvjpg) ops run on. ``None`` (the default) follows the training
    framework: torch's current CUDA device when torch has initialized CUDA in this process, else
    ``$LOCAL_RANK`` (set by torchrun for each data-parallel rank), else device 0.

    Examples:
        >>> import minddata as md
        >>> md.config.set_gpu_device_id(1)
        >>> md.config.get_gpu_device_id()
        1
        >>> md.config.load_defaults()
    """
    if device_id is not None:
        if isinstance(device_id, bool) or not isinstance(device_id, (int, np.integer)) or device_id < 0:
            raise ValueError(f"config.set_gpu_device_id: `device_id` must be None or an int >= 0. Found: {device_id!r}")
        device_id = int(device_id)
    _state["gpu_device_id"] = device_id


_GPU_DRIVERS = ("auto", "dali", "torch")


def set_gpu_driver(driver: str) -> None:
    """What runs ops placed on ``"GPU"``: ``"dali"`` (NVIDIA DALI pipelines), ``"torch"`` (PyTorch CUDA
    tensors), or ``"auto"`` (the default: DALI where it is installed, else torch). Both drivers run the
    same per-row plans, so a seeded pipeline gives the same crops and flips on either and on the CPU.

    Examples:
        >>> import minddata as md
        >>> md.config.set_gpu_driver("torch")
        >>> md.config.get_gpu_driver()
        'torch'
        >>> md.config.load_defaults()
    """
    _state["gpu_driver"] = _choice("set_gpu_driver", driver, _GPU_DRIVERS)


def get_gpu_driver() -> str:
    return str(_state["gpu_driver"])


def get_gpu_device_id() -> int | None:
    """The device set by :func:`set_gpu_device_id`, or None (follow the framework)."""
    value = _state["gpu_device_id"]
    return None if value is None else int(value)  # type: ignore[arg-type]


def set_profiling(enable: bool) -> None:
    """Profile every iterator started afterwards, as if each ran inside a ``minddata.Profiler``.

    Each iterator's profile is then ``iterator.profiler`` (a :class:`minddata.Profiler`).

    Examples:
        >>> import minddata as md
        >>> md.config.set_profiling(True)
        >>> it = md.NumpySlicesDataset({"x": [1, 2, 3]}).create_dict_iterator(num_epochs=1)
        >>> rows = list(it)
        >>> it.profiler.summary().rows
        3
        >>> md.config.load_defaults()
    """
    if not isinstance(enable, bool):
        raise TypeError(f"config.set_profiling: enable must be a bool. Found: {enable!r}")
    _state["profiling"] = enable


def get_profiling() -> bool:
    return bool(_state["profiling"])


def set_autotune(enable: bool, cpu_budget: float | None = None, memory_budget: int | None = None) -> None:
    """Let autotune adjust the workers and slots of every parallel stage of pipelines started afterwards.

    Without this, only stages given ``num_parallel_workers=minddata.AUTOTUNE`` are tuned.
    ``cpu_budget``: cores the pipeline may keep busy (default: the cores this process may use);
    ``memory_budget``: bytes the chunks held in stage queues may take (default: a quarter of RAM).
    Decisions are logged on the ``minddata.autotune`` logger and listed in the profiler summary.

    Examples:
        >>> import minddata as md
        >>> md.config.set_autotune(True, cpu_budget=2)
        >>> md.config.get_autotune(), md.config.get_autotune_budget()
        (True, (2.0, None))
        >>> md.config.load_defaults()
    """
    if not isinstance(enable, bool):
        raise TypeError(f"config.set_autotune: enable must be a bool. Found: {enable!r}")
    if cpu_budget is not None:
        if isinstance(cpu_budget, bool) or not isinstance(cpu_budget, (int, float, np.integer, np.floating)) \
                or not cpu_budget > 0:
            raise ValueError(f"config.set_autotune: cpu_budget must be a number of cores > 0. Found: {cpu_budget!r}")
        cpu_budget = float(cpu_budget)
    if memory_budget is not None:
        memory_budget = _positive_int("set_autotune: memory_budget", memory_budget)
    _state.update(autotune=enable, autotune_cpu_budget=cpu_budget, autotune_memory_budget=memory_budget)


def get_autotune() -> bool:
    return bool(_state["autotune"])


def get_autotune_budget() -> tuple[float | None, int | None]:
    """``(cpu_budget, memory_budget)`` as set by :func:`set_autotune`; ``None`` means the default."""
    return _state["autotune_cpu_budget"], _state["autotune_memory_budget"]  # type: ignore[return-value]


def set_multiprocessing_start_method(method: str) -> None:
    """How worker processes (``python_multiprocessing=True``) start: ``"fork"`` (default on Linux),
    ``"spawn"`` (default elsewhere) or ``"forkserver"``, MindSpore's setting of the same name.

    ``"fork"``: the workers are forked when the iterator is created, before the pipeline starts any
    thread of its own, so they inherit the callables as they are (nothing is pickled) and the main
    script is not run again: a script without an ``if __name__ == "__main__":`` guard works, as with
    torch's DataLoader. A worker only runs the map's Python code: never the engine's threads, DALI
    pipelines or locks it inherited. Rule for your own code: do not create CUDA state (torch.cuda,
    CuPy) before the iterator if its workers need the GPU; when torch has initialized CUDA in this
    process, or JAX has started its runtime, workers are spawned instead (a fork could not use them),
    with one warning.
    ``"spawn"`` / ``"forkserver"``: a fresh interpreter re-imports the main script, which therefore
    needs the ``__main__`` guard; callables travel with cloudpickle.

    Examples:
        >>> import minddata as md
        >>> md.config.set_multiprocessing_start_method("spawn")
        >>> md.config.get_multiprocessing_start_method()
        'spawn'
        >>> md.config.load_defaults()
    """
    method = _choice("set_multiprocessing_start_method", method, _START_METHODS)
    if method not in multiprocessing.get_all_start_methods():
        raise ValueError(
            f"config.set_multiprocessing_start_method: {method!r} is not available on this platform; "
            f"available: {multiprocessing.get_all_start_methods()}"
        )
    _state["multiprocessing_start_method"] = method


def get_multiprocessing_start_method() -> str:
    """The start method of worker processes (see :func:`set_multiprocessing_start_method`)."""
    return str(_state["multiprocessing_start_method"])


def _bool(name: str, value: object) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"config.{name}: the value must be a bool. Found: {value!r} ({type(value).__name__})")
    return bool(value)


def _non_negative_int(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"config.{name}: the value must be an int. Found: {value!r} ({type(value).__name__})")
    if not 0 <= value <= 2**31 - 1:
        raise ValueError(f"config.{name}: the value must be in [0, 2147483647]. Found: {value}")
    return int(value)


def set_enable_autotune(enable: bool, filepath_prefix: str | None = None) -> None:
    """MindSpore's switch for autotune (:func:`set_autotune` with the default budgets).

    With ``filepath_prefix``, each autotuned run writes what it settled on, when it ends, to
    ``{filepath_prefix}_{rank}.json`` (``rank``: the ``RANK_ID`` environment variable, else 0, as
    MindSpore names it): every parallel stage's final workers and slots, and the decisions that led
    there. Start later runs from those counts by passing them as ``num_parallel_workers``.

    Examples:
        >>> import minddata as md
        >>> md.config.set_enable_autotune(True)
        >>> md.config.get_enable_autotune(), md.config.get_autotune()
        (True, True)
        >>> md.config.load_defaults()
    """
    enable = _bool("set_enable_autotune", enable)
    if filepath_prefix is not None:
        if not isinstance(filepath_prefix, (str, os.PathLike)) or not str(filepath_prefix):
            raise TypeError(f"config.set_enable_autotune: filepath_prefix must be a non-empty path. Found: {filepath_prefix!r}")
        folder = os.path.dirname(os.path.abspath(str(filepath_prefix)))
        if not os.path.isdir(folder):
            raise ValueError(f"config.set_enable_autotune: the folder of filepath_prefix does not exist: {folder}. "
                             "Create it first.")
        filepath_prefix = str(filepath_prefix)
    _state.update(autotune=enable, autotune_save_prefix=filepath_prefix if enable else None)


def get_enable_autotune() -> bool:
    """Whether autotune tunes every pipeline (:func:`set_enable_autotune`, :func:`set_autotune`)."""
    return bool(_state["autotune"])


def set_autotune_interval(interval: int) -> None:
    """How often autotune looks and adjusts, in steps (batches the consumer takes), as in MindSpore.

    ``0`` (the default) means continuously: a look every 0.15 s of wall time, so that a change shows
    within a second. (MindSpore's 0 means once per epoch; minddata's trial-and-keep tuning needs
    several looks per epoch to settle.)

    Examples:
        >>> import minddata as md
        >>> md.config.set_autotune_interval(20)
        >>> md.config.get_autotune_interval()
        20
        >>> md.config.load_defaults()
    """
    _state["autotune_interval"] = _non_negative_int("set_autotune_interval", interval)


def get_autotune_interval() -> int:
    return int(_state["autotune_interval"])  # type: ignore[call-overload]


def set_auto_num_workers(enable: bool) -> None:
    """Let the engine choose the worker count of every map (MindSpore's ``auto_num_workers``).

    minddata chooses them while the pipeline runs: autotune starts each parallel stage from its given
    ``num_parallel_workers`` and adds or takes back workers by measured throughput, within the CPU
    budget (only the worker counts: prefetch and queue sizes are left as set). Worker counts never
    change the rows produced.

    Examples:
        >>> import minddata as md
        >>> md.config.set_auto_num_workers(True)
        >>> md.config.get_auto_num_workers()
        True
        >>> md.config.load_defaults()
    """
    _state["auto_num_workers"] = _bool("set_auto_num_workers", enable)


def get_auto_num_workers() -> bool:
    return bool(_state["auto_num_workers"])


def set_monitor_sampling_interval(interval: int) -> None:
    """Milliseconds between the profiler's samples of queue use and worker states.

    The default is 10 ms (MindSpore samples every 1,000 ms; queue use between short stages needs
    finer samples). A ``minddata.Profiler`` given its own ``sample_interval`` uses that instead.

    Examples:
        >>> import minddata as md
        >>> md.config.set_monitor_sampling_interval(50)
        >>> md.config.get_monitor_sampling_interval()
        50
        >>> md.config.load_defaults()
    """
    interval = _non_negative_int("set_monitor_sampling_interval", interval)
    if interval == 0:
        raise ValueError("config.set_monitor_sampling_interval: the interval must be greater than 0 ms. Found: 0")
    _state["monitor_sampling_interval"] = interval


def get_monitor_sampling_interval() -> int:
    return int(_state["monitor_sampling_interval"])  # type: ignore[call-overload]


def set_callback_timeout(timeout: int) -> None:
    """Seconds a ``WaitedDSCallback`` waits for the training loop to end a step or an epoch before
    it raises (default 60, as MindSpore).

    Examples:
        >>> import minddata as md
        >>> md.config.set_callback_timeout(5)
        >>> md.config.get_callback_timeout()
        5
        >>> md.config.load_defaults()
    """
    _state["callback_timeout"] = _positive_int("set_callback_timeout", timeout)


def get_callback_timeout() -> int:
    return int(_state["callback_timeout"])  # type: ignore[call-overload]


def set_iterator_mode(do_copy: bool = False, parallel_convert: bool = True) -> None:
    """How iterators hand rows to a framework (``config.set_framework``), as MindSpore's setting.

    ``do_copy``: copy each array into a new tensor (True) or share its memory (False, the default:
    every batch is a fresh array that the pipeline never touches again, so sharing is safe and saves a
    copy; MindSpore's default is True). ``parallel_convert``: build the rows and tensors on the
    pipeline's prefetch thread (True, the default), or on the thread that calls ``next`` (False).
    Neither changes the values.

    Examples:
        >>> import minddata as md
        >>> md.config.set_iterator_mode(do_copy=True, parallel_convert=False)
        >>> md.config.get_iterator_mode()
        {'do_copy': True, 'parallel_convert': False}
        >>> md.config.load_defaults()
    """
    _state.update(iterator_copy=_bool("set_iterator_mode: do_copy", do_copy),
                  iterator_parallel_convert=_bool("set_iterator_mode: parallel_convert", parallel_convert))


def get_iterator_mode() -> dict[str, bool]:
    return {"do_copy": bool(_state["iterator_copy"]), "parallel_convert": bool(_state["iterator_parallel_convert"])}


def set_fast_recovery(fast_recovery: bool) -> None:
    """MindSpore's choice between a fast resume (skip re-running random ops) and an exact one.

    minddata's resume is both: it restores each source's position and each random op's per-row RNG
    directly, without replaying rows, so the resumed rows equal an uninterrupted run's. The setting
    is kept (and read back) so that MindSpore scripts run unchanged; it does not change resume.

    Examples:
        >>> import minddata as md
        >>> md.config.set_fast_recovery(False)
        >>> md.config.get_fast_recovery()
        False
        >>> md.config.load_defaults()
    """
    _state["fast_recovery"] = _bool("set_fast_recovery", fast_recovery)


def get_fast_recovery() -> bool:
    return bool(_state["fast_recovery"])


def set_numa_enable(numa_enable: bool) -> None:
    """MindSpore's NUMA binding switch. minddata leaves thread and process placement to the operating
    system's scheduler; the setting is kept and read back so that MindSpore scripts run unchanged.

    Examples:
        >>> import minddata as md
        >>> md.config.set_numa_enable(True)
        >>> md.config.get_numa_enable()
        True
        >>> md.config.load_defaults()
    """
    _state["numa_enable"] = _bool("set_numa_enable", numa_enable)


def get_numa_enable() -> bool:
    return bool(_state["numa_enable"])


_VIDEO_BACKENDS = ("CPU", "Ascend")


def set_video_backend(backend: str) -> None:
    """The device that decodes video (``"CPU"``, the default, or ``"Ascend"``), as in MindSpore.

    Examples:
        >>> import minddata as md
        >>> md.config.get_video_backend()
        'CPU'
    """
    if backend not in _VIDEO_BACKENDS:
        raise ValueError(f"config.set_video_backend: backend must be one of {list(_VIDEO_BACKENDS)}. Found: {backend!r}")
    _state["video_backend"] = backend


def get_video_backend() -> str:
    return str(_state["video_backend"])


def set_enable_shared_mem(enable: bool) -> None:
    """Whether process workers (``python_multiprocessing=True``) pass arrays through shared memory
    (True, the default, as MindSpore) or through their pipe, inside the pickle (False).

    With shared memory, arrays of 64 KiB or more are written once into a per-worker arena in
    ``/dev/shm`` and only their place crosses the pipe; without it, no segment is created and each
    array is copied through the pipe, which is slower for large arrays but works where ``/dev/shm``
    is small or absent (a container started without ``--shm-size``). The rows are the same.

    Examples:
        >>> import minddata as md
        >>> md.config.set_enable_shared_mem(False)
        >>> md.config.get_enable_shared_mem()
        False
        >>> md.config.load_defaults()
    """
    _state["enable_shared_mem"] = _bool("set_enable_shared_mem", enable)


def get_enable_shared_mem() -> bool:
    return bool(_state["enable_shared_mem"])


def set_multiprocessing_timeout_interval(interval: int) -> None:
    """Seconds between the warnings logged while a process worker (``python_multiprocessing=True``)
    has not answered (default 300, as MindSpore).

    The warning, on the ``minddata`` logger, names the map and its worker, the worker's pid and how
    long it has been waiting; the pipeline keeps waiting (a slow row is not an error, and a worker
    that died is reported at once).

    Examples:
        >>> import minddata as md
        >>> md.config.set_multiprocessing_timeout_interval(30)
        >>> md.config.get_multiprocessing_timeout_interval()
        30
        >>> md.config.load_defaults()
    """
    interval = _non_negative_int("set_multiprocessing_timeout_interval", interval)
    if interval == 0:
        raise ValueError("config.set_multiprocessing_timeout_interval: the interval must be greater than 0 s. Found: 0")
    _state["multiprocessing_timeout_interval"] = interval


def get_multiprocessing_timeout_interval() -> int:
    return int(_state["multiprocessing_timeout_interval"])  # type: ignore[call-overload]


def set_enable_watchdog(enable: bool) -> None:
    """Whether worker processes (``python_multiprocessing=True``) watch the process that started
    them (True, the default, as MindSpore's watchdog).

    On, a worker checks every second that its parent lives and exits when it does not, even in the
    middle of the map's function: a script killed with SIGKILL (or by the OOM killer) leaves no
    worker behind. Off, a worker whose parent died finishes the row it is on, then exits when it
    finds its pipe closed; a function that never returns keeps its worker alive until it is killed.
    Workers of a live pipeline are stopped by the pipeline either way.

    Examples:
        >>> import minddata as md
        >>> md.config.set_enable_watchdog(False)
        >>> md.config.get_enable_watchdog()
        False
        >>> md.config.load_defaults()
    """
    _state["enable_watchdog"] = _bool("set_enable_watchdog", enable)


def get_enable_watchdog() -> bool:
    return bool(_state["enable_watchdog"])


def set_auto_offload(offload: bool) -> None:
    """Let the placement pass move ops to an accelerator (False by default, as MindSpore).

    On, every op whose device nobody chose (neither ``op.device(...)`` nor ``map(device=...)``) is
    placed as if ``device="auto"``: on the GPU or the media engine where this machine has one and the
    cost estimate favours it, else on the CPU. ``Dataset.explain()`` lists the decision and its
    reason per map. Placed ops give the same rows within each device's stated tolerance.

    Examples:
        >>> import minddata as md
        >>> md.config.set_auto_offload(True)
        >>> md.config.get_auto_offload()
        True
        >>> md.config.load_defaults()
    """
    _state["auto_offload"] = _bool("set_auto_offload", offload)


def get_auto_offload() -> bool:
    return bool(_state["auto_offload"])


def set_sending_batches(batch_num: int) -> None:
    """The most batches per pass that training in sink mode (``Model.train(...,
    dataset_sink_mode=True)``) sends to the step (default 0: no limit), as MindSpore.

    When that many were sent in a pass, the next batch is held until the limit is raised by calling
    this again, e.g. from a callback's ``on_train_step_end``: a way to keep the data from running
    ahead of the training loop. The limit is taken when training starts and read again whenever it is
    reached. Without a sink thread (the CPU, where batches are staged in the training thread) nothing
    could raise it while the batch waits, so a reached limit is an error that says so.

    Examples:
        >>> import minddata as md
        >>> md.config.set_sending_batches(10)
        >>> md.config.get_sending_batches()
        10
        >>> md.config.load_defaults()
    """
    _state["sending_batches"] = _non_negative_int("set_sending_batches", batch_num)


def get_sending_batches() -> int:
    return int(_state["sending_batches"])  # type: ignore[call-overload]


def set_dynamic_shape(is_dynamic: bool) -> None:
    """Whether training in sink mode accepts batches whose shapes vary (default False, as MindSpore's
    sink, which compiles the step for one shape).

    False: every batch must have the first batch's shapes (a remainder batch of
    ``batch(drop_remainder=False)`` may be shorter in its first dimension), and a batch that differs
    stops training with an error naming the column and both shapes. True: any shapes.

    Examples:
        >>> import minddata as md
        >>> md.config.set_dynamic_shape(True)
        >>> md.config.get_dynamic_shape()
        True
        >>> md.config.load_defaults()
    """
    _state["dynamic_shape"] = _bool("set_dynamic_shape", is_dynamic)


def get_dynamic_shape() -> bool:
    return bool(_state["dynamic_shape"])


def set_debug_mode(debug_mode_flag: bool, debug_hook_list: list | None = None) -> None:
    """Run pipelines iterated afterwards in debug mode (off by default), as MindSpore.

    In debug mode every map, batch and source runs with one worker, in this process
    (``num_parallel_workers`` and ``python_multiprocessing`` are ignored), so a breakpoint or a print
    in a map's function works; each map calls the hooks of ``debug_hook_list``
    (:class:`minddata.dataset.debug.DebugHook` objects) on the values going into its first transform
    and coming out of each transform. Without a list, :class:`~minddata.dataset.debug.PrintMetaDataHook`
    prints their types and shapes. As in MindSpore, debug mode also uses seed 1 when no seed was set,
    raises on a bad row (``error_samples_mode`` is ignored), and turns off autotune and auto offload.
    The rows are those of a run without debug mode (with the same seed).

    Examples:
        >>> import minddata as md
        >>> from minddata.dataset import debug
        >>> md.config.set_debug_mode(True, debug_hook_list=[debug.PrintDataHook()])
        >>> md.config.get_debug_mode()
        True
        >>> md.config.load_defaults()
    """
    if not isinstance(debug_mode_flag, (bool, np.bool_)):
        raise TypeError(f"config.set_debug_mode: debug_mode_flag must be a bool. Found: {debug_mode_flag!r}")
    hooks: tuple | None = None  # the map's default: PrintMetaDataHook
    if debug_hook_list is not None:
        if not isinstance(debug_hook_list, list):
            raise TypeError(f"config.set_debug_mode: debug_hook_list must be a list of DebugHook. "
                            f"Found: {type(debug_hook_list).__name__}")
        # By name: these settings sit below the hooks' module and may not import it.
        wrong = [h for h in debug_hook_list if not any(
            c.__name__ == "DebugHook" and c.__module__ == "minddata.engine.debughooks" for c in type(h).__mro__)]
        if wrong:
            raise TypeError(f"config.set_debug_mode: every item of debug_hook_list must be a DebugHook "
                            f"(minddata.dataset.debug). Found: {wrong[0]!r}")
        hooks = tuple(debug_hook_list)
    _state.update(debug_mode=bool(debug_mode_flag), debug_hooks=hooks)


def get_debug_mode() -> bool:
    """Whether debug mode is on (:func:`set_debug_mode`)."""
    return bool(_state["debug_mode"])


# MindSpore's configuration file keys (its config.load format) -> the setter that takes the value.
_FILE_KEYS = {
    "seed": "set_seed",
    "numParallelWorkers": "set_num_parallel_workers",
    "opConnectorSize": "set_prefetch_size",
    "monitorSamplingInterval": "set_monitor_sampling_interval",
    "callbackTimeout": "set_callback_timeout",
    "autoNumWorkers": "set_auto_num_workers",
    "enableAutotune": "set_enable_autotune",
    "autotuneInterval": "set_autotune_interval",
    "numaEnable": "set_numa_enable",
    "fastRecovery": "set_fast_recovery",
    "sendingBatches": "set_sending_batches",
}
# Keys of MindSpore's file that configure its C++ runtime, which minddata does not have.
_FILE_KEYS_WITHOUT_EFFECT = frozenset({"logFilePath", "rowsPerBuffer", "workerConnectorSize", "serverPort",
                                       "cachePort", "cacheHost"})


def load(file: str | os.PathLike) -> None:
    """Set the options listed in a MindSpore configuration file (JSON), e.g.
    ``{"numParallelWorkers": 4, "seed": 5489, "opConnectorSize": 16, "monitorSamplingInterval": 15}``.

    Keys for MindSpore's C++ runtime (``logFilePath``, ``rowsPerBuffer``, ``workerConnectorSize``, ...)
    are accepted and ignored; any other key is an error naming it. Nothing is set unless the whole
    file is valid.

    Examples:
        >>> import json, os, tempfile
        >>> import minddata as md
        >>> path = os.path.join(tempfile.mkdtemp(), "config.json")
        >>> with open(path, "w") as f:
        ...     json.dump({"numParallelWorkers": 3, "seed": 7}, f)
        >>> md.config.load(path)
        >>> md.config.get_num_parallel_workers(), md.config.get_seed()
        (3, 7)
        >>> md.config.load_defaults()
    """
    import json

    path = os.fspath(file)
    try:
        with open(path, encoding="utf-8") as f:
            settings = json.load(f)
    except OSError as error:
        raise ValueError(f"config.load: can't read {path}: {error.strerror or error}") from None
    except ValueError as error:
        raise ValueError(f"config.load: {path} is not valid JSON ({error})") from None
    if not isinstance(settings, dict):
        raise ValueError(f"config.load: {path} must hold a JSON object of settings. Found: {type(settings).__name__}")
    unknown = sorted(k for k in settings if k not in _FILE_KEYS and k not in _FILE_KEYS_WITHOUT_EFFECT)
    if unknown:
        raise ValueError(f"config.load: {path} has unknown keys {unknown}; known keys: {sorted(_FILE_KEYS)}")
    with _lock:
        saved = dict(_state)
    try:
        for key, value in settings.items():
            if key in _FILE_KEYS:
                globals()[_FILE_KEYS[key]](value)
    except (TypeError, ValueError) as error:
        with _lock:
            _state.clear()
            _state.update(saved)
        raise ValueError(f"config.load: {path}: {error}") from None
