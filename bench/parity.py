"""``minddata parity MODEL_OR_PIPELINE``: how far other frameworks' implementations of a pipeline's
deterministic steps are from minddata's, on the same images, and what that does to a model.

    minddata parity net.onnx                                   # the model's embedded pipeline and model
    minddata parity infer224 --against pil,opencv,dali --images photos/

Each op runs in each peer's own implementation (Pillow, OpenCV, torchvision, DALI's CPU backend,
MindSpore in its own interpreter) on the very input minddata's op got, so a row measures that op alone:
the mean and the largest absolute difference from minddata's output, in grey levels for 8-bit images
(in the output's units for float tensors), summarised as ``bench/fusion_pixels.py`` does (the mean of
the per-image means, the largest single difference). Then each peer runs the whole chain on its own
outputs, and for a model the chain's tensors go through the model: top-1 agreement with minddata's
tensors and the largest change of an output (logit). A peer that is not installed, or has no
counterpart for an op, is reported as such. Sizes (the resize target, the crop) are minddata's: a row
measures how the peer computes the pixels, not its size rules.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from minddata.bench._args import OneLineParser

__all__ = ["PEER_NAMES", "ParityResult", "main", "measure"]

PEER_NAMES = ("pil", "opencv", "torchvision", "dali", "mindspore")
MINDSPORE_PYTHON = os.path.expanduser("~/.cache/minddata/mindspore-2.10/bin/python")
_IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png")


class NotTranslated(Exception):
    """The peer has no counterpart for this op (or these arguments)."""


def _value(v: Any) -> Any:
    if isinstance(v, dict) and "__tuple__" in v:
        return tuple(_value(x) for x in v["__tuple__"])
    if isinstance(v, dict) and "__enum__" in v:
        return v["name"]
    if isinstance(v, list):
        return [_value(x) for x in v]
    return v


def _params(entry: dict[str, Any]) -> dict[str, Any]:
    return {k: _value(v) for k, v in (entry.get("tensor_op_params") or {}).items()}


def _pair(size: Any) -> tuple[int, int]:
    return (int(size), int(size)) if isinstance(size, (int, float)) else (int(size[0]), int(size[-1]))


def _center(image: np.ndarray, size: Any) -> np.ndarray:
    """torchvision's (and the usual hand-written) centre crop: offset ``round((n - c) / 2)``."""
    ch, cw = _pair(size)
    h, w = image.shape[:2]
    if ch > h or cw > w:
        raise NotTranslated("CenterCrop larger than the image (padding)")
    top, left = int(round((h - ch) / 2.0)), int(round((w - cw) / 2.0))
    return image[top:top + ch, left:left + cw]


