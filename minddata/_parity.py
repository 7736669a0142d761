"""Train/serve parity: the evaluation pipeline a model file carries, its golden outputs, and the check.

``Model.export_onnx(..., pipeline=eval_dataset)`` (and ``export_torchscript``) writes a *pipeline card*
into the model file's metadata (ONNX ``metadata_props``, TorchScript ``_extra_files``) under two keys:

- ``minddata.pipeline``: JSON with the ops after the source that act on the model's input column
  (``serialize``'s op form, placement left out), their digest, the library versions that define their
  pixels, each op's declared tolerance, and the golden digests (each reference image's pipeline
  output and model output, SHA-256 of the exact bytes);
- ``minddata.golden``: base64 of an ``.npz``: the reference images (small generated JPEGs), every
  op's output on each of them (integers exactly, floats as float16) and the model's outputs.

:func:`check_golden` re-runs each op on its stored input, on this machine, with the served ops'
placement, and compares with the stored output: an op whose output moved beyond its tolerance is
named with the size of the move. Only ``minddata`` classes are rebuilt from the card's JSON
(``deserialize``'s rule), so a model file names no code to run.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from minddata.errors import ArgumentError

__all__ = [
    "CARD_KEY", "GOLDEN_KEY", "PipelineCard", "build_card", "check_golden", "diff_ops", "pipeline_ops",
    "read_card", "reference_images", "run_ops", "side_by_side",
]

CARD_KEY = "minddata.pipeline"
GOLDEN_KEY = "minddata.golden"
FORMAT = 1
# The reference images: small, of three aspect ratios, with edges, gradients and noise, so that a
# resampling or decoding change shows in their pixels.
REFERENCE_SIZES = ((64, 48), (48, 64), (56, 56))
# Integer outputs of ops that resample or decode: OpenCV's and libjpeg-turbo's fixed-point
# arithmetic may move a pixel by one level between releases (the contract tests' GPU tolerance).
RESAMPLING_TOLERANCE = (1.0, 0.25)
# Float outputs: a thousandth of the output's largest value (the card stores floats as float16,
# whose rounding is half that), a tenth of it on average.
FLOAT_TOLERANCE = (1e-3, 1e-4)
# The model's outputs (logits): a CPU/GPU or runtime change moves them a little; top-1 must agree.
MODEL_TOLERANCE = 1e-3


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def digest_ops(ops: Sequence[dict[str, Any]]) -> str:
    """SHA-256 of the ops' canonical JSON: two pipelines with the same digest compute the same pixels."""
    return "sha256:" + hashlib.sha256(_canonical(list(ops)).encode()).hexdigest()


def digest_array(array: np.ndarray) -> str:
    array = np.ascontiguousarray(array)
    h = hashlib.sha256(f"{array.dtype.str}{list(array.shape)}".encode())
    h.update(memoryview(array.reshape(-1)).cast("B") if array.size else b"")
    return "sha256:" + h.hexdigest()


def op_entry(op: Any) -> dict[str, Any]:
    """One op as the card stores it: ``serialize``'s form without the placement (the device is the
    server's choice; the golden check measures what it changes)."""
    from minddata.dataset.serialization import op_to_dict

    entry = op_to_dict(op)
    if entry.get("is_python_front_end_op") or "tensor_op_params" not in entry:
        raise ArgumentError(f"the pipeline's op {_op_name(op)} is Python code, which a model file cannot carry; "
                            "use minddata's ops (vision.*, transforms.*)")
    entry.pop("device_target", None)
    return entry


def _op_name(op: Any) -> str:
    return getattr(op, "name", None) or getattr(op, "__name__", None) or type(op).__name__


def ops_from_entries(entries: Sequence[dict[str, Any]]) -> list[Any]:
    from minddata.dataset.serialization import op_from_dict

    return [op_from_dict(dict(e)) for e in entries]


