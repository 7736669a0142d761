"""Where a store's endpoint and signing region come from, as botocore finds them: storage_options,
the environment, the AWS config file's profile (its ``region``, its ``endpoint_url``, its services
section), and the region an endpoint's host names (AWS's regional endpoints, Huawei OBS's).

Config files are temporary files; a request goes to moto or to a small recording server, both on
127.0.0.1. A test that expects an endpoint checks it before any request, so a resolution that found
none fails there rather than reaching AWS's public endpoint.
"""

from __future__ import annotations

import contextlib
import http.server
import urllib.parse

import pytest
from s3kit import NOWHERE, SECRET, options
from testkit import local_http_server

import minddata as md
from minddata.dataset import _s3
from minddata.dataset import _storage as st


@pytest.fixture
def no_region(monkeypatch):
    """No region in the environment (the storage fixtures set AWS_DEFAULT_REGION)."""
    for name in ("AWS_REGION", "AWS_DEFAULT_REGION"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def aws_config(tmp_path, monkeypatch):
    """Write the AWS config file (``AWS_CONFIG_FILE``) with the text given."""
    path = tmp_path / "aws-config"
    monkeypatch.setenv("AWS_CONFIG_FILE", str(path))
    return lambda text: path.write_text(text)


def _store(scheme="s3", **given):
    return st.ObjectStore(scheme, st.StorageOptions("test", given))


class _Recording(http.server.BaseHTTPRequestHandler):
    """Answers every GET with BODY and records each request's SigV4 scope region and Host."""

    protocol_version = "HTTP/1.1"
    BODY = b"0123456789"
    seen: list[tuple[str, str]] = []

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        scope = self.headers.get("Authorization", "").split("Credential=")[1].split(",")[0]
        type(self).seen.append((scope.split("/")[2], self.headers.get("Host", "")))
        self.send_response(200)
        self.send_header("Content-Length", str(len(self.BODY)))
        self.end_headers()
        self.wfile.write(self.BODY)


@contextlib.contextmanager
def _recording_server():
    handler = type("Recording", (_Recording,), {"seen": []})
    with local_http_server(handler) as port:
        yield f"http://127.0.0.1:{port}", handler.seen


# -- the signing region ---------------------------------------------------------------------------


def test_with_an_endpoint_set_requests_are_signed_for_the_profiles_region(no_region, aws_config, monkeypatch):
    aws_config("[default]\nregion = eu-west-1\n")
    with _recording_server() as (endpoint, seen):
        monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
        store = _store()
        assert store.read(st.split_url("s3://b/k")) == _Recording.BODY
        store.client().close()
    assert [region for region, _ in seen] == ["eu-west-1"]


def test_the_named_profiles_region_is_read(no_region, aws_config):
    aws_config("[default]\nregion = eu-west-1\n[profile far]\nregion = ap-south-1\n")
    assert _store(endpoint_url=NOWHERE, profile="far").client().region == "ap-south-1"


def test_the_environments_region_wins_over_the_profiles(no_region, aws_config, monkeypatch):
    aws_config("[default]\nregion = eu-west-1\n")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-west-2")
    assert _store(endpoint_url=NOWHERE).client().region == "us-west-2"
    monkeypatch.setenv("AWS_REGION", "ca-central-1")  # AWS_REGION before AWS_DEFAULT_REGION
    assert _store(endpoint_url=NOWHERE).client().region == "ca-central-1"


def test_storage_options_region_wins_over_everything(aws_config, monkeypatch):
    aws_config("[default]\nregion = eu-west-1\n")
    monkeypatch.setenv("AWS_REGION", "ca-central-1")
    store = _store(endpoint_url="https://obs.cn-north-4.myhuaweicloud.com", region="me-south-1")
    assert store.client().region == "me-south-1"


def test_the_profiles_region_wins_over_the_endpoints_host(no_region, aws_config):
    aws_config("[default]\nregion = eu-west-1\n")
    assert _store(endpoint_url="https://s3.us-west-2.amazonaws.com").client().region == "eu-west-1"


@pytest.mark.parametrize(("endpoint", "region"), [
    ("https://s3.eu-west-1.amazonaws.com", "eu-west-1"),
    ("https://s3-eu-west-2.amazonaws.com", "eu-west-2"),
    ("https://my-bucket.s3.ap-southeast-2.amazonaws.com", "ap-southeast-2"),
    ("https://s3.dualstack.us-west-2.amazonaws.com", "us-west-2"),
    ("https://s3.cn-north-1.amazonaws.com.cn", "cn-north-1"),
    ("https://obs.cn-north-4.myhuaweicloud.com", "cn-north-4"),
    ("obs.ap-southeast-1.myhuaweicloud.com", "ap-southeast-1"),
])
def test_a_known_endpoints_host_names_the_region(no_region, endpoint, region):
    assert _s3.endpoint_region(endpoint) == region
    assert _store(endpoint_url=endpoint).client().region == region


@pytest.mark.parametrize("endpoint", [NOWHERE, "https://s3.amazonaws.com", "https://storage.example.com/s3.eu-west-1.amazonaws.com"])
def test_other_endpoints_are_signed_for_us_east_1(no_region, endpoint):
    assert _store(endpoint_url=endpoint).client().region == "us-east-1"


class _ToMoto(http.server.BaseHTTPRequestHandler):
    """A plain-HTTP forward proxy to moto (``PORT``), standing in for a remote S3 API server: records
    each request's host and SigV4 scope region, and forwards it to moto under moto's own host."""

    protocol_version = "HTTP/1.1"
    PORT = 0
    seen: list[tuple[str, str]] = []

    def log_message(self, *args: object) -> None:
        pass

    def _forward(self) -> None:
        import http.client

        target = urllib.parse.urlsplit(self.path)
        scope = self.headers.get("Authorization", "").split("Credential=")[1].split(",")[0]
        type(self).seen.append((target.hostname or "", scope.split("/")[2]))
        upstream = http.client.HTTPConnection("127.0.0.1", self.PORT, timeout=30)
        try:
            headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "proxy-connection")}
            upstream.request(self.command, target.path + (f"?{target.query}" if target.query else ""), headers=headers)
            response = upstream.getresponse()
            body = response.read()
            self.send_response(response.status)
            dropped = ("transfer-encoding", "connection") + (("content-length",) if self.command != "HEAD" else ())
            for name, value in response.getheaders():
                if name.lower() not in dropped:
                    self.send_header(name, value)
            if self.command != "HEAD":  # a HEAD's Content-Length is the object's
                self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        finally:
            upstream.close()

    do_GET = do_HEAD = _forward