def _normalize(image: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    if not p.get("is_hwc", True):
        raise NotTranslated("Normalize on CHW input")
    mean, std = np.asarray(p["mean"], np.float32), np.asarray(p["std"], np.float32)
    return ((image.astype(np.float32) - mean) / std).astype(np.float32)


def _resize_mode(p: dict[str, Any], modes: dict[str, Any]) -> Any:
    """The peer's counterpart (from ``modes``) of the Resize's interpolation; NotTranslated when it has none."""
    interpolation = p.get("interpolation", "BILINEAR")
    if interpolation not in modes:
        raise NotTranslated(f"Resize with {interpolation}")
    return modes[interpolation]


def _common(name: str, p: dict[str, Any], image: np.ndarray) -> np.ndarray:
    """Ops every peer computes the same way here (NumPy arithmetic, layout)."""
    if name == "CenterCrop":
        return _center(image, p["size"])
    if name == "Normalize":
        return _normalize(image, p)
    if name == "HWC2CHW":
        return np.ascontiguousarray(image.transpose(2, 0, 1))
    if name == "Rescale":
        return (image.astype(np.float32) * np.float32(p["rescale"]) + np.float32(p["shift"])).astype(np.float32)
    raise NotTranslated(name)


class Peer:
    name = ""

    def version(self) -> str:
        raise NotImplementedError

    def op(self, entry: dict[str, Any], image: np.ndarray, target: np.ndarray) -> np.ndarray:
        """``entry``'s op on one image; ``target`` is minddata's output (for its size)."""
        raise NotImplementedError

    def run(self, entry: dict[str, Any], images: list[np.ndarray], targets: list[np.ndarray]) -> list[np.ndarray]:
        return [self.op(entry, x, t) for x, t in zip(images, targets)]


class PilPeer(Peer):
    name = "pil"
    _FILTERS = {"NEAREST": "NEAREST", "BILINEAR": "BILINEAR", "LINEAR": "BILINEAR", "BICUBIC": "BICUBIC",
                "CUBIC": "BICUBIC", "PILCUBIC": "BICUBIC", "AREA": "BOX", "ANTIALIAS": "LANCZOS", "LANCZOS": "LANCZOS"}

    def version(self) -> str:
        import PIL

        return PIL.__version__

    def op(self, entry: dict[str, Any], image: np.ndarray, target: np.ndarray) -> np.ndarray:
        from PIL import Image

        name, p = entry["tensor_op_name"], _params(entry)
        if name == "Decode":
            return np.asarray(Image.open(io.BytesIO(image.tobytes())).convert("RGB"))
        if name == "Resize":
            if image.dtype != np.uint8 or image.ndim != 3:
                raise NotTranslated("Resize of non-8-bit images")
            resample = getattr(Image.Resampling, self._FILTERS[p.get("interpolation", "BILINEAR")])
            h, w = target.shape[:2]
            return np.asarray(Image.fromarray(image).resize((w, h), resample))
        return _common(name, p, image)


class OpenCVPeer(Peer):
    name = "opencv"

    def version(self) -> str:
        import cv2

        return cv2.__version__

    def op(self, entry: dict[str, Any], image: np.ndarray, target: np.ndarray) -> np.ndarray:
        import cv2

        name, p = entry["tensor_op_name"], _params(entry)
        if name == "Decode":
            bgr = cv2.imdecode(image, cv2.IMREAD_COLOR)
            return cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)
        if name == "Resize":
            flags = {"NEAREST": cv2.INTER_NEAREST, "BILINEAR": cv2.INTER_LINEAR, "LINEAR": cv2.INTER_LINEAR,
                     "BICUBIC": cv2.INTER_CUBIC, "CUBIC": cv2.INTER_CUBIC, "AREA": cv2.INTER_AREA}
            h, w = target.shape[:2]
            return cv2.resize(image, (w, h), interpolation=_resize_mode(p, flags))
        return _common(name, p, image)


class TorchvisionPeer(Peer):
    name = "torchvision"

    def version(self) -> str:
        import torchvision

        return torchvision.__version__

    def op(self, entry: dict[str, Any], image: np.ndarray, target: np.ndarray) -> np.ndarray:
        import torch
        import torchvision
        from torchvision.transforms import InterpolationMode
        from torchvision.transforms import functional as F

        name, p = entry["tensor_op_name"], _params(entry)
        if name == "Decode":
            decoded = torchvision.io.decode_image(torch.from_numpy(image.copy()), mode=torchvision.io.ImageReadMode.RGB)
            return decoded.permute(1, 2, 0).numpy()
        if name == "Resize":
            modes = {"NEAREST": InterpolationMode.NEAREST, "BILINEAR": InterpolationMode.BILINEAR,
                     "LINEAR": InterpolationMode.BILINEAR, "BICUBIC": InterpolationMode.BICUBIC}
            mode = _resize_mode(p, modes)
            if image.ndim != 3:
                raise NotTranslated("Resize of images without a channel axis")
            tensor = torch.from_numpy(np.ascontiguousarray(image)).permute(2, 0, 1)
            out = F.resize(tensor, list(target.shape[:2]), mode, antialias=True)
            return out.permute(1, 2, 0).numpy()
        return _common(name, p, image)


