"""Helpers shared by the test modules (import them as ``from testkit import ...``): real JPEG bytes,
a column of a dataset, this process's shared-memory segments, and every setting changed with what a
worker saw of them. Fixtures stay in conftest.py."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import os
import pickle
import socket
import threading

import numpy as np
from PIL import Image

from minddata.ops.base import Op as _Op


def make_jpeg(width: int, height: int, seed: int, quality: int = 90) -> bytes:
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width]
    base = np.stack([(x * 255 // max(width - 1, 1)), (y * 255 // max(height - 1, 1)), (x + y) % 256], axis=-1)
    noise = rng.integers(0, 40, size=(height, width, 3))
    pixels = np.clip(base + noise, 0, 255).astype(np.uint8)
    buf = io.BytesIO()
    Image.fromarray(pixels).save(buf, format="JPEG", quality=quality)
    return buf.getvalue()


def column(dataset, name=None, epochs=1):
    """All values of one column (the first by default) as Python scalars/lists, one epoch."""
    out = []
    it = dataset.create_dict_iterator(num_epochs=epochs, output_numpy=True)
    key = name or dataset.get_col_names()[0]
    for _ in range(epochs):
        out.extend(row[key].tolist() for row in it)
    return out


def shm_segments() -> set[str]:
    """Shared-memory segments this test process owns (``minddata_<our pid>_...``).

    Only our own: other processes on the machine (another test run, a pipeline in a container sharing
    /dev/shm) have segments of their own that no test here may count.
    """
    if not os.path.isdir("/dev/shm"):
        return set()
    own = f"minddata_{os.getpid()}_"
    return {n for n in os.listdir("/dev/shm") if n.startswith(own)}


@contextlib.contextmanager
def local_http_server(handler, tls=None):
    """A threaded HTTP/1.1 server of ``handler`` (a ``BaseHTTPRequestHandler`` class) on 127.0.0.1,
    stopped on leaving (``tls``: an ``ssl.SSLContext`` to serve HTTPS): its port."""
    import http.server

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now (for a server the test starts)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def gpu_required() -> bool:
    """``MINDDATA_REQUIRE_GPU`` set to anything but "" or "0" (bench/device_check.sh sets it): a GPU test
    that finds no GPU fails instead of skipping (the same rule as bench/require_gpu.py)."""
    return os.environ.get("MINDDATA_REQUIRE_GPU", "") not in ("", "0")


# -- settings: every one changed in the driver, and what a worker saw -------------------------------
# Used by tests/engine/test_settings_reach_workers.py (worker threads and processes) and by the Ray
# executor's tests (Ray workers): change every setting with every_setting_changed(), run a map of
# EchoOptions (a kernel reading its KernelContext) or of echo_config (a Python function reading
# md.config, as user code can), and check the rows with assert_sees_settings().


def every_setting_changed(folder, *, start_method: str = "spawn", debug_mode: bool = True) -> dict:
    """Set every setting of ``minddata.config`` to a valid value other than its default, through the
    public setters, and return ``{RunOptions field: the value set}`` (every field of ``RunOptions``).

    ``folder``: an existing folder, for ``set_enable_autotune``'s ``filepath_prefix``.
    ``start_method``: the process workers' start method (``"fork"`` is the Linux default; pass it to
    run forked workers). ``debug_mode``: debug mode runs every map in one thread of the driver, so a
    test of worker threads and processes passes False (its hooks are set either way).
    The test's ``load_defaults()`` (conftest's autouse fixture) restores the defaults afterwards.
    """
    import os

    import minddata as md
    from minddata.config import RunOptions
    from minddata.dataset.debug import PrintDataHook

    prefix = os.path.join(os.fspath(folder), "autotune")
    values = {
        "seed": 1234,
        "num_parallel_workers": 3,
        "prefetch_size": 7,
        "error_samples_mode": md.config.ErrorSamplesMode.SKIP,
        "enable_fusion": False,
        "elastic_equal_shares": True,
        "fast_decode_resize": True,
        "rows_per_chunk": 5,
        "worker_shm_size": 8 << 20,
        "framework": "torch",
        "max_image_pixels": 4321,
        "device_fallback": "cpu",
        "dvpp_driver": "reference",
        "dvpp_policy": "cpu",
        "gpu_emulation": True,
        "gpu_device_id": 1,
        "gpu_driver": "torch",
        "profiling": True,
        "autotune": True,
        "autotune_cpu_budget": 1.5,
        "autotune_memory_budget": 1 << 30,
        "multiprocessing_start_method": start_method,
        "autotune_interval": 12,
        "autotune_save_prefix": prefix,
        "auto_num_workers": True,
        "monitor_sampling_interval": 33,
        "callback_timeout": 9,
        "iterator_copy": True,
        "iterator_parallel_convert": False,
        "fast_recovery": False,
        "numa_enable": True,
        "video_backend": "Ascend",
        "enable_shared_mem": False,
        "multiprocessing_timeout_interval": 17,
        "enable_watchdog": False,
        "auto_offload": True,
        "sending_batches": 5,
        "dynamic_shape": True,
        "debug_mode": debug_mode,
        "debug_hooks": (PrintDataHook(),),
        "storage_requests_in_flight": 3,
    }
    fields = [f.name for f in dataclasses.fields(RunOptions)]
    missing = sorted(set(fields) - set(values))
    assert not missing, f"testkit.every_setting_changed: give the new setting(s) {missing} a non-default value here"
    c = md.config
    # The generated setters take the one value of their setting; those written out by hand, below,
    # take several or do more.
    for s in c.SETTINGS:
        if not s.by_hand:
            getattr(c, s.setter)(values[s.name])
    c.set_seed(values["seed"])
    c.set_num_parallel_workers(values["num_parallel_workers"])
    c.set_autotune(values["autotune"], values["autotune_cpu_budget"], values["autotune_memory_budget"])
    c.set_enable_autotune(values["autotune"], values["autotune_save_prefix"])
    c.set_iterator_mode(values["iterator_copy"], values["iterator_parallel_convert"])
    c.set_debug_mode(values["debug_mode"], list(values["debug_hooks"]))
    now = dataclasses.asdict(c.snapshot())
    unset = {k: (v, now[k]) for k, v in values.items() if now[k] != v}
    assert not unset, f"testkit.every_setting_changed: these setters did not set the value: {unset}"
    return {name: values[name] for name in fields}


def assert_sees_settings(seen, expected: dict, where: str = "the worker") -> None:
    """Every field of ``seen`` (a ``RunOptions``, or several: each is checked) equals ``expected``
    (``{field: value}``, as :func:`every_setting_changed` returns); the error names each field that
    differs, with both values. Debug hooks are compared by kind (a hook a run has called carries
    what it saw)."""
    from minddata.config import RunOptions

    def kinds(hooks):
        return None if hooks is None else [type(h) for h in hooks]

    expected = {**expected, "debug_hooks": kinds(expected["debug_hooks"])}
    for one in [seen] if isinstance(seen, RunOptions) else list(seen):
        assert isinstance(one, RunOptions), f"{where} reported {type(one).__name__}, not a RunOptions"
        got = {f.name: getattr(one, f.name) for f in dataclasses.fields(one)}
        got["debug_hooks"] = kinds(got["debug_hooks"])
        wrong = {k: f"set {expected[k]!r}, {where} saw {got[k]!r}" for k in expected if got[k] != expected[k]}
        assert not wrong, f"{where} did not see {len(wrong)} setting(s): {wrong}"
        assert set(got) == set(expected), f"fields not checked: {sorted(set(got) - set(expected))}"


def _echo_kernel(op, ctx, value):
    return np.frombuffer(pickle.dumps(ctx.options), np.uint8)


def _register_echo() -> None:
    from minddata.ops.registry import register_kernel

    register_kernel("EchoOptions", "CPU")(_echo_kernel)


def _new_echo():
    # How an EchoOptions arrives in a worker process (spawned, or a Ray worker): registering its kernel.
    _register_echo()
    return EchoOptions()


class EchoOptions(_Op):
    """Test op: its CPU kernel returns the ``RunOptions`` its ``KernelContext`` carries, pickled into a
    uint8 array (read it back with :func:`options_in`). Run it inside ``with echo_options():``, which
    registers the kernel in this process (the contract test checks every registered kernel, so it is
    not left registered); a worker process that unpickles the op registers it there."""

    def output_spec(self, *inputs):  # pragma: no cover - not used by these pipelines
        raise NotImplementedError

    def __reduce__(self):
        return (_new_echo, ())


@contextlib.contextmanager
def echo_options():
    """Register :class:`EchoOptions`' kernel for the block."""
    from minddata.ops import registry

    _register_echo()
    try:
        yield
    finally:
        registry._KERNELS.pop(("EchoOptions", "CPU"), None)