def pipeline_ops(dataset: Any, column: str | None = None) -> tuple[str, list[Any]]:
    """(column, ops) of the maps after the source that act on ``column`` (default: the first column
    a map works on), in order. Raises ArgumentError for what a served pipeline cannot be: a map that
    renames or combines columns on the way, a random op, Python code."""
    from minddata.dataset.serialization import serialize

    node, maps = serialize(dataset), []
    while node:
        if node.get("op_type") == "Map":
            maps.append(node)
        children = node.get("children") or []
        node = children[0] if children else None
    maps.reverse()
    if column is None:
        column = next((m["input_columns"][0] for m in maps if m.get("input_columns")), None)
    entries = []
    for m in maps:
        inputs = m.get("input_columns") or []
        if column not in inputs:
            continue
        outputs = m.get("output_columns")
        if len(inputs) != 1 or (outputs and list(outputs) != [column]):
            raise ArgumentError(f"the pipeline's map over {inputs} (output {outputs}) does not keep the column "
                                f"{column!r} as it is; a served pipeline maps one column, the model's input")
        entries.extend(m.get("operations") or [])
    if not entries:
        raise ArgumentError(f"the pipeline has no map over the column {column!r} after its source; "
                            "pass the evaluation dataset (source → map(Decode, Resize, ...))")
    for e in entries:
        if e.get("is_python_front_end_op") or "tensor_op_params" not in e:
            raise ArgumentError(f"the pipeline's op {e.get('tensor_op_name', e)} is Python code, which a model "
                                "file cannot carry; use minddata's ops (vision.*, transforms.*)")
    ops = ops_from_entries(entries)
    for op in ops:
        if getattr(op, "random", False):
            raise ArgumentError(f"the pipeline's op {_op_name(op)} is random: an evaluation pipeline must give "
                                "the same tensor for the same image (export the evaluation dataset, not the training one)")
    return column, ops


def pixel_versions() -> dict[str, str]:
    """The versions that define the pipeline's pixels: minddata, OpenCV, libjpeg-turbo (through Pillow)."""
    from minddata._version import __version__

    versions = {"minddata": __version__}
    try:
        import cv2

        versions["OpenCV"] = cv2.__version__
    except ImportError:
        versions["OpenCV"] = "not installed"
    try:
        from PIL import features

        if features.check_feature("libjpeg_turbo"):
            versions["libjpeg-turbo"] = features.version_feature("libjpeg_turbo") or "?"
        else:
            versions["libjpeg"] = features.version("jpg") or "?"
    except ImportError:
        versions["libjpeg-turbo"] = "not installed"
    return versions


