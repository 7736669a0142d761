"""The inference preprocessing service behind ``minddata serve`` (DESIGN.md §8).

Clients send encoded images over the Open Inference Protocol (v2) or ``POST /v1/preprocess``; the
service batches them dynamically through an online pipeline session (and optionally a model) and
answers each request with its tensors or predictions. The web stack (FastAPI, uvicorn,
prometheus-client) is the ``serve`` extra and is imported only when a server starts:
``import minddata.serve`` needs nothing beyond minddata's core dependencies.
"""

from __future__ import annotations

from minddata.serve.pipeline import ServePipeline, load_pipeline_file

__all__ = ["ServePipeline", "load_pipeline_file"]
