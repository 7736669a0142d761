"""Running a compiled plan for the consumer: epochs, prefetch, row conversion, shutdown."""

from __future__ import annotations

import collections
import dataclasses
import os
import threading
import time
from collections.abc import Callable
from contextlib import closing
from typing import Any

from minddata import config
from minddata.config import RunOptions
from minddata.engine import elastic, ir, profiling
from minddata.engine.autotune import Autotuner, default_budget
from minddata.engine.compiler import compile_plan
from minddata.engine.runtime import POLL_SECONDS, PipelineStopped, Runtime
from minddata.errors import EpochsExhaustedError, GraphError, PipelineError, warn

__all__ = ["PipelineRun", "EPOCH_END", "new_runtime"]

EPOCH_END = object()
STATE_VERSION = 1


def check_state(state: Any, num_epochs: int) -> tuple[int, int, int, int]:
    """(epoch, row, seed, shard seed) from an iterator state, or a clear error saying what is wrong with it.

    States saved before the shard seed was recorded resume with ``seed`` as their shard seed."""
    if not isinstance(state, dict) or state.get("version") != STATE_VERSION:
        raise ValueError(
            f"state must be a dict returned by iterator.get_state() (version {STATE_VERSION}). Found: {state!r}"
        )
    values = []
    for key in ("epoch", "row", "seed"):
        value = state.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"state[{key!r}] must be an int of 0 or more. Found: {value!r}")
        values.append(value)
    epoch, row, seed = values
    shard_seed = state.get("shard_seed", seed)
    if isinstance(shard_seed, bool) or not isinstance(shard_seed, int) or shard_seed < 0:
        raise ValueError(f"state['shard_seed'] must be an int of 0 or more. Found: {shard_seed!r}")
    if seed >= 2**32:
        raise ValueError(
            f"state['seed'] must be below 2**32 (seeds are 32-bit, as config.set_seed takes them). Found: {seed}; "
            "pass a state returned by iterator.get_state()"
        )
    if 0 < num_epochs <= epoch:
        raise ValueError(
            f"state is at epoch {epoch}, but the iterator runs only num_epochs={num_epochs}; create it with a "
            "larger num_epochs (epochs count from the first, not from the resume point)"
        )
    return epoch, row, seed, shard_seed


def check_seed(state_seed: int, configured: int | None) -> None:
    """Refuse to resume a state under another seed than the one it was saved with: the state's seed
    decides the order and the augmentations of the rows it has not given yet. ``configured``: the
    seed set by ``config.set_seed`` (``None`` when none was set: the state's seed is taken)."""
    if configured is not None and configured != state_seed:
        raise ValueError(
            f"state: the state was saved by a run with seed {state_seed}, but this process set seed {configured} "
            "(config.set_seed): under another seed the rows not yet given would be shuffled and augmented unlike "
            f"the saved run's, so some would be read twice and others skipped. Call config.set_seed({state_seed}), "
            "or leave the seed unset to take the state's"
        )


class _Failed:
    __slots__ = ("error",)

    def __init__(self, error: BaseException):
        self.error = error


def new_runtime(error_mode: str | None = None, options: RunOptions | None = None) -> Runtime:
    """A runtime holding a snapshot of the settings (``options``, default: taken now), with the
    configured seed or a fresh OS-drawn one when no seed was set; its shard seed is always the
    configured seed or MindSpore's default (``config.get_seed()``; see :class:`Runtime`)."""
    if options is None:
        options = config.snapshot()
    shard_seed = config.DEFAULT_SEED if options.seed is None else options.seed
    if options.debug_mode:
        # MindSpore's debug mode: deterministic (seed 1 unless one was set), every bad row raises, and
        # nothing changes the plan while it runs.
        options = dataclasses.replace(
            options, seed=1 if options.seed is None else options.seed, autotune=False, auto_num_workers=False,
            auto_offload=False, error_samples_mode=config.ErrorSamplesMode.RAISE,
        )
    seed = options.seed if options.seed is not None else int.from_bytes(os.urandom(4), "little")
    mode = error_mode or options.error_samples_mode.value
    return Runtime(seed, mode, options, shard_seed=shard_seed)


