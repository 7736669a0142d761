"""The baseline for ``bench/serve_load.py``: an inference preprocessing server written the usual way,
FastAPI + Pillow + NumPy, one request at a time (the handler decodes and transforms inline on the event
loop), with the standard pipelines' preprocessing. ``POST /v1/preprocess`` answers ``.npy`` like
``minddata serve``.

Run: ``python -m minddata.bench.serve_baseline --pipeline infer224 --host 127.0.0.1 --port 0``; it
prints ``listening on URL`` once the socket is bound.
"""

# No `from __future__ import annotations`: FastAPI must see the handler's Request annotation as a class.
import argparse
import io
import socket
import sys

import numpy as np

from minddata.bench.pipelines import MEAN, STD

_MEAN = np.array(MEAN, dtype=np.float32)
_STD = np.array(STD, dtype=np.float32)


def preprocess(data: bytes, pipeline: str) -> np.ndarray:
    """The standard pipeline's preprocessing in Pillow and NumPy: decode, resize (and centre-crop for
    infer224), normalize, HWC→CHW."""
    from PIL import Image

    image = Image.open(io.BytesIO(data)).convert("RGB")
    if pipeline == "infer224":
        w, h = image.size
        scale = 256 / min(w, h)
        image = image.resize((max(1, round(w * scale)), max(1, round(h * scale))), Image.BILINEAR)
        w, h = image.size
        left, top = (w - 224) // 2, (h - 224) // 2
        image = image.crop((left, top, left + 224, top + 224))
    elif pipeline == "yolo416":
        image = image.resize((416, 416), Image.BILINEAR)
    else:
        raise ValueError(f"baseline: no preprocessing for pipeline {pipeline!r}; choose infer224 or yolo416")
    pixels = (np.asarray(image, dtype=np.float32) - _MEAN) / _STD
    return np.ascontiguousarray(pixels.transpose(2, 0, 1))


def make_app(pipeline: str):
    from fastapi import FastAPI, Request
    from fastapi.responses import JSONResponse, Response

    app = FastAPI(title="baseline preprocessing server")

    @app.post("/v1/preprocess")
    async def handle(request: Request):
        body = await request.body()
        try:
            tensor = preprocess(body, pipeline)  # inline on the loop: one request at a time
        except Exception as exc:  # noqa: BLE001 - a bad image is the client's problem
            return JSONResponse({"error": str(exc)}, status_code=422)
        buf = io.BytesIO()
        np.save(buf, tensor, allow_pickle=False)
        return Response(buf.getvalue(), media_type="application/x-npy")

    return app


def main(argv: list[str] | None = None) -> int:
    import uvicorn

    parser = argparse.ArgumentParser(prog="python -m minddata.bench.serve_baseline")
    parser.add_argument("--pipeline", default="infer224", choices=["infer224", "yolo416"])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((args.host, args.port))
    sock.listen(2048)
    host, port = sock.getsockname()[:2]
    print(f"baseline ({args.pipeline}): listening on http://{host}:{port}", flush=True)
    server = uvicorn.Server(uvicorn.Config(make_app(args.pipeline), log_level="warning", access_log=False))
    server.run(sockets=[sock])
    return 0


if __name__ == "__main__":
    sys.exit(main())
