"""Train/serve parity in the service: which pipeline a model file carries, whether the served one is
it, and the start-up golden check (docs/parity.md).

``minddata serve model.onnx`` serves the model's embedded pipeline. ``minddata serve PIPELINE --model
model.onnx`` checks PIPELINE against it: a difference stops the start with both op lists side by
side, unless ``--allow-pipeline-mismatch`` (then a warning, and the model's metadata says so). At
start-up the golden outputs are recomputed here, each op on its stored input: an op whose output
moved beyond its tolerance is named with the size of the move, and the start stops (or warns, with
the same flag). The result is in ``/v2/models/{name}`` (``"pipeline"``) and ``/metrics``.
"""

from __future__ import annotations

import logging
import os
import zipfile
from dataclasses import dataclass
from typing import Any

import numpy as np

from minddata._parity import (
    GoldenReport,
    PipelineCard,
    check_golden,
    diff_ops,
    digest_ops,
    op_entry,
    read_card,
    side_by_side,
)
from minddata.errors import ArgumentError

__all__ = ["ParityState", "is_model_file", "resolve"]

log = logging.getLogger("minddata.serve")

_MODEL_SUFFIXES = (".onnx", ".pt", ".pth", ".ts", ".torchscript")


def is_model_file(path: str) -> bool:
    """A model file (ONNX or a TorchScript archive) rather than a pipeline (a name or a ``.py`` file)."""
    if not os.path.isfile(path) or path.endswith(".py"):
        return False
    return path.endswith(_MODEL_SUFFIXES) or zipfile.is_zipfile(path)


def _entry(op: Any) -> dict[str, Any]:
    try:
        return op_entry(op)
    except Exception:  # Python code in a pipeline file: shown by name, never equal to an op
        name = getattr(op, "__name__", type(op).__name__)
        return {"tensor_op_name": f"{name} (Python code)", "tensor_op_params": {}}


@dataclass
class ParityState:
    """What the service knows of the model's embedded pipeline and of the served one."""

    card: PipelineCard | None
    model_path: str
    served_embedded: bool
    differences: list[int]
    allowed: bool
    golden: GoldenReport | None = None
    table: str = ""

    @property
    def mismatch(self) -> bool:
        return bool(self.differences)

    def check(self, ops: list[Any], run_pipeline: Any, predict: Any) -> GoldenReport | None:
        """Run the golden check (when the model carries a card); raises ValueError on drift unless
        the mismatch is allowed."""
        if self.card is None:
            return None
        if self.mismatch:
            log.warning("the served PIPELINE differs from the pipeline embedded in %s at op(s) %s (serving it "
                        "anyway: --allow-pipeline-mismatch):\n%s", self.model_path, self.differences, self.table)
            self.golden = GoldenReport("skipped", reason="the served pipeline is not the embedded one",
                                       versions_at_export=self.card.versions)
            return self.golden
        self.golden = check_golden(self.card, ops, run_pipeline, predict)
        if self.golden.status == "drift":
            if not self.allowed:
                raise ValueError(f"{self.model_path}: {self.golden.message()}; the model was exported with pixels "
                                 "this machine does not reproduce (pass --allow-pipeline-mismatch to serve anyway)")
            log.warning("%s: %s (serving anyway: --allow-pipeline-mismatch)", self.model_path, self.golden.message())
        return self.golden

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"embedded": self.card is not None}
        if self.card is None:
            return out
        out.update(self.card.summary())
        out.update({"served": "embedded" if self.served_embedded else "PIPELINE argument",
                    "matches_embedded": not self.mismatch, "mismatch_allowed": self.allowed and self.mismatch,
                    "differing_ops": self.differences})
        if self.golden is not None:
            out["golden_check"] = self.golden.to_json()
        return out

    def banner(self) -> list[str]:
        if self.card is None:
            return []
        source = "embedded in the model" if self.served_embedded else "PIPELINE argument"
        lines = [f"  parity:   pipeline {source} (digest {self.card.digest[:19]}…)"]
        if self.mismatch:
            lines.append(f"  parity:   WARNING: differs from the embedded pipeline at op(s) {self.differences} "
                         "(--allow-pipeline-mismatch)")
        if self.golden is not None:
            lines.append(f"  parity:   {self.golden.message()}")
        return lines


def resolve(pipeline_arg: str, model_arg: str | None, given: Any, allow: bool) -> tuple[Any, str | None, ParityState | None]:
    """(pipeline, model path, parity state) for the command line. ``given`` builds the PIPELINE
    argument's ServePipeline (called only when there is one). Raises ValueError with the message."""
    from minddata.serve.pipeline import ServePipeline

    if model_arg is None and is_model_file(pipeline_arg):
        card = _card(pipeline_arg, strict=True)
        if card is None:
            raise ValueError(f"{pipeline_arg} carries no pipeline (export it with Model.export_onnx(..., pipeline="
                             f"eval_dataset)), or serve it as: minddata serve PIPELINE --model {pipeline_arg}")
        stem = os.path.splitext(os.path.basename(pipeline_arg))[0]
        pipeline = ServePipeline(stem, card.build_ops())
        return pipeline, pipeline_arg, ParityState(card, pipeline_arg, True, [], allow)
    pipeline = given()
    if model_arg is None or not os.path.isfile(model_arg) or not is_model_file(model_arg):
        return pipeline, model_arg, None
    card = _card(model_arg)
    if card is None:
        return pipeline, model_arg, None
    entries = [_entry(op) for op in pipeline.ops]
    differences = diff_ops(card.ops, entries)
    if differences and not allow:
        raise ValueError(f"PIPELINE {pipeline_arg} differs from the pipeline embedded in {model_arg} at op(s) "
                         f"{differences}:\n{side_by_side(card.ops, entries)}\nserve the model alone (minddata serve "
                         f"{model_arg}) to use its pipeline, or pass --allow-pipeline-mismatch")
    table = side_by_side(card.ops, entries) if differences else ""
    return pipeline, model_arg, ParityState(card, model_arg, False, differences, allow, table=table)


def _card(path: str, strict: bool = False) -> PipelineCard | None:
    try:
        card = read_card(path)
    except ArgumentError as exc:
        raise ValueError(str(exc)) from None
    except Exception as exc:  # not a model file at all: with --model, the model loader says so later
        if strict:
            first = str(exc).splitlines()[0][:200] if str(exc) else ""
            raise ValueError(f"{path}: not a model file whose metadata can be read ({type(exc).__name__}: {first})") from None
        return None
    if card is not None and not card.stored_digest_ok:
        raise ValueError(f"{path}: the embedded pipeline does not match its digest (stored {card.digest}, its ops "
                         f"give {digest_ops(card.ops)}, or its golden arrays were changed): the file was edited "
                         "after export; export the model again")
    return card


def session_runner(session: Any) -> Any:
    """One image through the service's own online session (the served path), its first column out."""

    def run(image: bytes) -> np.ndarray:
        row = session.submit((np.frombuffer(image, dtype=np.uint8),)).result(timeout=60)
        return np.asarray(next(iter(row.values())))

    return run


def model_runner(model: Any, input_name: str) -> Any:
    if getattr(model, "path", None) is None:
        return None

    def predict(x: np.ndarray) -> list[np.ndarray]:
        return list(model.predict({input_name: x}).values())

    return predict