class DaliPeer(Peer):
    """DALI's CPU backend: one pipeline per op over the batch of images (ragged shapes are fine)."""

    name = "dali"

    def version(self) -> str:
        import nvidia.dali

        return nvidia.dali.__version__

    def run(self, entry: dict[str, Any], images: list[np.ndarray], targets: list[np.ndarray]) -> list[np.ndarray]:
        from nvidia.dali import fn, pipeline_def, types

        name, p = entry["tensor_op_name"], _params(entry)
        if name not in ("Decode", "Resize", "CenterCrop"):
            return [_common(name, p, x) for x in images]
        interp = {"NEAREST": types.INTERP_NN, "BILINEAR": types.INTERP_LINEAR, "LINEAR": types.INTERP_LINEAR,
                  "BICUBIC": types.INTERP_CUBIC, "CUBIC": types.INTERP_CUBIC, "AREA": types.INTERP_LINEAR,
                  "ANTIALIAS": types.INTERP_LANCZOS3}
        sizes = [np.array(t.shape[:2], dtype=np.float32) for t in targets]

        @pipeline_def(batch_size=len(images), num_threads=1, device_id=None, prefetch_queue_depth=1)
        def pipe():
            data = fn.external_source(source=lambda: list(images), batch=True)
            if name == "Decode":
                return fn.decoders.image(data, device="cpu", output_type=types.RGB)
            if name == "Resize":
                size = fn.external_source(source=lambda: sizes, batch=True)
                return fn.resize(data, size=size, interp_type=_resize_mode(p, interp),
                                 antialias=p.get("interpolation") == "AREA")
            ch, cw = _pair(p["size"])
            return fn.crop(data, crop=(ch, cw), crop_pos_x=0.5, crop_pos_y=0.5)

        built = pipe()
        built.build()
        (out,) = built.run()
        return [np.asarray(out.at(i)) for i in range(len(images))]


PEERS: dict[str, Callable[[], Peer]] = {"pil": PilPeer, "opencv": OpenCVPeer, "torchvision": TorchvisionPeer,
                                        "dali": DaliPeer}
_IMPORTS = {"pil": "PIL", "opencv": "cv2", "torchvision": "torchvision", "dali": "nvidia.dali"}
_INSTALL = {"pil": "pip install pillow", "opencv": "pip install opencv-python-headless",
            "torchvision": "pip install torchvision", "dali": "pip install nvidia-dali-cuda120",
            "mindspore": "pip install mindspore in a virtual environment, then set MINDDATA_MINDSPORE_PYTHON"}

# MindSpore runs in its own interpreter (it needs numpy<2): this script applies the ops with
# mindspore.dataset's eager API, each op on the inputs given for it and the whole chain on the images.
_MINDSPORE_SCRIPT = r"""
import json, sys
import numpy as np
import mindspore
import mindspore.dataset.vision as vision
import mindspore.dataset.transforms as transforms
spec = json.load(open(sys.argv[1]))
data = np.load(sys.argv[2], allow_pickle=False)
modules = {"minddata.vision": vision, "minddata.transforms": transforms}
def value(v):
    if isinstance(v, dict) and "__tuple__" in v:
        return tuple(value(x) for x in v["__tuple__"])
    if isinstance(v, dict) and "__enum__" in v:
        return getattr(getattr(modules[v["module"]], v["__enum__"]), v["name"])
    if isinstance(v, dict):
        raise ValueError(f"argument {v}")
    return v
def build(e):
    module = modules.get(e.get("tensor_op_module"))
    if module is None or not hasattr(module, e["tensor_op_name"]):
        raise ValueError(f"no mindspore.dataset op {e['tensor_op_name']}")
    return getattr(module, e["tensor_op_name"])(**{k: value(v) for k, v in e["tensor_op_params"].items()})
out, errors = {}, {}
ops = []
for k, e in enumerate(spec["ops"]):
    try:
        ops.append(build(e))
    except Exception as exc:
        ops.append(None)
        errors[str(k)] = f"{type(exc).__name__}: {exc}"
for k, op in enumerate(ops):
    if op is None:
        continue
    for i in range(spec["images"]):
        try:
            out[f"op{k}_{i}"] = np.asarray(op(data[f"in{k}_{i}"]))
        except Exception as exc:
            errors[str(k)] = f"{type(exc).__name__}: {exc}"
            break
if all(op is not None for op in ops):
    for i in range(spec["images"]):
        x = data[f"in0_{i}"]
        try:
            for op in ops:
                x = np.asarray(op(x))
            out[f"chain_{i}"] = x
        except Exception as exc:
            errors["chain"] = f"{type(exc).__name__}: {exc}"
            break
np.savez(sys.argv[3], **out)
print(json.dumps({"version": mindspore.__version__, "errors": errors}))
"""