EXECUTORS = ("local", "ray")


def _compile(root: ir.Node, rt: Runtime, executor: str) -> Any:
    if executor == "local":
        return compile_plan(root, rt)
    if executor == "ray":
        from minddata.engine.ray_executor import RayPlan, require_ray

        require_ray()
        return RayPlan(root, rt.error_mode, rt.options).compile(rt)
    raise ValueError(f"executor must be one of {list(EXECUTORS)}. Found: {executor!r}")


class PipelineRun:
    """Compiles ``root`` and runs ``num_epochs`` epochs on a prefetch thread.

    ``executor``: ``"local"`` (this process's threads and workers) or ``"ray"`` (the per-row part on
    the Ray cluster ``ray.init()`` connected to; :mod:`minddata.engine.ray_executor`).
    ``convert(row) -> item`` turns each row into what the consumer gets (a dict, a list); it runs on
    the prefetch thread, off the consumer's critical path. :meth:`next_item` returns the next item,
    or :data:`EPOCH_END` once per epoch. The caller owns :meth:`close`. ``options``: the run's
    settings (default: ``config.snapshot()`` now); everything the run does reads them, never the
    global config.
    """

    def __init__(
        self,
        root: ir.Node,
        num_epochs: int,
        convert: Callable[[Any], Any],
        state: dict | list[dict] | None = None,
        executor: str = "local",
        options: RunOptions | None = None,
    ):
        if num_epochs == 0 or num_epochs < -1:
            raise ValueError(f"num_epochs must be -1 (endless) or greater than 0. Found: {num_epochs}")
        if options is None:
            options = config.snapshot()
        self.rt = new_runtime(options=options)
        start_epoch, start_row = 0, 0
        # What an elastic resume needs of the pipeline (elastic.Chain), or why it can't have one.
        self._chain = elastic.describe(root)
        # (epoch, consumed ranges, equal shares): the epoch whose remaining rows are dealt anew (elastic
        # resume), and whether the shares are padded to equal length.
        self._plan: tuple[int, list[list[int]], bool] | None = None
        if state is not None:
            start_epoch, start_row, seed, shard_seed = self._resume_point(state, num_epochs, executor)
            check_seed(seed, options.seed)
            # The seeds decide every shuffle and random op: the resumed stream needs the same ones.
            self.rt.seed, self.rt.shard_seed = seed, shard_seed
        self.stage = _compile(root, self.rt, executor)
        if self._plan is not None:
            self._install_plan()
        self._root = root
        self._start_epoch, self._start_row = start_epoch, start_row
        self.num_epochs = num_epochs
        self.convert = convert
        chunk_rows = self.rt.options.rows_per_chunk
        self.max_chunks = max(2, -(-self.rt.options.prefetch_size // chunk_rows))
        self._items: collections.deque = collections.deque()
        self._cond = threading.Condition()
        self._buffer: list[Any] = []
        self._pos = 0
        # Rows of this epoch handed out before the current buffer (for get_state).
        self._rows_before = start_row
        self.epochs_done = start_epoch
        self._failed: BaseException | None = None
        self._thread: threading.Thread | None = None
        # Set when the run starts if it is profiled or autotuned (minddata.engine.profiling).
        self.profile: profiling.RunProfile | None = None
        self._autotuner: Autotuner | None = None

    def _elastic_chain(self, executor: str) -> elastic.Chain:
        chain = self._chain
        if isinstance(chain, GraphError):
            raise GraphError(str(chain))
        if executor != "local":
            raise GraphError(f"executor={executor!r}: resuming on a different number of ranks runs on the local executor")
        if self.rt.error_mode != "raise":
            raise GraphError(
                f"error_samples_mode={self.rt.error_mode!r} drops or replaces rows, so the rows consumed can't be "
                "told from the count taken: resuming on a different number of ranks needs 'raise'"
            )
        return chain

    def _resume_point(self, state: Any, num_epochs: int, executor: str) -> tuple[int, int, int, int]:
        """(epoch, row, seed, shard seed) to start from; sets ``self._plan`` for an elastic resume."""
        if isinstance(state, (list, tuple)):
            return self._merged(list(state), num_epochs, executor)
        epoch, row, seed, shard_seed = check_state(state, num_epochs)
        part = state.get(elastic.KEY)
        if not isinstance(part, dict):
            return epoch, row, seed, shard_seed
        chain = self._chain
        if isinstance(chain, elastic.Chain):
            # On any number of ranks, a state of another pipeline (rows, ops, files, batch, shuffle) is
            # refused; one saved before the data digest (an older minddata) still resumes on as many ranks.
            elastic.check_pipeline(part, chain, require_data=False)
        # The same number of ranks: a rank resumes from its own state (or, ranks stepping together,
        # from another rank's: the position is the same), as before.
        same_world = isinstance(chain, elastic.Chain) and part.get("num_shards") == chain.num_shards
        if not part.get("base") and part.get("equal", True) and (same_world or isinstance(chain, GraphError)):
            return epoch, row, seed, shard_seed  # a share the sampler dealt
        if same_world:
            # This rank continues its share of an epoch that an elastic resume dealt.
            elastic.check_part(state, self._elastic_chain(executor))
            self._plan = (epoch, [list(r) for r in part["base"]], part.get("equal", True))
            return epoch, row, seed, shard_seed
        if part.get("num_shards") not in (1, None):
            raise ValueError(
                f"elastic resume: the state is rank {part.get('shard_id')}'s of a run of {part.get('num_shards')} "
                "ranks, and this pipeline runs on another number of ranks; pass the list of every rank's state "
                "(state=[state_0, ..., state_n-1]) to resume on a different number of ranks"
            )
        return self._merged([state], num_epochs, executor)

    def _merged(self, states: list, num_epochs: int, executor: str) -> tuple[int, int, int, int]:
        chain = self._elastic_chain(executor)
        for one in states:
            if not isinstance(one, dict):
                raise ValueError(f"state must be a dict returned by iterator.get_state(), or a list of them. Found: {one!r}")
            check_state(one, 0)
        epoch, seed, base = elastic.merge(states, chain)
        if sum(b - a for a, b in base) >= chain.rows:
            epoch, base = epoch + 1, []  # the epoch was consumed whole
        if 0 < num_epochs <= epoch:
            raise ValueError(
                f"state is at epoch {epoch}, but the iterator runs only num_epochs={num_epochs}; create it with a "
                "larger num_epochs (epochs count from the first, not from the resume point)"
            )
        # The epoch's remaining rows (all of them where none was consumed) are dealt to the new ranks:
        # each once, or in equal shares as the sampler deals a whole epoch.
        self._plan = (epoch, base, self.rt.options.elastic_equal_shares)
        return epoch, 0, seed, seed

    def _install_plan(self) -> None:
        """Make the source read this rank's share of the rows its epoch has left (elastic resume)."""
        from minddata.engine.stages import IndexSourceStage

        assert self._plan is not None and isinstance(self._chain, elastic.Chain)
        epoch, base, equal = self._plan
        sources = [s for s in self._stages() if isinstance(s, IndexSourceStage)]
        if len(sources) != 1:
            raise GraphError(f"elastic resume: expected one sampled source in the compiled plan, found {len(sources)}")
        source = sources[0]
        order = source.sampler._epoch_order(source.num_rows, source.seed, epoch)
        source.override = {epoch: elastic.epoch_plan(self._chain, base, order, equal)}

    def _start(self) -> None:
        self._begin_profile()
        self._thread = self.rt.start_thread(self._produce, "minddata-prefetch")
        profile = self.profile
        if profile is not None:
            if profile.sample_interval:
                self.rt.start_thread(profile.sampler_loop, "minddata-profiler-sampler", self.rt.stop_event)
            if self._autotuner is not None:
                self.rt.start_thread(self._autotuner.loop, "minddata-autotune", self.rt.stop_event, self._producing)

    def _producing(self) -> bool:
        thread = self._thread
        return thread is not None and thread.is_alive()

    def _stages(self) -> list[Any]:
        found, todo = [], [self.stage]
        while todo:
            stage = todo.pop()
            found.append(stage)
            todo.extend(stage.children)
        return found

    def _begin_profile(self) -> None:
        """Profile this run if a Profiler is active or profiling/autotune is configured."""
        sinks = profiling.active_sinks()
        profiled = bool(sinks) or self.rt.options.profiling
        options = self.rt.options
        tune_all = options.autotune or options.auto_num_workers
        tuned = tune_all or any(getattr(s, "autotune", False) for s in self._stages())
        if not (profiled or tuned):
            return
        configured = self.rt.options.monitor_sampling_interval / 1000
        intervals = [getattr(s, "sample_interval", None) or configured for s in sinks]
        profile = profiling.RunProfile(
            self.stage,
            self.max_chunks,
            record_spans=profiled,
            sample_interval=min(intervals, default=configured) if profiled else None,
        )
        profile.set_queue_len(self._items.__len__)
        profile.device_stats = self.rt.device_stats
        profile.attach()
        self.profile = profile
        # From now on the consumer's calls go through the timed path; the unprofiled path stays as is.
        self.next_item = self._next_item_profiled  # type: ignore[method-assign]  # on this instance only
        if tuned:
            cpu, memory = default_budget(self.rt.options.autotune_cpu_budget, self.rt.options.autotune_memory_budget)
            self._autotuner = Autotuner(profile, tune_all=tune_all, cpu_budget=cpu, memory_budget=memory,
                                        every_steps=options.autotune_interval, save_prefix=options.autotune_save_prefix,
                                        workers_only=options.auto_num_workers and not options.autotune)
        for sink in sinks:
            sink._add_run(profile)

    def _next_item_profiled(self) -> Any:
        profile = self.profile
        assert profile is not None
        t_request = time.perf_counter()
        profile.request(t_request)
        item = PipelineRun.next_item(self)
        t_ready = time.perf_counter()
        if item is EPOCH_END:
            profile.epoch_end(t_request, t_ready)
            if 0 < self.num_epochs <= self.epochs_done:
                profile.finish()
        else:
            profile.step_ready(t_request, t_ready)
        return item

    def _put(self, item: Any) -> None:
        with self._cond:
            while len(self._items) >= self.max_chunks:
                if self.rt.stopped:
                    raise PipelineStopped("pipeline stopped")
                self._cond.wait(POLL_SECONDS)
            self._items.append(item)
            self._cond.notify_all()

    def _produce(self) -> None:
        convert = self.convert
        profile = self.profile
        perf = time.perf_counter
        epoch, skip = self._start_epoch, self._start_row
        try:
            if epoch:
                # Pass counters key every reshuffle: count the finished epochs as run.
                self.stage.skip_passes(epoch)
            while self.num_epochs < 0 or epoch < self.num_epochs:
                resumed_at, produced = skip, 0
                with closing(self.stage.run(skip)) as chunks:
                    skip = 0
                    for chunk in chunks:
                        produced += len(chunk)
                        if profile is None:
                            self._put([convert(row) for row in chunk.rows])
                        else:
                            t0 = perf()
                            items = [convert(row) for row in chunk.rows]
                            t1 = perf()
                            self._put(items)
                            profile.prefetched(t0, t1, perf())
                if resumed_at and not produced:
                    self._check_resume_row(resumed_at)
                self._put(EPOCH_END)
                epoch += 1
        except PipelineStopped:
            return
        except BaseException as error:  # noqa: BLE001 - handed to the consumer
            if self.rt.stopped:
                return
            try:
                self._put(_Failed(error))
            except PipelineStopped:
                return

    def _check_resume_row(self, row: int) -> None:
        """A resume whose epoch came out empty: refuse a row beyond the epoch (checked only now, as
        counting a streamed source's rows means reading it)."""
        epoch_rows = self._root.static_size()
        if epoch_rows is not None and row > epoch_rows:
            raise ValueError(
                f"state['row'] is {row}, beyond the end of an epoch of this dataset ({epoch_rows} rows): the "
                "state belongs to another dataset (or another batch size or sampler); pass the state that "
                "iterator.get_state() returned for this pipeline"
            )

    def next_item(self) -> Any:
        """The next row, or :data:`EPOCH_END`. Raises the pipeline's error, chained to the original."""
        if self._pos < len(self._buffer):
            item = self._buffer[self._pos]
            self._pos += 1
            return item
        if self._failed is not None:
            raise PipelineError(
                "this iterator stopped after an earlier error (raised above); create a new iterator"
            ) from self._failed
        if self.num_epochs > 0 and self.epochs_done >= self.num_epochs:
            raise EpochsExhaustedError(
                f"the iterator has already run its num_epochs={self.num_epochs} epoch(s). Create it with a "
                f"larger num_epochs (or -1 for no limit), or create a new iterator."
            )
        if self.rt.closed:
            raise PipelineError("the iterator was closed; create a new iterator to read the dataset again")
        if self._thread is None:
            self._start()
            if self.profile is not None:
                return self._next_item_profiled()
        while True:
            with self._cond:
                while not self._items:
                    if self.rt.stopped:
                        raise PipelineError("the iterator was closed while waiting for data")
                    self._cond.wait(POLL_SECONDS)
                item = self._items.popleft()
                self._cond.notify_all()
            if item is EPOCH_END:
                self.epochs_done += 1
                self._rows_before = 0
                self._buffer, self._pos = [], 0
                self._log_errors()
                return EPOCH_END
            if type(item) is _Failed:
                self._failed = item.error
                self.close()
                raise item.error
            if item:
                self._rows_before += self._pos
                self._buffer = item
                self._pos = 1
                return item[0]

    def get_state(self) -> dict:
        """Where the consumer is: small and JSON-serializable. A new iterator created with it
        continues with exactly the rows (and random augmentations) this one would give next."""
        state: dict[str, Any] = {
            "version": STATE_VERSION,
            "seed": self.rt.seed,
            "shard_seed": self.rt.shard_seed,
            "epoch": self.epochs_done,
            "row": self._rows_before + self._pos,
        }
        chain = self._chain
        if isinstance(chain, elastic.Chain):
            # What other world sizes need to continue this run (docs/data.md).
            plan = self._plan
            base, equal = (plan[1], plan[2]) if plan is not None and plan[0] == state["epoch"] else ([], True)
            state[elastic.KEY] = elastic.state_part(
                chain, base, state["row"], state["seed"], state["shard_seed"], state["epoch"], equal=equal)
        return state

    def _log_errors(self) -> None:
        stats = self.rt.errors
        if stats.skipped or stats.replaced:
            warn(
                "after epoch %d: %d row(s) skipped and %d replaced because an op failed "
                "(error_samples_mode=%r). First errors:\n  %s",
                self.epochs_done, stats.skipped, stats.replaced, self.rt.error_mode, "\n  ".join(stats.samples),
            )

    def close(self) -> None:
        if self.profile is not None:
            self.profile.finish()
        # Wake the producer now if it waits for room in the prefetch queue, instead of at its next poll:
        # a consumer that stops early (a trainer's endless feed) would otherwise wait that poll out.
        self.rt.stop_event.set()
        with self._cond:
            self._cond.notify_all()
        self.rt.close()
        with self._cond:
            self._items.clear()
            self._cond.notify_all()
