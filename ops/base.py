"""The op contract: an op is a small spec (validated parameters, no computation); kernels compute."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple, TypeAlias

import numpy as np

from minddata.errors import ArgumentError

if TYPE_CHECKING:
    from minddata.config import RunOptions

__all__ = [
    "DEVICES",
    "KernelContext",
    "KernelOp",
    "Op",
    "TensorSpec",
    "canonical_device",
    "init_arguments",
    "op_label",
    "record_init_arguments",
    "row_rng",
]

DEVICES = ("CPU", "GPU", "Dvpp")
_DEVICE_ALIASES = {"cpu": "CPU", "gpu": "GPU", "dvpp": "Dvpp", "ascend": "Dvpp", "auto": "auto"}


def add_device_name(name: str, aliases: tuple[str, ...] = ()) -> None:
    """Let ops be placed on ``name`` (or its ``aliases``, any case): called by
    :func:`minddata.ops.devices.register_device` for an accelerator added at run time."""
    for alias in (name, *aliases):
        _DEVICE_ALIASES[alias.lower()] = name


def remove_device_name(name: str) -> None:
    """Undo :func:`add_device_name` for ``name`` and its aliases."""
    for alias in [a for a, canon in _DEVICE_ALIASES.items() if canon == name]:
        del _DEVICE_ALIASES[alias]


def canonical_device(name: str, *, where: str = "device") -> str:
    """``"cpu"``/``"CPU"`` → ``"CPU"``; ``"Ascend"`` is MindSpore's name for ``"Dvpp"``; an accelerator
    added with :func:`minddata.ops.devices.register_device` by its name or aliases."""
    canon = _DEVICE_ALIASES.get(str(name).lower()) if isinstance(name, str) else None
    if canon is None:
        raise ArgumentError(
            f"{where}: device must be one of 'CPU', 'GPU', 'Dvpp' (alias 'Ascend') or 'auto'. Found: {name!r}"
        )
    return canon


class TensorSpec(NamedTuple):
    """What an op knows about a tensor before running: its shape (``None`` for a size known only at run
    time) and dtype (``None`` when it depends on the data)."""

    shape: tuple[int | None, ...]
    dtype: np.dtype | None


def row_rng(seed: int, pass_index: int, row_index: int, op_position: int) -> np.random.Generator:
    """The generator a random op uses for one row.

    Counter-based (Philox): the stream depends only on (seed, pass, row, op position), never on which
    worker runs the row or in what order, so output is identical for any worker count and on resume.
    """
    counter, key = _philox_words(seed, pass_index, row_index, op_position)
    return np.random.Generator(np.random.Philox(counter=counter, key=key))


def _philox_words(seed: int, pass_index: int, row_index: int, op_position: int) -> tuple[list[int], list[int]]:
    """The counter and key words of a row's stream (shared by :func:`row_rng` and :func:`restart_row_rng`).
    Philox advances the lowest counter word as numbers are drawn, so the row and pass sit in the
    higher words: each (row, pass) stream is 2**64 blocks away from every other."""
    counter = [0, row_index & 0xFFFFFFFFFFFFFFFF, pass_index & 0xFFFFFFFFFFFFFFFF, 0]
    return counter, [seed & 0xFFFFFFFFFFFFFFFF, op_position & 0xFFFFFFFFFFFFFFFF]


def restart_row_rng(rng: np.random.Generator, seed: int, pass_index: int, row_index: int, op_position: int) -> None:
    """Put a generator made by :func:`row_rng` at the start of another row's stream: afterwards it
    draws exactly what ``row_rng(seed, pass_index, row_index, op_position)`` draws. A fresh Philox
    costs ~9 us, most of it asking the OS for entropy that the key then replaces (numpy seeds every
    bit generator); setting the state costs ~1 us, and random ops run once per row holding the GIL."""
    counter, key = _philox_words(seed, pass_index, row_index, op_position)
    if counter[1] < _WORD_63 and counter[2] < _WORD_63 and key[0] < _WORD_63 and key[1] < _WORD_63:
        # Every word fits an int64, where np.asarray's conversion below is exact too: the words go
        # straight into reused arrays (the setter copies them), and no array is built per row.
        state = _philox_state()
        words, key_words = state["state"]["counter"], state["state"]["key"]
        words[1], words[2] = counter[1], counter[2]
        key_words[0], key_words[1] = key[0], key[1]
        rng.bit_generator.state = state
        return
    # The words converted as Philox converts row_rng's lists (np.asarray, then an unsafe cast), so
    # that the two agree for every value, words of 2**63 and more included.
    rng.bit_generator.state = {
        "bit_generator": "Philox",
        "state": {
            "counter": np.asarray(counter).astype(np.uint64, casting="unsafe"),
            "key": np.asarray(key).astype(np.uint64, casting="unsafe"),
        },
        "buffer": np.zeros(4, np.uint64),
        "buffer_pos": 4,
        "has_uint32": 0,
        "uinteger": 0,
    }


_WORD_63 = 1 << 63
_thread_state = threading.local()


def _philox_state() -> dict:
    """This thread's reusable Philox state for :func:`restart_row_rng` (counter words 0 and 3 and the
    buffer stay zero; the setter reads, never keeps, the arrays)."""
    state = getattr(_thread_state, "philox", None)
    if state is None:
        state = {
            "bit_generator": "Philox",
            "state": {"counter": np.zeros(4, np.uint64), "key": np.zeros(2, np.uint64)},
            "buffer": np.zeros(4, np.uint64),
            "buffer_pos": 4,
            "has_uint32": 0,
            "uinteger": 0,
        }
        _thread_state.philox = state
    return state


class KernelContext:
    """What a kernel gets besides its op and inputs: where the row is and a lazily built RNG.

    The engine reuses one context per worker and op position, moving ``row_index`` as rows pass.
    """

    __slots__ = (
        "seed", "pass_index", "row_index", "op_position", "_rng", "_rng_row", "counts", "_options"
    )

    def __init__(
        self,
        seed: int = 0,
        pass_index: int = 0,
        row_index: int = 0,
        op_position: int = 0,
        options: RunOptions | None = None,
    ):
        self.seed = seed
        self.pass_index = pass_index
        self.row_index = row_index
        self.op_position = op_position
        self._options = options
        self._rng: np.random.Generator | None = None
        self._rng_row = -1
        # Events a kernel reports to the engine (e.g. a Dvpp row run on the CPU): name -> count. The
        # engine adds them to the iterator's device statistics.
        self.counts: dict[str, int] | None = None

    @property
    def options(self) -> RunOptions:
        """The run's settings (the iterator's :class:`~minddata.config.RunOptions` snapshot); kernels
        read these, never the global config, so threads and worker processes agree. A context made
        without one (an eager call) takes a snapshot of the settings now."""
        if self._options is None:
            from minddata import config

            self._options = config.snapshot()
        return self._options

    def count(self, name: str, n: int = 1) -> None:
        """Report ``n`` more of event ``name`` for the engine's statistics."""
        if self.counts is None:
            self.counts = {}
        self.counts[name] = self.counts.get(name, 0) + n

    @property
    def rng(self) -> np.random.Generator:
        """The row's generator (:func:`row_rng`). One generator serves the context's rows in turn, so
        a kernel takes it for the row it runs and keeps it no longer."""
        if self._rng is None:
            self._rng = row_rng(self.seed, self.pass_index, self.row_index, self.op_position)
            self._rng_row = self.row_index
        elif self._rng_row != self.row_index:
            restart_row_rng(self._rng, self.seed, self.pass_index, self.row_index, self.op_position)
            self._rng_row = self.row_index
        return self._rng