@dataclass
class OpRow:
    op: str
    mean: float | None = None
    max: float | None = None
    units: str = "grey levels"
    note: str = ""


@dataclass
class PeerResult:
    peer: str
    available: bool
    version: str = ""
    reason: str = ""
    ops: list[OpRow] = field(default_factory=list)
    chain: OpRow | None = None
    model: dict[str, Any] | None = None


@dataclass
class ParityResult:
    source: str
    ops: list[str]
    images: int
    peers: list[PeerResult]

    def to_json(self) -> dict[str, Any]:
        import dataclasses

        return dataclasses.asdict(self)


def _difference(ours: list[np.ndarray], theirs: list[np.ndarray]) -> OpRow:
    """fusion_pixels' summary: the mean of per-image mean differences and the largest single one."""
    from minddata.bench.fusion_pixels import pixel_differences

    for a, b in zip(ours, theirs):
        if a.shape != b.shape:
            return OpRow("", note=f"shape {list(b.shape)} instead of {list(a.shape)}")
    means, maxima = pixel_differences(ours, theirs)
    units = "grey levels" if ours and ours[0].dtype == np.uint8 else "output units"
    return OpRow("", round(float(np.mean(means)), 4), round(max(maxima), 4), units)


def _load_images(folder: str | None, limit: int) -> list[bytes]:
    if folder is None:
        from minddata._parity import reference_images

        return reference_images()
    paths = []
    for base, _, names in sorted(os.walk(folder)):
        paths += [os.path.join(base, n) for n in sorted(names) if n.lower().endswith(_IMAGE_SUFFIXES)]
    if not paths:
        raise ValueError(f"--images {folder}: no JPEG or PNG files in it")
    out = []
    for path in paths[:limit]:
        with open(path, "rb") as f:
            out.append(f.read())
    return out


def _source(target: str) -> tuple[list[dict[str, Any]], Any, Callable[[np.ndarray], np.ndarray] | None]:
    """(op entries, minddata ops, the model's first output for a batch) of a model file or a pipeline."""
    from minddata._parity import op_entry, read_card

    if os.path.isfile(target) and not target.endswith(".py"):
        card = read_card(target)
        if card is None:
            raise ValueError(f"{target} carries no pipeline; export it with Model.export_onnx(..., pipeline=eval_dataset)")
        return card.ops, card.build_ops(), _model(target)
    from minddata._standard_pipelines import PIPELINES, make_ops

    if target in PIPELINES:
        ops = make_ops(target)
    else:
        from minddata._userfile import load_user_module

        module = load_user_module(target, "minddata_parity_pipeline", "a standard pipeline name, a pipeline file "
                                  "that defines ops(), or a model file exported with its pipeline")
        ops = module.ops() if callable(getattr(module, "ops", None)) else getattr(module, "OPS", None)
        if not isinstance(ops, (list, tuple)) or not ops:
            raise ValueError(f"{target}: defines no ops; define ops() returning a non-empty list of ops")
    entries = []
    for op in ops:
        entries.append(op_entry(op))
    return entries, ops, None


def _model(path: str) -> Callable[[np.ndarray], np.ndarray]:
    import zipfile

    if zipfile.is_zipfile(path):
        import torch

        module = torch.jit.load(path, map_location="cpu").eval()

        def run_ts(x: np.ndarray) -> np.ndarray:
            with torch.inference_mode():
                out = module(torch.from_numpy(np.ascontiguousarray(x)))
            return (out[0] if isinstance(out, (tuple, list)) else out).numpy()

        return run_ts
    from minddata.trainer import OnnxModel

    model = OnnxModel(path, providers=["CPUExecutionProvider"])

    def run_onnx(x: np.ndarray) -> np.ndarray:
        out = model.predict(x.astype(model.inputs[0].dtype))
        return out[0] if isinstance(out, tuple) else out

    return run_onnx