def reference_images() -> list[bytes]:
    """The reference JPEGs (deterministic: the same bytes on every machine with the same Pillow)."""
    from PIL import Image

    images = []
    for i, (width, height) in enumerate(REFERENCE_SIZES):
        rng = np.random.default_rng(31 + i)
        y, x = np.mgrid[0:height, 0:width]
        base = np.stack([x * 255 // (width - 1), y * 255 // (height - 1), ((x // 6 + y // 6) % 2) * 200 + 20], -1)
        disc = ((x - width / 2) ** 2 + (y - height / 2) ** 2) < (min(width, height) / 4) ** 2
        base[disc] = (250, 30, 90)
        pixels = np.clip(base + rng.integers(-12, 12, size=base.shape), 0, 255).astype(np.uint8)
        buf = io.BytesIO()
        Image.fromarray(pixels).save(buf, format="JPEG", quality=92)
        images.append(buf.getvalue())
    return images


def run_ops(ops: Sequence[Any], rows: Sequence[np.ndarray], workers: int = 1) -> list[np.ndarray]:
    """``ops`` over ``rows`` (one array per row) as one map of the engine, as a served pipeline runs."""
    import minddata as md

    rows = list(rows)
    ds = md.GeneratorDataset(lambda: ((r,) for r in rows), column_names=["image"], shuffle=False)
    ds = ds.map(operations=list(ops), input_columns="image", num_parallel_workers=workers)
    return [np.asarray(r["image"]) for r in ds.create_dict_iterator(num_epochs=1, output_numpy=True)]


def declared_tolerance(op: Any, output: np.ndarray) -> tuple[float, float]:
    """(largest, mean) difference an op's output may move by between machines and library releases,
    in the output's units (grey levels for uint8)."""
    if output.dtype.kind == "f":
        scale = max(1.0, float(np.abs(output).max())) if output.size else 1.0
        return FLOAT_TOLERANCE[0] * scale, FLOAT_TOLERANCE[1] * scale
    params = getattr(op, "__dict__", {})
    resamples = any("interpolation" in k or k == "resample" for k in params) or _op_name(op) in (
        "Decode", "Resize", "Rescale", "RandomCropDecodeResize")
    return RESAMPLING_TOLERANCE if resamples else (0.0, 0.0)


def _stored(array: np.ndarray) -> np.ndarray:
    return array.astype(np.float16) if array.dtype.kind == "f" else array


# ----------------------------------------------------------------------------------- the card


@dataclass
class PipelineCard:
    """A model file's embedded pipeline (see the module docstring). ``arrays`` holds ``image_<i>``
    (JPEG bytes), ``op<k>_<i>`` (op k's output on image i) and ``model_<i>_<j>`` (output j)."""

    column: str
    ops: list[dict[str, Any]]
    digest: str
    versions: dict[str, str]
    tolerances: list[list[float]]
    golden: dict[str, Any]
    arrays: dict[str, np.ndarray] = field(repr=False)
    stored_digest_ok: bool = True

    @property
    def images(self) -> list[bytes]:
        return [self.arrays[f"image_{i}"].tobytes() for i in range(len(self.golden["pipeline"]))]

    def op_names(self) -> list[str]:
        return [e.get("tensor_op_name", "?") for e in self.ops]

    def build_ops(self) -> list[Any]:
        return ops_from_entries(self.ops)

    def to_metadata(self) -> dict[str, str]:
        buf = io.BytesIO()
        np.savez_compressed(buf, **self.arrays)
        blob = buf.getvalue()
        card = {"format": FORMAT, "column": self.column, "ops": self.ops, "digest": self.digest,
                "versions": self.versions, "tolerances": self.tolerances,
                "golden": {**self.golden, "arrays_digest": "sha256:" + hashlib.sha256(blob).hexdigest()}}
        return {CARD_KEY: json.dumps(card), GOLDEN_KEY: base64.b64encode(blob).decode("ascii")}

    @classmethod
    def from_metadata(cls, meta: dict[str, str], where: str) -> PipelineCard:
        try:
            card = json.loads(meta[CARD_KEY])
            blob = base64.b64decode(meta[GOLDEN_KEY], validate=True)
            with np.load(io.BytesIO(blob), allow_pickle=False) as npz:
                arrays = {k: npz[k] for k in npz.files}
            golden = card["golden"]
            result = cls(card["column"], list(card["ops"]), card["digest"], dict(card["versions"]),
                         [list(t) for t in card["tolerances"]], golden, arrays)
        except (KeyError, TypeError, ValueError, zipfile.BadZipFile, OSError) as exc:
            raise ArgumentError(f"{where}: the embedded pipeline ({CARD_KEY}) is damaged: {type(exc).__name__}: {exc}") from None
        if card.get("format") != FORMAT:
            raise ArgumentError(f"{where}: embedded pipeline format {card.get('format')!r}; this minddata reads {FORMAT}")
        result.stored_digest_ok = digest_ops(result.ops) == result.digest and golden.get("arrays_digest") == (
            "sha256:" + hashlib.sha256(blob).hexdigest())
        return result

    def summary(self) -> dict[str, Any]:
        """What ``/v2/models/{name}`` shows of the card."""
        return {"column": self.column, "ops": self.op_names(), "digest": self.digest,
                "versions_at_export": self.versions, "reference_images": len(self.golden["pipeline"])}


def build_card(column: str, ops: Sequence[Any], predict: Callable[[np.ndarray], Sequence[np.ndarray]] | None,
               model_dtype: np.dtype | None = None) -> PipelineCard:
    """The card for ``ops``: each op's output on the reference images, run op by op, and the
    pipeline's and (through ``predict``, one image per call) the model's golden outputs."""
    images = reference_images()
    entries = [op_entry(op) for op in ops]
    arrays: dict[str, np.ndarray] = {f"image_{i}": np.frombuffer(b, np.uint8) for i, b in enumerate(images)}
    current = [np.frombuffer(b, np.uint8) for b in images]
    tolerances = []
    for k, op in enumerate(ops):
        current = run_ops([op], current)
        tolerances.append(list(max(t) for t in zip(*(declared_tolerance(op, out) for out in current))))
        for i, out in enumerate(current):
            arrays[f"op{k}_{i}"] = _stored(out)
    finals = run_ops(ops, [np.frombuffer(b, np.uint8) for b in images])  # as served: one map, fused as configured
    golden: dict[str, Any] = {"pipeline": [digest_array(f) for f in finals], "model": None}
    if predict is not None:
        model_digests = []
        for i, final in enumerate(finals):
            x = final[np.newaxis]
            if model_dtype is not None and x.dtype != model_dtype:
                x = x.astype(model_dtype)
            outputs = [np.asarray(o) for o in predict(x)]
            model_digests.append([digest_array(o) for o in outputs])
            for j, o in enumerate(outputs):
                arrays[f"model_{i}_{j}"] = o
        golden["model"] = model_digests
    return PipelineCard(column, entries, digest_ops(entries), pixel_versions(), tolerances, golden, arrays)


def read_card(path: str, metadata: dict[str, str] | None = None) -> PipelineCard | None:
    """The card in a model file (ONNX or TorchScript), or None when it has none. ``metadata``: the
    ONNX file's metadata map when already read (ONNX Runtime's ``custom_metadata_map``)."""
    if metadata is None:
        metadata = read_metadata(path)
    if CARD_KEY not in metadata:
        return None
    return PipelineCard.from_metadata(metadata, path)


def read_metadata(path: str) -> dict[str, str]:
    """The string metadata of a model file: a TorchScript archive's ``extra/`` files, or an ONNX file's
    ``metadata_props``."""
    if zipfile.is_zipfile(path):
        out = {}
        with zipfile.ZipFile(path) as archive:
            for name in archive.namelist():
                parts = name.split("/")
                if len(parts) == 3 and parts[1] == "extra" and parts[2] in (CARD_KEY, GOLDEN_KEY):
                    out[parts[2]] = archive.read(name).decode("utf-8")
        return out
    try:
        import onnx
    except ImportError:
        import onnxruntime

        options = onnxruntime.SessionOptions()
        session = onnxruntime.InferenceSession(path, options, providers=["CPUExecutionProvider"])
        return dict(session.get_modelmeta().custom_metadata_map)
    model = onnx.load(path, load_external_data=False)
    return {p.key: p.value for p in model.metadata_props}


# ------------------------------------------------------------------------------ comparisons


def diff_ops(embedded: Sequence[dict[str, Any]], given: Sequence[dict[str, Any]]) -> list[int]:
    """Positions where two op lists differ (placement ignored)."""
    strip = [[{k: v for k, v in e.items() if k != "device_target"} for e in ops] for ops in (embedded, given)]
    return [i for i in range(max(len(strip[0]), len(strip[1])))
            if i >= len(strip[0]) or i >= len(strip[1]) or _canonical(strip[0][i]) != _canonical(strip[1][i])]


def describe_op(entry: dict[str, Any] | None) -> str:
    if entry is None:
        return "(none)"
    params = entry.get("tensor_op_params") or {}

    def value(v: Any) -> str:
        if isinstance(v, dict) and "__enum__" in v:
            return f"{v['__enum__']}.{v['name']}"
        if isinstance(v, dict) and "__tuple__" in v:
            return "(" + ", ".join(value(x) for x in v["__tuple__"]) + ")"
        return json.dumps(v) if not isinstance(v, (int, float)) else repr(v)

    return f"{entry.get('tensor_op_name', '?')}(" + ", ".join(f"{k}={value(v)}" for k, v in params.items()) + ")"


def side_by_side(embedded: Sequence[dict[str, Any]], given: Sequence[dict[str, Any]], left: str = "embedded in the model",
                 right: str = "PIPELINE given") -> str:
    """A table of both op lists, differing rows marked with ``≠``."""
    differ = set(diff_ops(embedded, given))
    rows = [(describe_op(embedded[i] if i < len(embedded) else None),
             describe_op(given[i] if i < len(given) else None), i in differ)
            for i in range(max(len(embedded), len(given)))]
    width = max([len(left)] + [len(r[0]) for r in rows])
    lines = [f"      {left:<{width}}   {right}"]
    for i, (a, b, d) in enumerate(rows):
        lines.append(f"  {i:>2} {a:<{width}} {'≠' if d else '='} {b}")
    return "\n".join(lines)


@dataclass
class OpCheck:
    position: int
    op: str
    max_difference: float
    mean_difference: float
    tolerance: tuple[float, float]
    image: int

    @property
    def ok(self) -> bool:
        return self.max_difference <= self.tolerance[0] and self.mean_difference <= self.tolerance[1]

    def to_json(self) -> dict[str, Any]:
        return {"position": self.position, "op": self.op, "max_difference": self.max_difference,
                "mean_difference": self.mean_difference, "tolerance": {"max": self.tolerance[0], "mean": self.tolerance[1]},
                "worst_reference_image": self.image, "ok": self.ok}


@dataclass
class GoldenReport:
    """The start-up check's result. ``status``: ``exact`` (every golden digest reproduced),
    ``within_tolerance``, ``drift`` (an op or the model moved beyond its tolerance) or ``skipped``."""

    status: str
    ops: list[OpCheck] = field(default_factory=list)
    pipeline_digests_equal: int = 0
    model: dict[str, Any] | None = None
    versions_here: dict[str, str] = field(default_factory=dict)
    versions_at_export: dict[str, str] = field(default_factory=dict)
    reason: str = ""

    @property
    def failed(self) -> list[OpCheck]:
        return [c for c in self.ops if not c.ok]

    def message(self) -> str:
        if self.status == "skipped":
            return f"golden check skipped: {self.reason}"
        changed = {k: (v, self.versions_here.get(k)) for k, v in self.versions_at_export.items()
                   if self.versions_here.get(k) != v}
        since = ("; changed since export: " + ", ".join(f"{k} {a} → {b}" for k, (a, b) in changed.items())) if changed else ""
        if self.status == "drift":
            parts = [f"op {c.position} {c.op} differs from its exported outputs by up to {c.max_difference:g} "
                     f"(mean {c.mean_difference:.3g}) on reference image {c.image}, over its tolerance of "
                     f"{c.tolerance[0]:g} (mean {c.tolerance[1]:g})" for c in self.failed]
            if self.model is not None and not self.model["ok"]:
                parts.append(f"the model's outputs differ by up to {self.model['max_difference']:.3g} "
                             f"(top-1 agrees on {self.model['top1_agree']} of {self.model['images']} reference images)")
            return "golden check failed: " + "; ".join(parts) + since
        return f"golden check {self.status.replace('_', ' ')}" + since

    def to_json(self) -> dict[str, Any]:
        return {"status": self.status, "message": self.message(), "ops": [c.to_json() for c in self.ops],
                "pipeline_digests_reproduced": self.pipeline_digests_equal, "model": self.model,
                "versions_here": self.versions_here, "versions_at_export": self.versions_at_export}


def difference(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """(largest, mean) absolute difference; shapes that differ are an infinite difference."""
    if a.shape != b.shape:
        return float("inf"), float("inf")
    d = np.abs(a.astype(np.float64) - b.astype(np.float64))
    return (float(d.max()), float(d.mean())) if d.size else (0.0, 0.0)


def check_golden(card: PipelineCard, ops: Sequence[Any], run_pipeline: Callable[[bytes], np.ndarray],
                 predict: Callable[[np.ndarray], Sequence[np.ndarray]] | None) -> GoldenReport:
    """Recompute the card's golden outputs here. Each of ``ops`` (the served ops, placed) runs alone on
    its stored input (so a drift is pinned on the op that made it); ``run_pipeline`` is the served
    pipeline (one image in, its tensor out) and ``predict`` the served model (a batch of one)."""
    images = card.images
    report = GoldenReport("exact", versions_here=pixel_versions(), versions_at_export=card.versions)
    inputs = [np.frombuffer(b, np.uint8) for b in images]
    names = card.op_names()
    for k, op in enumerate(ops):
        outputs = run_ops([op], inputs)
        tol = tuple(card.tolerances[k])
        worst = OpCheck(k, names[k], 0.0, 0.0, tol, 0)
        for i, out in enumerate(outputs):
            stored = card.arrays[f"op{k}_{i}"]
            largest, mean = difference(_stored(out), stored)
            if (largest, mean) > (worst.max_difference, worst.mean_difference):
                worst = OpCheck(k, worst.op, largest, mean, tol, i)
        report.ops.append(worst)
        # The next op runs on this op's stored output, in the dtype this op produces.
        inputs = [card.arrays[f"op{k}_{i}"].astype(out.dtype) for i, out in enumerate(outputs)]
    finals = [run_pipeline(b) for b in images]
    report.pipeline_digests_equal = sum(digest_array(f) == g for f, g in zip(finals, card.golden["pipeline"]))
    exact = report.pipeline_digests_equal == len(images) and all(c.max_difference == 0 for c in report.ops)
    if predict is not None and card.golden.get("model"):
        largest, agree, digests_equal = 0.0, 0, 0
        for i, final in enumerate(finals):
            outputs = [np.asarray(o) for o in predict(final[np.newaxis])]
            digests_equal += [digest_array(o) for o in outputs] == card.golden["model"][i]
            ref = [card.arrays[f"model_{i}_{j}"] for j in range(len(card.golden["model"][i]))]
            for o, r in zip(outputs, ref):
                largest = max(largest, difference(o, r)[0])
            if ref and outputs and ref[0].ndim >= 1 and outputs[0].shape == ref[0].shape:
                agree += int(np.argmax(outputs[0].reshape(-1)) == np.argmax(ref[0].reshape(-1)))
        scale = max((float(np.abs(card.arrays[k]).max()) for k in card.arrays if k.startswith("model_")), default=1.0)
        ok = agree == len(images) and largest <= MODEL_TOLERANCE * max(1.0, scale)
        report.model = {"digests_reproduced": digests_equal, "images": len(images), "top1_agree": agree,
                        "max_difference": largest, "tolerance": MODEL_TOLERANCE * max(1.0, scale), "ok": ok}
        exact = exact and digests_equal == len(images)
        if not ok:
            report.status = "drift"
    if report.failed:
        report.status = "drift"
    elif report.status != "drift" and not exact:
        report.status = "within_tolerance"
    return report