def test_obs_mind_dataset_signs_for_the_region_its_server_names(no_region, s3_server, s3_mindrecord, monkeypatch):
    # OBS's S3 API checks the region a request is signed for: the one in its host name
    handler = type("ToMoto", (_ToMoto,), {"seen": [], "PORT": s3_server})
    with local_http_server(handler) as port:  # the requests for obs.cn-north-4... go to the proxy on 127.0.0.1, and from it to moto
        monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{port}")
        for name in ("NO_PROXY", "no_proxy", "http_proxy"):
            monkeypatch.delenv(name, raising=False)
        ds = md.OBSMindDataset(["obs://data/mr/train.mindrecord0", "obs://data/mr/train.mindrecord1"],
                               "http://obs.cn-north-4.myhuaweicloud.com", "AKIDOBS", SECRET, "obs://data/sync/",
                               shuffle=False)
        assert sum(1 for _ in ds.create_tuple_iterator(num_epochs=1)) == 20
    assert handler.seen and set(handler.seen) == {("obs.cn-north-4.myhuaweicloud.com", "cn-north-4")}


# -- the endpoint ---------------------------------------------------------------------------------


def test_the_profiles_endpoint_url_is_the_endpoint(aws_config, s3_server, s3_files, monkeypatch):
    endpoint = f"http://127.0.0.1:{s3_server}"
    aws_config(f"[default]\nregion = us-east-1\n[profile dev]\nendpoint_url = {endpoint}\n")
    monkeypatch.delenv("AWS_ENDPOINT_URL")
    monkeypatch.setenv("AWS_PROFILE", "dev")
    store = _store()
    assert store.endpoint() == endpoint  # before any request: none may go to AWS's public endpoint
    assert store.read(st.split_url("s3://data/files/lines-0.txt")) == (s3_files / "lines-0.txt").read_bytes()


def test_the_profiles_services_section_gives_the_s3_endpoint(aws_config, monkeypatch):
    aws_config("[profile dev]\nendpoint_url = http://127.0.0.1:1\nservices = local\n"
               "[services local]\nsqs =\n  endpoint_url = http://127.0.0.1:2\ns3 =\n  endpoint_url = http://127.0.0.1:3\n")
    monkeypatch.delenv("AWS_ENDPOINT_URL")
    assert _store(profile="dev").endpoint() == "http://127.0.0.1:3"


def test_a_services_section_without_s3_leaves_the_profiles_endpoint(aws_config, monkeypatch):
    aws_config("[profile dev]\nendpoint_url = http://127.0.0.1:1\nservices = local\n"
               "[services local]\nsqs =\n  endpoint_url = http://127.0.0.1:2\n")
    monkeypatch.delenv("AWS_ENDPOINT_URL")
    assert _store(profile="dev").endpoint() == "http://127.0.0.1:1"


def test_the_environments_endpoints_win_over_the_config_files(aws_config, monkeypatch):
    aws_config("[default]\nendpoint_url = http://127.0.0.1:1\n")
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:2")
    assert _store().endpoint() == "http://127.0.0.1:2"
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", "http://127.0.0.1:3")  # the service's own first
    assert _store().endpoint() == "http://127.0.0.1:3"
    assert _store(endpoint_url="http://127.0.0.1:4").endpoint() == "http://127.0.0.1:4"


@pytest.mark.parametrize("switch", ["environment", "profile"])
def test_ignore_configured_endpoint_urls_sets_the_environments_and_the_files_aside(switch, aws_config, monkeypatch):
    setting = "ignore_configured_endpoint_urls = true\n" if switch == "profile" else ""
    aws_config(f"[default]\nendpoint_url = http://127.0.0.1:1\n{setting}")
    if switch == "environment":
        monkeypatch.setenv("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "true")
    assert _store().endpoint() is None  # AWS (no request sent here)
    assert _store(endpoint_url="http://127.0.0.1:4").endpoint() == "http://127.0.0.1:4"  # given: always used


def test_a_gs_store_takes_no_endpoint_or_region_from_the_aws_profile(no_region, aws_config):
    aws_config("[default]\nregion = eu-west-1\nendpoint_url = http://127.0.0.1:1\n")
    store = _store("gs", endpoint_url=NOWHERE)
    assert store.endpoint() == NOWHERE and store.client().region == "us-east-1"


def test_the_store_options_are_still_honoured_with_a_profile(aws_config, s3_server, s3_files, monkeypatch):
    aws_config("[profile dev]\nendpoint_url = http://127.0.0.1:1\n")
    monkeypatch.setenv("AWS_PROFILE", "dev")
    store = st.ObjectStore("s3", st.StorageOptions("test", options(s3_server)))
    assert store.read(st.split_url("s3://data/files/lines-1.txt")) == (s3_files / "lines-1.txt").read_bytes()