def _model_change(predict: Callable[[np.ndarray], np.ndarray], ours: list[np.ndarray], theirs: list[np.ndarray]) -> dict:
    agree, largest = 0, 0.0
    for a, b in zip(ours, theirs):
        if a.shape != b.shape:
            return {"note": "the peer's tensors have another shape"}
        pa, pb = predict(a[None]), predict(b[None])
        agree += int(np.argmax(pa.reshape(-1)) == np.argmax(pb.reshape(-1)))
        largest = max(largest, float(np.abs(pa.astype(np.float64) - pb).max()))
    return {"top1_agree": agree, "images": len(ours), "max_output_difference": round(largest, 6)}


def _run_in_process(peer: Peer, entries: list[dict], inputs: list[list[np.ndarray]], outputs: list[list[np.ndarray]],
                    predict: Any) -> PeerResult:
    result = PeerResult(peer.name, True, peer.version())
    for k, entry in enumerate(entries):
        try:
            theirs = peer.run(entry, inputs[k], outputs[k])
            row = _difference(outputs[k], theirs)
        except NotTranslated as exc:
            row = OpRow("", note=f"no counterpart ({exc})")
        row.op = entry["tensor_op_name"]
        result.ops.append(row)
    chain: list[np.ndarray] | None = list(inputs[0])
    for k, entry in enumerate(entries):
        try:
            chain = peer.run(entry, chain, outputs[k])
        except (NotTranslated, ValueError) as exc:
            result.chain = OpRow("chain", note=f"not run: {entry['tensor_op_name']} has no counterpart ({exc})")
            chain = None
            break
    if chain is not None:
        result.chain = _difference(outputs[-1], chain)
        result.chain.op = "whole pipeline"
        if predict is not None:
            result.model = _model_change(predict, outputs[-1], chain)
    return result


def _run_mindspore(entries: list[dict], inputs: list[list[np.ndarray]], outputs: list[list[np.ndarray]],
                   predict: Any) -> PeerResult:
    python = os.environ.get("MINDDATA_MINDSPORE_PYTHON") or MINDSPORE_PYTHON
    if not os.path.exists(python):
        return PeerResult("mindspore", False, reason=f"not installed (no {python}): {_INSTALL['mindspore']}")
    with tempfile.TemporaryDirectory() as tmp:
        spec, data, out = (os.path.join(tmp, n) for n in ("spec.json", "in.npz", "out.npz"))
        with open(spec, "w") as f:
            json.dump({"ops": entries, "images": len(inputs[0])}, f)
        np.savez(data, **{f"in{k}_{i}": x for k, xs in enumerate(inputs) for i, x in enumerate(xs)})
        script = os.path.join(tmp, "ms_parity.py")
        with open(script, "w") as f:
            f.write(_MINDSPORE_SCRIPT)
        try:
            proc = subprocess.run([python, script, spec, data, out], capture_output=True, text=True, timeout=600, cwd=tmp)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return PeerResult("mindspore", False, reason=f"{python} failed: {type(exc).__name__}")
        if proc.returncode != 0:
            last = (proc.stderr.strip().splitlines() or ["?"])[-1]
            return PeerResult("mindspore", False, reason=f"{python} failed: {last[:200]}")
        report = json.loads(proc.stdout.strip().splitlines()[-1])
        with np.load(out) as npz:
            got = {k: npz[k] for k in npz.files}
    result = PeerResult("mindspore", True, report["version"])
    for k, entry in enumerate(entries):
        theirs = [got.get(f"op{k}_{i}") for i in range(len(inputs[0]))]
        if any(t is None for t in theirs):
            row = OpRow("", note=f"no counterpart ({report['errors'].get(str(k), 'failed')})"[:160])
        else:
            row = _difference(outputs[k], theirs)
        row.op = entry["tensor_op_name"]
        result.ops.append(row)
    chain = [got.get(f"chain_{i}") for i in range(len(inputs[0]))]
    if any(c is None for c in chain):
        result.chain = OpRow("whole pipeline", note="not run: " + report["errors"].get("chain", "an op has no counterpart"))
    else:
        result.chain = _difference(outputs[-1], chain)
        result.chain.op = "whole pipeline"
        if predict is not None:
            result.model = _model_change(predict, outputs[-1], chain)
    return result