def echo_config(value):
    """A map's Python function reporting the settings as user code sees them (``md.config.snapshot()``,
    in whatever thread or process runs it), pickled into a uint8 array (:func:`options_in`)."""
    import minddata as md

    return np.frombuffer(pickle.dumps(md.config.snapshot()), np.uint8)


def options_in(array):
    """The ``RunOptions`` an :class:`EchoOptions` or :func:`echo_config` row holds."""
    return pickle.loads(np.asarray(array).tobytes())


# -- images and rows: encoded images from pixels, and a dataset's rows ---------------------------------


def random_pixels(height: int, width: int, seed: int) -> np.ndarray:
    """Uniform noise, ``(height, width, 3)`` uint8, the same for the same seed."""
    return np.random.default_rng(seed).integers(0, 256, (height, width, 3), dtype=np.uint8)


def png_bytes(pixels: np.ndarray) -> bytes:
    """``pixels`` (any array Pillow takes: uint8 HWC, grey, or bool for 1-bit) as a PNG file."""
    buf = io.BytesIO()
    Image.fromarray(pixels).save(buf, "PNG")
    return buf.getvalue()


def random_png(height: int, width: int, seed: int) -> bytes:
    """A PNG file of :func:`random_pixels`."""
    return png_bytes(random_pixels(height, width, seed))


