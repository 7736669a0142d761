"""Global pipeline settings, named as in ``mindspore.dataset.config``.

Settings are read when an iterator is created, so changing them affects pipelines iterated afterwards:
the iterator takes one frozen :class:`RunOptions` snapshot (:func:`snapshot`) and hands it, through
its runtime and every kernel's context, to worker threads and worker processes alike. Kernels read
``ctx.options``, never these globals, so a setting has the same effect in every kind of worker. Inside
a running pipeline (its worker threads and processes, and the Python functions they call) the getters
and :func:`snapshot` answer from that run's snapshot.

Each setting is declared once, as a field of :class:`RunOptions` (its name, type, default, check and
doc); the getters and setters, :func:`load_defaults` and the snapshot come from that declaration.
Setters with more to do than store a value (``set_seed`` also seeds NumPy, ``set_autotune`` takes
budgets, ``set_iterator_mode`` sets two fields, ...) are written out, and store through it too.

Examples:
    >>> import minddata as md
    >>> md.config.set_seed(1)
    >>> md.config.get_seed()
    1
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import enum
import inspect
import multiprocessing
import os
import random
import threading
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from minddata.errors import warn

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


# ---------------------------------------------------------------------------------------------- checks
# Each takes ``where`` (the setter, as errors name it: "set_prefetch_size") and the value, and returns
# the value to store or raises TypeError/ValueError naming ``config.<where>`` and the value.


def _positive_int(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"config.{name}: the value must be an int. Found: {value!r} ({type(value).__name__})")
    if value <= 0:
        raise ValueError(f"config.{name}: the value must be greater than 0. Found: {value}")
    return int(value)


def _non_negative_int(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"config.{name}: the value must be an int. Found: {value!r} ({type(value).__name__})")
    if not 0 <= value <= 2**31 - 1:
        raise ValueError(f"config.{name}: the value must be in [0, 2147483647]. Found: {value}")
    return int(value)


def _bool(name: str, value: object) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"config.{name}: the value must be a bool. Found: {value!r} ({type(value).__name__})")
    return bool(value)


def _choice(name: str, value: object, choices: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value.lower() not in choices:
        raise ValueError(f"config.{name}: the value must be one of {choices}. Found: {value!r}")
    return value.lower()


def _switch(param: str) -> Callable[[str, object], bool]:
    """A plain bool named ``param`` in the error (NumPy bools are refused, as they always were)."""

    def check(where: str, value: object) -> bool:
        if not isinstance(value, bool):
            raise TypeError(f"config.{where}: {param} must be a bool. Found: {value!r}")
        return value

    return check


def _one_of(choices: tuple[str, ...]) -> Callable[[str, object], str]:
    return lambda where, value: _choice(where, value, choices)


def _interval(unit: str) -> Callable[[str, object], int]:
    def check(where: str, value: object) -> int:
        interval = _non_negative_int(where, value)
        if interval == 0:
            raise ValueError(f"config.{where}: the interval must be greater than 0 {unit}. Found: 0")
        return interval

    return check


def _check_seed(where: str, seed: object) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2**32:
        raise ValueError(f"config.{where}: seed must be an int in [0, 2**32). Found: {seed!r}")
    return int(seed)


def _check_error_mode(where: str, mode: object) -> ErrorSamplesMode:
    try:
        return ErrorSamplesMode(getattr(mode, "value", mode))
    except ValueError:
        raise ValueError(
            f"config.{where}: mode must be one of 'raise', 'skip', 'replace'. Found: {mode!r}"
        ) from None


_FRAMEWORKS = ("numpy", "torch", "jax", "cupy")


def _check_framework(where: str, name: object) -> str:
    if name not in _FRAMEWORKS:
        raise ValueError(f"config.{where}: name must be one of {_FRAMEWORKS}. Found: {name!r}")
    return str(name)


def _check_pixels(where: str, n: object) -> int | None:
    return None if n is None else _positive_int(where, n)


_FALLBACKS = ("error", "cpu")
_DVPP_DRIVERS = ("auto", "nvjpg", "ascend", "reference")
_DVPP_POLICIES = ("error", "cpu")
_GPU_DRIVERS = ("auto", "dali", "torch")
_VIDEO_BACKENDS = ("CPU", "Ascend")


def _check_device_id(where: str, device_id: object) -> int | None:
    if device_id is None:
        return None
    if isinstance(device_id, bool) or not isinstance(device_id, (int, np.integer)) or device_id < 0:
        raise ValueError(f"config.{where}: `device_id` must be None or an int >= 0. Found: {device_id!r}")
    return int(device_id)


def _check_cpu_budget(where: str, cpu_budget: object) -> float | None:
    if cpu_budget is None:
        return None
    if isinstance(cpu_budget, bool) or not isinstance(cpu_budget, (int, float, np.integer, np.floating)) \
            or not cpu_budget > 0:
        raise ValueError(f"config.{where}: cpu_budget must be a number of cores > 0. Found: {cpu_budget!r}")
    return float(cpu_budget)


def _check_memory_budget(where: str, memory_budget: object) -> int | None:
    return None if memory_budget is None else _positive_int(f"{where}: memory_budget", memory_budget)


def _check_start_method(where: str, method: object) -> str:
    method = _choice(where, method, _START_METHODS)
    if method not in multiprocessing.get_all_start_methods():
        raise ValueError(
            f"config.{where}: {method!r} is not available on this platform; "
            f"available: {multiprocessing.get_all_start_methods()}"
        )
    return method


def _check_prefix(where: str, filepath_prefix: object) -> str | None:
    if filepath_prefix is None:
        return None
    if not isinstance(filepath_prefix, (str, os.PathLike)) or not str(filepath_prefix):
        raise TypeError(f"config.{where}: filepath_prefix must be a non-empty path. Found: {filepath_prefix!r}")
    folder = os.path.dirname(os.path.abspath(str(filepath_prefix)))
    if not os.path.isdir(folder):
        raise ValueError(f"config.{where}: the folder of filepath_prefix does not exist: {folder}. "
                         "Create it first.")
    return str(filepath_prefix)


def _check_video_backend(where: str, backend: object) -> str:
    if backend not in _VIDEO_BACKENDS:
        raise ValueError(f"config.{where}: backend must be one of {list(_VIDEO_BACKENDS)}. Found: {backend!r}")
    return str(backend)


def _check_hooks(where: str, debug_hook_list: object) -> tuple | None:
    if debug_hook_list is None:
        return None  # the map's default: PrintMetaDataHook
    if not isinstance(debug_hook_list, list):
        raise TypeError(f"config.{where}: debug_hook_list must be a list of DebugHook. "
                        f"Found: {type(debug_hook_list).__name__}")
    # By name: these settings sit below the hooks' module and may not import it.
    wrong = [h for h in debug_hook_list if not any(
        c.__name__ == "DebugHook" and c.__module__ == "minddata.engine.debughooks" for c in type(h).__mro__)]
    if wrong:
        raise TypeError(f"config.{where}: every item of debug_hook_list must be a DebugHook "
                        f"(minddata.dataset.debug). Found: {wrong[0]!r}")
    return tuple(debug_hook_list)


def _check_debug_flag(where: str, flag: object) -> bool:
    if not isinstance(flag, (bool, np.bool_)):
        raise TypeError(f"config.{where}: debug_mode_flag must be a bool. Found: {flag!r}")
    return bool(flag)


def _named(param: str, check: Callable[[str, object], Any]) -> Callable[[str, object], Any]:
    """``check`` naming ``param`` after the setter, as ``set_iterator_mode: do_copy``."""
    return lambda where, value: check(f"{where}: {param}", value)


# ---------------------------------------------------------------------------------------------- declaration


_GENERATED = ""  # a setter or getter name left at this: "set_<name>" / "get_<name>"


@dataclasses.dataclass(frozen=True)
class Setting:
    """One setting, declared once as a :class:`RunOptions` field (see :data:`SETTINGS`).

    ``name``, ``type`` and the default (``default``, or ``default_factory`` for one computed when
    :func:`load_defaults` runs) are the field's; ``check(where, value)`` returns the value to store or
    raises an error naming ``config.<where>``; ``doc``'s first line says what the setting does, and
    the rest (when the setter is generated) is that setter's documentation. ``setter``: the public
    function that sets it, generated with the parameter ``param`` (MindSpore's name) typed
    ``param_type``, unless ``by_hand`` (then it is written out below and stores through
    :func:`_update`, which runs ``check``). ``getter``: the generated getter (``None``: none, or one
    written out by hand).
    """

    check: Callable[[str, Any], Any]
    doc: str
    setter: str = _GENERATED
    by_hand: bool = False
    param: str = "value"
    param_type: str | None = None
    getter: str | None = _GENERATED
    getter_doc: str | None = None
    name: str = ""
    type: str = ""
    default: Any = None
    default_factory: Callable[[], Any] | None = None

    @property
    def summary(self) -> str:
        """The doc's first sentence, on one line."""
        first = inspect.cleandoc(self.doc).split("\n\n")[0].replace("\n", " ")
        end = first.find(". ")
        return first if end < 0 else first[: end + 1]

    def initial(self) -> Any:
        """The default value, computed now for a default factory."""
        return self.default_factory() if self.default_factory is not None else self.default


def setting(default: Any = dataclasses.MISSING, *, factory: Callable[[], Any] | None = None, **declared: Any) -> Any:
    """A :class:`RunOptions` field declaring one setting: ``default`` (or ``factory``) and the rest of
    :class:`Setting`'s fields but its name and type, which are the field's."""
    meta = {"setting": Setting(**declared)}
    if factory is not None:
        return dataclasses.field(default_factory=factory, metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


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

    seed: int | None = setting(
        None, check=_check_seed, setter="set_seed", by_hand=True, getter=None,
        doc="The seed of every random choice (set_seed); None when none was set (get_seed then gives 5489).")
    num_parallel_workers: int = setting(
        factory=_default_workers, check=_positive_int, by_hand=True,
        doc="Default worker count of maps and sources that are not given one, taken when they are created.")
    prefetch_size: int = setting(
        16, check=_positive_int, param="size", param_type="int",
        doc="""Rows buffered ahead of the consumer by each pipeline stage (MindSpore's connector queue size).""")
    error_samples_mode: ErrorSamplesMode = setting(
        ErrorSamplesMode.RAISE, check=_check_error_mode, param="mode", param_type="str | ErrorSamplesMode",
        doc="""How a map treats a row whose op raises: ``"raise"`` (default), ``"skip"`` or ``"replace"``.""")
    elastic_equal_shares: bool = setting(
        False, check=_switch("enable"), param="enable", param_type="bool",
        doc="""How a run resumed on another number of ranks (``state=[...]``, the states of every rank)
        deals the rows its epoch has left.

        Off (default): each remaining sample once; the new ranks' shares differ by at most one row, so
        a rank may take one step fewer in the resumed epoch. On: equal shares, the short ranks reading
        the first remaining samples again (at most ``M - 1`` duplicates, as an ordinary sharded epoch
        pads), so that every rank takes the same number of steps, as data-parallel training in lockstep
        needs. ``Model.train`` under ``torch.distributed`` switches it on for its own iterator. Epochs
        after the resumed one are dealt as ever.

        Examples:
            >>> import minddata as md
            >>> md.config.set_elastic_equal_shares(True)
            >>> md.config.get_elastic_equal_shares()
            True
            >>> md.config.load_defaults()
        """)
    enable_fusion: bool = setting(
        True, check=_switch("enable"), param="enable", param_type="bool",
        doc="""Switch the graph optimizer's op fusion on (default) or off.""")
    fast_decode_resize: bool = setting(
        False, check=_switch("enable"), param="enable", param_type="bool",
        doc="""Let fusion decode JPEGs at a reduced DCT scale (1/2, 1/4, 1/8) before a deterministic
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
        """)
    rows_per_chunk: int = setting(
        32, check=_positive_int, param="rows", param_type="int",
        doc="""Rows moved together between stages. Larger chunks cost less per row and add latency.""")
    worker_shm_size: int = setting(
        16 << 20, check=_positive_int, param="nbytes", param_type="int",
        doc="""Initial shared-memory arena per worker process, in bytes; arenas grow when a chunk needs more.""")
    framework: str = setting(
        "numpy", check=_check_framework, param="name", param_type="str",
        doc="""Tensor type returned by iterators created with ``output_numpy=False``: ``"numpy"`` (default),
        ``"torch"``, ``"jax"`` or ``"cupy"``. Rows made on the GPU reach torch and CuPy (and JAX, through
        CuPy and DLPack) without leaving the GPU; host rows are handed over without a copy where the
        framework allows (torch, JAX on the CPU) and copied to the device otherwise.""")
    max_image_pixels: int | None = setting(
        DEFAULT_MAX_IMAGE_PIXELS, check=_check_pixels, param="n", param_type="int | None",
        getter_doc="""The limit set by :func:`set_max_image_pixels` (``None``: no limit).""",
        doc="""Largest image (width x height, read from its header) that ``vision.Decode`` will decode.

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
        """)
    # --- devices (DESIGN.md §5)
    device_fallback: str = setting(
        "error", check=_one_of(_FALLBACKS), param="mode", param_type="str",
        doc="""What a pipeline does when an op is placed on a device this machine lacks.

        ``"error"`` (default): creating the iterator raises :class:`~minddata.errors.DeviceError` naming
        the op, the device, what is missing and the fix. ``"cpu"``: the op runs on the CPU instead, with
        one warning per iterator in the ``minddata`` log.

        Examples:
            >>> import minddata as md
            >>> md.config.set_device_fallback("cpu")
            >>> md.config.get_device_fallback()
            'cpu'
            >>> md.config.load_defaults()
        """)
    dvpp_driver: str = setting(
        "auto", check=_one_of(_DVPP_DRIVERS), param="name", param_type="str",
        doc="""Which driver runs ops placed on ``"Dvpp"``.

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
        """)
    dvpp_policy: str = setting(
        "error", check=_one_of(_DVPP_POLICIES), param="policy", param_type="str",
        doc="""What a Dvpp op does with a row its engine can't take (a PNG for Decode, an image outside the
        size limits): ``"error"`` (default) fails the row, naming the row and the rule (then
        ``set_error_samples_mode`` applies); ``"cpu"`` runs that row alone on the CPU kernel and counts it
        (``iterator.device_stats.cpu_rows``).""")
    gpu_emulation: bool = setting(
        False, check=_switch("enable"), param="enable", param_type="bool",
        doc="""Run ops placed on ``"GPU"`` through DALI's CPU backend (``device_id=None``) when no GPU is
        visible: the same translated DALI pipeline, on the CPU. For testing the translation and previewing
        output on machines without a GPU (CI); never faster than the CPU kernels, and placement
        (``device="auto"``) never chooses it.""")
    gpu_device_id: int | None = setting(
        None, check=_check_device_id, param="device_id", param_type="int | None",
        getter_doc="""The device set by :func:`set_gpu_device_id`, or None (follow the framework).""",
        doc="""The CUDA device GPU and Dvpp (nvjpg) ops run on. ``None`` (the default) follows the training
        framework: torch's current CUDA device when torch has initialized CUDA in this process, else
        ``$LOCAL_RANK`` (set by torchrun for each data-parallel rank), else device 0.

        Examples:
            >>> import minddata as md
            >>> md.config.set_gpu_device_id(1)
            >>> md.config.get_gpu_device_id()
            1
            >>> md.config.load_defaults()
        """)
    gpu_driver: str = setting(
        "auto", check=_one_of(_GPU_DRIVERS), param="driver", param_type="str",
        doc="""What runs ops placed on ``"GPU"``: ``"dali"`` (NVIDIA DALI pipelines), ``"torch"`` (PyTorch CUDA
        tensors), or ``"auto"`` (the default: DALI where it is installed, else torch). Both drivers run the
        same per-row plans, so a seeded pipeline gives the same crops and flips on either and on the CPU.

        Examples:
            >>> import minddata as md
            >>> md.config.set_gpu_driver("torch")
            >>> md.config.get_gpu_driver()
            'torch'
            >>> md.config.load_defaults()
        """)
    # --- profiling and autotune
    profiling: bool = setting(
        False, check=_switch("enable"), param="enable", param_type="bool",
        doc="""Profile every iterator started afterwards, as if each ran inside a ``minddata.Profiler``.

        Each iterator's profile is then ``iterator.profiler`` (a :class:`minddata.Profiler`).

        Examples:
            >>> import minddata as md
            >>> md.config.set_profiling(True)
            >>> it = md.NumpySlicesDataset({"x": [1, 2, 3]}).create_dict_iterator(num_epochs=1)
            >>> rows = list(it)
            >>> it.profiler.summary().rows
            3
            >>> md.config.load_defaults()
        """)
    autotune: bool = setting(
        False, check=_bool, setter="set_autotune", by_hand=True,
        doc="Autotune every parallel stage of pipelines started afterwards (set_autotune, set_enable_autotune).")
    autotune_cpu_budget: float | None = setting(
        None, check=_check_cpu_budget, setter="set_autotune", by_hand=True, getter=None,
        doc="Cores autotune may keep busy (set_autotune's cpu_budget); None: the cores this process may use.")
    autotune_memory_budget: int | None = setting(
        None, check=_check_memory_budget, setter="set_autotune", by_hand=True, getter=None,
        doc="Bytes the chunks in stage queues may take under autotune (set_autotune); None: a quarter of RAM.")
    multiprocessing_start_method: str = setting(
        factory=_default_start_method, check=_check_start_method, param="method", param_type="str",
        getter_doc="""The start method of worker processes (see :func:`set_multiprocessing_start_method`).""",
        doc="""How worker processes (``python_multiprocessing=True``) start: ``"fork"`` (default on Linux),
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
        """)
    autotune_interval: int = setting(
        0, check=_non_negative_int, param="interval", param_type="int",
        doc="""How often autotune looks and adjusts, in steps (batches the consumer takes), as in MindSpore.

        ``0`` (the default) means continuously: a look every 0.15 s of wall time, so that a change shows
        within a second. (MindSpore's 0 means once per epoch; minddata's trial-and-keep tuning needs
        several looks per epoch to settle.)

        Examples:
            >>> import minddata as md
            >>> md.config.set_autotune_interval(20)
            >>> md.config.get_autotune_interval()
            20
            >>> md.config.load_defaults()
        """)
    autotune_save_prefix: str | None = setting(
        None, check=_check_prefix, setter="set_enable_autotune", by_hand=True, getter=None,
        doc="Where an autotuned run writes what it settled on (set_enable_autotune's filepath_prefix).")
    auto_num_workers: bool = setting(
        False, check=_bool, param="enable", param_type="bool",
        doc="""Let the engine choose the worker count of every map (MindSpore's ``auto_num_workers``).

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
        """)
    monitor_sampling_interval: int = setting(
        10, check=_interval("ms"), param="interval", param_type="int",
        doc="""Milliseconds between the profiler's samples of queue use and worker states.

        The default is 10 ms (MindSpore samples every 1,000 ms; queue use between short stages needs
        finer samples). A ``minddata.Profiler`` given its own ``sample_interval`` uses that instead.

        Examples:
            >>> import minddata as md
            >>> md.config.set_monitor_sampling_interval(50)
            >>> md.config.get_monitor_sampling_interval()
            50
            >>> md.config.load_defaults()
        """)
    # --- MindSpore's remaining settings
    callback_timeout: int = setting(
        60, check=_positive_int, param="timeout", param_type="int",
        doc="""Seconds a ``WaitedDSCallback`` waits for the training loop to end a step or an epoch before
        it raises (default 60, as MindSpore).

        Examples:
            >>> import minddata as md
            >>> md.config.set_callback_timeout(5)
            >>> md.config.get_callback_timeout()
            5
            >>> md.config.load_defaults()
        """)
    iterator_copy: bool = setting(
        False, check=_named("do_copy", _bool), setter="set_iterator_mode", by_hand=True, getter=None,
        doc="Iterators copy each array into a tensor of its own (set_iterator_mode's do_copy).")
    iterator_parallel_convert: bool = setting(
        True, check=_named("parallel_convert", _bool), setter="set_iterator_mode", by_hand=True, getter=None,
        doc="Iterators build rows on the prefetch thread, not the caller's (set_iterator_mode's parallel_convert).")
    fast_recovery: bool = setting(
        True, check=_bool, param="fast_recovery", param_type="bool",
        doc="""MindSpore's choice between a fast resume (skip re-running random ops) and an exact one.

        minddata's resume is both: it restores each source's position and each random op's per-row RNG
        directly, without replaying rows, so the resumed rows equal an uninterrupted run's. The setting
        is kept (and read back) so that MindSpore scripts run unchanged; it does not change resume.

        Examples:
            >>> import minddata as md
            >>> md.config.set_fast_recovery(False)
            >>> md.config.get_fast_recovery()
            False
            >>> md.config.load_defaults()
        """)
    numa_enable: bool = setting(
        False, check=_bool, param="numa_enable", param_type="bool",
        doc="""MindSpore's NUMA binding switch. minddata leaves thread and process placement to the operating
        system's scheduler; the setting is kept and read back so that MindSpore scripts run unchanged.

        Examples:
            >>> import minddata as md
            >>> md.config.set_numa_enable(True)
            >>> md.config.get_numa_enable()
            True
            >>> md.config.load_defaults()
        """)
    video_backend: str = setting(
        "CPU", check=_check_video_backend, param="backend", param_type="str",
        doc="""The device that decodes video (``"CPU"``, the default, or ``"Ascend"``), as in MindSpore.

        Examples:
            >>> import minddata as md
            >>> md.config.get_video_backend()
            'CPU'
        """)
    enable_shared_mem: bool = setting(
        True, check=_bool, param="enable", param_type="bool",
        doc="""Whether process workers (``python_multiprocessing=True``) pass arrays through shared memory
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
        """)
    multiprocessing_timeout_interval: int = setting(
        300, check=_interval("s"), param="interval", param_type="int",
        doc="""Seconds between the warnings logged while a process worker (``python_multiprocessing=True``)
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
        """)
    enable_watchdog: bool = setting(
        True, check=_bool, param="enable", param_type="bool",
        doc="""Whether worker processes (``python_multiprocessing=True``) watch the process that started
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
        """)
    auto_offload: bool = setting(
        False, check=_bool, param="offload", param_type="bool",
        doc="""Let the placement pass move ops to an accelerator (False by default, as MindSpore).

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
        """)
    sending_batches: int = setting(
        0, check=_non_negative_int, param="batch_num", param_type="int",
        doc="""The most batches per pass that training in sink mode (``Model.train(...,
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
        """)
    dynamic_shape: bool = setting(
        False, check=_bool, param="is_dynamic", param_type="bool",
        doc="""Whether training in sink mode accepts batches whose shapes vary (default False, as MindSpore's
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
        """)
    debug_mode: bool = setting(
        False, check=_check_debug_flag, setter="set_debug_mode", by_hand=True,
        getter_doc="""Whether debug mode is on (:func:`set_debug_mode`).""",
        doc="Run every map, batch and source with one worker in this process (set_debug_mode).")
    debug_hooks: tuple | None = setting(
        None, check=_check_hooks, setter="set_debug_mode", by_hand=True, getter=None,
        doc="The DebugHooks every map calls in debug mode (set_debug_mode); None: PrintMetaDataHook.")
    # --- object storage (minddata/dataset/_storage.py)
    storage_requests_in_flight: int = setting(
        8, check=_positive_int, param="n", param_type="int",
        doc="""Object-storage requests each worker keeps in flight when it reads a chunk of rows from
        ``s3://``, ``gs://`` or ``http(s)://`` sources (default 8).

        A source's own ``storage_options={"requests_in_flight": n}`` wins over it. Sources read inside
        the pipeline, so the value is the iterator's (taken when it is created, like every setting);
        reads made while a pipeline is built (listing a bucket, reading an index) take the value set at
        that time. It also sizes a process's connection pool when its client is first made.

        Examples:
            >>> import minddata as md
            >>> md.config.set_storage_requests_in_flight(32)
            >>> md.config.get_storage_requests_in_flight()
            32
            >>> md.config.load_defaults()
        """)


def _declared() -> tuple[Setting, ...]:
    found = []
    for f in dataclasses.fields(RunOptions):
        declared: Setting = f.metadata["setting"]
        factory = None if f.default_factory is dataclasses.MISSING else f.default_factory
        found.append(dataclasses.replace(
            declared, name=f.name, type=str(f.type), default=None if factory else f.default, default_factory=factory,
            setter=f"set_{f.name}" if declared.setter == _GENERATED else declared.setter,
            getter=f"get_{f.name}" if declared.getter == _GENERATED else declared.getter,
        ))
    return tuple(found)


#: Every setting, in :class:`RunOptions`' field order.
SETTINGS: tuple[Setting, ...] = _declared()
_BY_NAME = {s.name: s for s in SETTINGS}


# ---------------------------------------------------------------------------------------------- state

_state: dict[str, object] = {}
# The settings of the pipeline run this thread works for (see ``running``): what the getters answer.
_run_options: contextvars.ContextVar[RunOptions | None] = contextvars.ContextVar("minddata_run_options", default=None)


def load_defaults() -> None:
    """Restore every setting to its default."""
    with _lock:
        _state.clear()
        _state.update({s.name: s.initial() for s in SETTINGS})


load_defaults()
_warned_workers = False


def snapshot() -> RunOptions:
    """The current settings as one immutable :class:`RunOptions` (inside a running pipeline: its own)."""
    run = _run_options.get()
    if run is not None:
        return run
    with _lock:
        return RunOptions(**_state)  # type: ignore[arg-type]  # _state holds each field's checked value by name


@contextlib.contextmanager
def running(options: RunOptions) -> Iterator[RunOptions]:
    """Within the block, in this thread, the getters and :func:`snapshot` answer from ``options``: the
    engine runs each pipeline thread and worker process in its run's snapshot, so Python functions in a
    pipeline (a map's function, a generator, a source's reads) see the settings the iterator was
    created with, in threads and processes alike. A worker given a snapshot shipped from elsewhere
    (a Ray task) runs in it the same way.

    Examples:
        >>> import minddata as md
        >>> options = md.config.snapshot()
        >>> md.config.set_prefetch_size(3)
        >>> with md.config.running(options):
        ...     md.config.get_prefetch_size()
        16
        >>> md.config.get_prefetch_size()
        3
        >>> md.config.load_defaults()
    """
    if not isinstance(options, RunOptions):
        raise TypeError(f"config.running: options must be a RunOptions, as config.snapshot() returns. "
                        f"Found: {type(options).__name__}")
    token = _run_options.set(options)
    try:
        yield options
    finally:
        _run_options.reset(token)


def _value(name: str) -> Any:
    run = _run_options.get()
    return _state[name] if run is None else getattr(run, name)


def _update(where: str, **values: Any) -> None:
    """Check each value with its setting's declared check (errors name ``config.<where>``), then store
    them together."""
    checked = {name: _BY_NAME[name].check(where, value) for name, value in values.items()}
    with _lock:
        _state.update(checked)


# ---------------------------------------------------------------------------------------------- generated
# The generic getter and setter of each setting that declares them: real functions with MindSpore's
# parameter names (so keyword calls work) and the declared docs, defined in this module.


def _define(source: str, name: str, doc: str | None, annotations: dict[str, str]) -> None:
    exec(source, globals())  # noqa: S102 - fixed templates over declared identifiers
    fn = globals()[name]
    fn.__doc__ = doc
    fn.__annotations__ = annotations


def _generate() -> list[str]:
    names = []
    for s in SETTINGS:
        if not s.by_hand:
            if not (s.name.isidentifier() and s.param.isidentifier() and s.setter.isidentifier()):
                raise AssertionError(f"config: setting {s.name!r} declares a name, param ({s.param!r}) or setter "
                                     f"({s.setter!r}) that is not a Python identifier")
            _define(f"def {s.setter}({s.param}):\n    _update({s.setter!r}, {s.name}={s.param})\n", s.setter,
                    inspect.cleandoc(s.doc), {s.param: s.param_type or s.type, "return": "None"})
            names.append(s.setter)
        if s.getter and s.getter not in globals():
            _define(f"def {s.getter}():\n    return _value({s.name!r})\n", s.getter,
                    s.getter_doc or f"The value set by :func:`{s.setter}`.",
                    {"return": s.type})
            names.append(s.getter)
    return names


# ---------------------------------------------------------------------------------------------- by hand


def set_seed(seed: int) -> None:
    """Seed every random choice of pipelines created afterwards (shuffles, samplers, random ops).

    With a seed set, output is bit-identical across runs and whatever the worker counts. Like
    MindSpore, this also seeds Python's ``random`` and NumPy's global generator.
    """
    _update("set_seed", seed=seed)
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
    seed = _value("seed")
    return DEFAULT_SEED if seed is None else int(seed)


def seed_is_set() -> bool:
    return _value("seed") is not None


def set_num_parallel_workers(num: int) -> None:
    """Default worker count of maps and sources that are not given one.

    Unlike MindSpore, a count above the number of cores is accepted (with one warning): threads that
    wait on I/O or release the GIL can usefully outnumber cores.
    """
    _update("set_num_parallel_workers", num_parallel_workers=num)
    warn_if_oversubscribed(int(num))


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
    _update("set_autotune", autotune=enable, autotune_cpu_budget=cpu_budget, autotune_memory_budget=memory_budget)


def get_autotune_budget() -> tuple[float | None, int | None]:
    """``(cpu_budget, memory_budget)`` as set by :func:`set_autotune`; ``None`` means the default."""
    return _value("autotune_cpu_budget"), _value("autotune_memory_budget")


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
    prefix = _BY_NAME["autotune_save_prefix"].check("set_enable_autotune", filepath_prefix)
    _update("set_enable_autotune", autotune=enable, autotune_save_prefix=prefix if enable else None)


def get_enable_autotune() -> bool:
    """Whether autotune tunes every pipeline (:func:`set_enable_autotune`, :func:`set_autotune`)."""
    return bool(_value("autotune"))


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
    _update("set_iterator_mode", iterator_copy=do_copy, iterator_parallel_convert=parallel_convert)


def get_iterator_mode() -> dict[str, bool]:
    return {"do_copy": bool(_value("iterator_copy")), "parallel_convert": bool(_value("iterator_parallel_convert"))}


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
    _update("set_debug_mode", debug_mode=debug_mode_flag, debug_hooks=debug_hook_list)


__all__ = [
    "ErrorSamplesMode",
    "RunOptions",
    "Setting",
    "SETTINGS",
    "snapshot",
    "running",
    "load_defaults",
    "set_seed",
    "get_seed",
    "seed_is_set",
    "set_num_parallel_workers",
    "set_autotune",
    "get_autotune_budget",
    "set_enable_autotune",
    "get_enable_autotune",
    "set_iterator_mode",
    "get_iterator_mode",
    "set_debug_mode",
    "load",
    *_generate(),
]


def __getattr__(name: str) -> Any:
    # Only for names the module lacks (the generated getters and setters are real attributes). It
    # tells type checkers, which read the source and so do not see the generated functions, that
    # other names exist: typed code reads a setting as ``config.snapshot().<field>``.
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _settings_table() -> str:
    rows = ["| setting | default | set with | what it does |", "|---|---|---|---|"]
    for s in SETTINGS:
        default = "computed" if s.default_factory is not None else f"``{s.default!r}``"
        setter = f"``{s.setter}``"
        rows.append(f"| ``{s.name}`` | {default} | {setter} | {s.summary.replace('|', '/')} |")
    return "\n".join(rows)


_intro, _examples = (__doc__ or "").split("Examples:", 1)
__doc__ = f"{_intro}The settings (:data:`SETTINGS`), in :class:`RunOptions`' order:\n\n{_settings_table()}\n\nExamples:{_examples}"


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