_INIT_CALL = "_init_call"


def record_init_arguments(cls: type, after: Callable[[Any], None] | None = None) -> None:
    """Make instances of ``cls`` remember the arguments they were constructed with.

    Wraps the ``__init__`` that ``cls`` itself defines (if any). The outermost constructor call of an
    instance is recorded, so a subclass calling ``super().__init__(...)`` keeps its own arguments;
    :func:`init_arguments` reads them back. ``after(instance)`` runs once that outermost ``__init__``
    has returned. This is how ``minddata.serialize`` writes ops, samplers and dataset sources as
    their constructor calls, with nothing to add per class.
    """
    init = cls.__dict__.get("__init__")
    if init is None or getattr(init, "_records_arguments", False):
        return

    @functools.wraps(init)
    def recording_init(self: Any, *args: Any, **kwargs: Any) -> None:
        state = self.__dict__
        if _INIT_CALL in state:  # an inner super().__init__: the outer call is the one to keep
            init(self, *args, **kwargs)
            return
        state[_INIT_CALL] = (args, kwargs)
        init(self, *args, **kwargs)
        if after is not None:
            after(self)

    recording_init._records_arguments = True  # type: ignore[attr-defined]  # a mark on the function object
    cls.__init__ = recording_init  # type: ignore[misc]  # replacing a class's constructor is the point


def init_arguments(obj: Any) -> tuple[tuple[Any, ...], dict[str, Any]] | None:
    """``(args, kwargs)`` of the constructor call that made ``obj`` (see :func:`record_init_arguments`),
    or ``None`` when its class does not record them.

    Examples:
        >>> from minddata import vision
        >>> init_arguments(vision.Resize((4, 6), interpolation=vision.Inter.AREA))
        (((4, 6),), {'interpolation': Inter.AREA})
    """
    return getattr(obj, "__dict__", {}).get(_INIT_CALL)