def measure(target: str, against: Sequence[str] = PEER_NAMES, images_dir: str | None = None,
            max_images: int = 16) -> ParityResult:
    """Every peer in ``against`` on the pipeline of ``target`` (a model file with its pipeline, a
    standard pipeline name or a pipeline file)."""
    import importlib

    from minddata._parity import run_ops

    entries, ops, predict = _source(target)
    images = _load_images(images_dir, max_images)
    inputs: list[list[np.ndarray]] = []
    outputs: list[list[np.ndarray]] = []
    current = [np.frombuffer(b, np.uint8) for b in images]
    for op in ops:
        if getattr(op, "random", False):
            raise ValueError(f"{target}: op {op.name} is random; parity compares deterministic steps only")
        inputs.append(current)
        current = run_ops([op], current)
        outputs.append(current)
    peers = []
    for name in against:
        if name == "mindspore":
            peers.append(_run_mindspore(entries, inputs, outputs, predict))
            continue
        try:
            importlib.import_module(_IMPORTS[name])
        except ImportError as exc:
            peers.append(PeerResult(name, False, reason=f"not installed ({exc}): {_INSTALL[name]}"))
            continue
        try:
            peers.append(_run_in_process(PEERS[name](), entries, inputs, outputs, predict))
        except Exception as exc:  # the peer itself failed: report it, measure the others
            peers.append(PeerResult(name, False, reason=f"failed: {type(exc).__name__}: {str(exc)[:200]}"))
    return ParityResult(target, [e["tensor_op_name"] for e in entries], len(images), peers)


def report_lines(result: ParityResult) -> list[str]:
    lines = [f"minddata parity: {result.source}: {' → '.join(result.ops)} on {result.images} image(s)",
             "  per op: the peer's op on minddata's input to it, against minddata's output (mean / largest "
             "absolute difference)"]
    for peer in result.peers:
        if not peer.available:
            lines.append(f"{peer.peer:<12} {peer.reason}")
            continue
        lines.append(f"{peer.peer} {peer.version}")
        for row in [*peer.ops, *([peer.chain] if peer.chain else [])]:
            if row.note:
                lines.append(f"  {row.op:<18} {row.note}")
            else:
                lines.append(f"  {row.op:<18} mean {row.mean:>9.4g}  max {row.max:>9.4g}  {row.units}")
        if peer.model:
            if "note" in peer.model:
                lines.append(f"  {'model':<18} {peer.model['note']}")
            else:
                lines.append(f"  {'model':<18} top-1 agrees on {peer.model['top1_agree']}/{peer.model['images']}, "
                             f"largest output change {peer.model['max_output_difference']:.4g}")
    return lines


def _peers(text: str) -> list[str]:
    names = [n.strip().lower() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in PEER_NAMES]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"unknown peer(s) {unknown or text!r}; choose from {','.join(PEER_NAMES)}")
    return names


def main(argv: Sequence[str] | None = None, out: Any = None) -> int:
    out = out or sys.stdout
    parser = OneLineParser(prog="minddata parity", description=__doc__,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("target", metavar="MODEL_OR_PIPELINE",
                        help="a model file exported with its pipeline, a standard pipeline name or a pipeline file")
    parser.add_argument("--against", type=_peers, default=list(PEER_NAMES),
                        help=f"comma-separated peers (default {','.join(PEER_NAMES)})")
    parser.add_argument("--images", metavar="DIR", help="JPEG/PNG files to compare on (default: the model's "
                        "reference images, or generated ones)")
    parser.add_argument("--max-images", type=int, default=16, help="at most this many files from --images (default 16)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args(argv)
    try:
        result = measure(args.target, args.against, args.images, args.max_images)
    except (ValueError, OSError) as exc:
        print(f"minddata parity: error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(result.to_json(), indent=1), file=out)
    else:
        print("\n".join(report_lines(result)), file=out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