def jpeg_bytes(pixels: np.ndarray, quality: int = 90, **options) -> bytes:
    """``pixels`` as a JPEG file written by Pillow (``options``: Pillow's, e.g. ``subsampling=0``)."""
    buf = io.BytesIO()
    Image.fromarray(pixels).save(buf, "JPEG", quality=quality, **options)
    return buf.getvalue()


def jpeg_array(pixels: np.ndarray, quality: int = 90, **options) -> np.ndarray:
    """:func:`jpeg_bytes` as a uint8 array, the form a Decode op takes in a column."""
    return np.frombuffer(jpeg_bytes(pixels, quality, **options), np.uint8)


def png_array(pixels: np.ndarray) -> np.ndarray:
    """:func:`png_bytes` as a uint8 array, the form a Decode op takes in a column."""
    return np.frombuffer(png_bytes(pixels), np.uint8)


def exact_rows(dataset, executor: str | None = None, epochs: int = 1) -> list[tuple]:
    """Every row of ``epochs`` epochs as tuples of (dtype, shape, bytes) per column: two results are
    equal only when every value is bit for bit the same (NaNs included), whichever ``executor`` ran it."""
    kwargs = {"executor": executor} if executor else {}
    it = dataset.create_tuple_iterator(num_epochs=epochs, output_numpy=True, **kwargs)
    return [tuple((a.dtype.str, a.shape, np.ascontiguousarray(a).tobytes()) for a in row)
            for _ in range(epochs) for row in it]


def dict_rows(dataset, epochs: int = 1) -> list[dict]:
    """Every row of ``epochs`` epochs as a dict of NumPy values."""
    it = dataset.create_dict_iterator(num_epochs=epochs, output_numpy=True)
    return [row for _ in range(epochs) for row in it]


def tuple_rows(dataset) -> list[tuple]:
    """Every row of one epoch as a tuple of NumPy values, in column order."""
    return list(dataset.create_tuple_iterator(num_epochs=1, output_numpy=True))