class Op:
    """Base of every op spec (``vision.Decode``, ``transforms.TypeCast``, ...).

    A spec validates its parameters in ``__init__`` and computes nothing; kernels registered per device
    in ``minddata.ops`` do the work. Specs pickle, so they can travel to worker processes.

    Subclasses set ``random`` (draws from the row RNG), ``num_inputs``/``num_outputs`` (``-1``: any).

    Examples:
        >>> from minddata import transforms
        >>> import numpy as np
        >>> transforms.TypeCast(np.float32)(np.array([1, 2])).dtype
        dtype('float32')
    """

    random: ClassVar[bool] = False
    num_inputs: ClassVar[int] = 1
    num_outputs: ClassVar[int] = 1

    _device: str = "CPU"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # Specs remember their constructor call: serialization writes an op as that call.
        record_init_arguments(cls)

    @property
    def name(self) -> str:
        return type(self).__name__

    @property
    def label(self) -> str:
        """The op's name in errors, plans and profiles: its ``name``, or for an op the optimizer put in
        the user's place, the user's ops (a fused op joins them with '+')."""
        return self.name

    @property
    def timing_label(self) -> str:
        """The op's name in per-op timings (an op that only checks rows for another says so)."""
        return self.label

    def device(self, device_target: str = "CPU") -> Op:
        """Place this op: ``"CPU"`` (default), ``"GPU"``, ``"Dvpp"`` (alias ``"Ascend"``) or ``"auto"``.

        Returns the op itself, as MindSpore does, so ``vision.Decode().device("Dvpp")`` reads naturally.
        """
        self._device = canonical_device(device_target, where=f"{self.name}.device")
        return self

    @property
    def device_target(self) -> str:
        return self._device

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec | tuple[TensorSpec, ...]:
        """The output shape/dtype rule: what this op makes of inputs with these specs.

        Returns one :class:`TensorSpec` (or a tuple of them for ops with several outputs). Unknown
        sizes are ``None``. The contract test checks the rule against every kernel's real output.
        """
        raise NotImplementedError(f"{self.name} does not state its output shape/dtype rule")

    def params(self) -> dict[str, Any]:
        """The validated parameters, for ``repr``, plans and equality."""
        return {k: v for k, v in vars(self).items() if not k.startswith("_")}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params().items())
        return f"{self.name}({args})"

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        a, b = self.params(), other.params()
        if a.keys() != b.keys():
            return False
        return all(_param_equal(a[k], b[k]) for k in a) and self._device == other._device

    __hash__ = None  # type: ignore[assignment]  # None makes instances unhashable, as __eq__ needs

    def __call__(self, *inputs: Any) -> Any:
        """Run the op eagerly on the CPU kernel, as MindSpore's eager mode does."""
        from minddata.ops.registry import get_kernel

        if self.num_inputs >= 0 and len(inputs) != self.num_inputs:
            raise ArgumentError(
                f"{self.name}: expected {self.num_inputs} input(s). Found: {len(inputs)}"
            )
        from minddata import config

        kernel = get_kernel(self.name, "CPU")
        # Each eager call of a random op draws anew (as MindSpore's eager mode does); NumPy's global
        # generator, seeded by config.set_seed, picks the row so seeded scripts repeat exactly.
        row = int(np.random.randint(0, 2**62)) if self.random else 0
        options = config.snapshot()  # an eager call is its own run: one read of the settings
        seed = config.DEFAULT_SEED if options.seed is None else options.seed
        ctx = KernelContext(seed=seed, row_index=row, options=options)
        return kernel(self, ctx, *inputs)


# The type of a kernel's ``op`` argument (and of the device code that reads an op's parameters): an op
# spec whose class lives above ``ops/`` (``minddata.vision.Resize`` and so on), so the code here, which
# cannot import it, reads the parameters it needs by name (``op.size``). A type checker cannot know
# them: ``Any``, under a name that says what the value is.
KernelOp: TypeAlias = Any


def op_label(op: Any, *, timings: bool = False) -> str:
    """How errors (or, with ``timings``, per-op timings) name an operation of a map: an op's
    ``label`` (``timing_label``), a Python callable's ``__name__``.

    Examples:
        >>> from minddata import vision
        >>> from minddata.ops.base import op_label
        >>> op_label(vision.Resize(8)), op_label(len)
        ('Resize', 'len')
    """
    if isinstance(op, Op):
        return op.timing_label if timings else op.label
    return getattr(op, "__name__", None) or type(op).__name__


def _param_equal(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(np.asarray(a), np.asarray(b))
    return bool(a == b)
