"""The inference routes' direct path (``_DirectRoute``): a POST to an inference route runs its
endpoint past FastAPI's routing, with the route's own path parameters, and keeps what routing gave
it (the route for the request metrics, a JSON 500 for an endpoint's bug); anything else goes to the
router. The full service's behaviour on these routes is tested against a real server in
test_protocol.py and test_hostile.py."""

from __future__ import annotations

import asyncio

import httpx
from fastapi import Depends, FastAPI, Request
from fastapi.responses import JSONResponse

from minddata.serve.app import _DirectRoute

PATHS = ("/v1/preprocess", "/v2/models/{model_name}/infer", "/v2/models/{model_name}/versions/{model_version}/infer")


def _app() -> tuple[FastAPI, list]:
    app = FastAPI()
    seen: list = []

    def routed():  # a dependency: FastAPI's routing runs it, the direct path does not
        seen.append(("routed",))

    @app.post("/v1/preprocess", dependencies=[Depends(routed)])
    async def preprocess(request: Request):
        seen.append(("preprocess", request.scope["route"].path, await request.body()))
        if request.headers.get("x-fail"):
            raise RuntimeError("a bug in the endpoint")
        return JSONResponse({"ok": True})

    @app.post("/v2/models/{model_name}/infer")
    @app.post("/v2/models/{model_name}/versions/{model_version}/infer")
    async def infer(model_name: str, request: Request, model_version: str | None = None):
        seen.append(("infer", request.scope["route"].path, model_name, model_version))
        return JSONResponse({"model": model_name, "version": model_version})

    @app.get("/v1/preprocess", dependencies=[Depends(routed)])
    async def preprocess_help():
        seen.append(("router", "GET"))
        return {"use": "POST"}

    app.add_middleware(_DirectRoute, paths=PATHS, routes=app.routes)
    return app, seen


def _call(app, method: str, path: str, **kw) -> httpx.Response:
    async def go():
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app, raise_app_exceptions=False),
                                     base_url="http://test") as client:
            return await client.request(method, path, **kw)

    return asyncio.run(go())


def test_a_post_runs_its_endpoint_with_the_route_and_the_body_past_the_router():
    app, seen = _app()
    answer = _call(app, "POST", "/v1/preprocess", content=b"\xff\xd8\xff")
    assert answer.status_code == 200 and answer.json() == {"ok": True}
    assert seen == [("preprocess", "/v1/preprocess", b"\xff\xd8\xff")]  # no ("routed",): the router was skipped


def test_path_parameters_reach_the_endpoint():
    app, seen = _app()
    assert _call(app, "POST", "/v2/models/resnet/infer").json() == {"model": "resnet", "version": None}
    assert _call(app, "POST", "/v2/models/resnet/versions/1/infer").json() == {"model": "resnet", "version": "1"}
    assert seen == [("infer", "/v2/models/{model_name}/infer", "resnet", None),
                    ("infer", "/v2/models/{model_name}/versions/{model_version}/infer", "resnet", "1")]


def test_an_endpoints_exception_is_a_json_500(caplog):
    app, _ = _app()
    answer = _call(app, "POST", "/v1/preprocess", headers={"x-fail": "1"})
    assert answer.status_code == 500 and answer.json() == {"error": "internal server error"}
    assert "a bug in the endpoint" in caplog.text  # the traceback is the operator's, in the log


def test_other_methods_and_paths_go_to_the_router():
    app, seen = _app()
    assert _call(app, "GET", "/v1/preprocess").json() == {"use": "POST"}
    assert _call(app, "POST", "/v2/models/resnet/infer/extra").status_code == 404
    assert _call(app, "POST", "/v2/models/a/b/infer").status_code == 404  # a name holds no "/"
    assert seen == [("routed",), ("router", "GET")]
