"""minddata.dataset._s3, the S3 client: SigV4 signatures against AWS's published examples, against
botocore's signer and against a server that checks them (moto with IAM checks on); connections kept,
closed under it, proxied and over TLS, against real local servers."""

from __future__ import annotations

import datetime
import http.server
import json
import os
import subprocess
import sys
import urllib.parse
import urllib.request

import pytest
from hypothesis import given, settings
from hypothesis import strategies as strat
from s3kit import SECRET, options
from testkit import local_http_server

import minddata as md
from minddata.bench.s3server import MotoServer
from minddata.dataset import _s3
from minddata.dataset import _storage as st

EXAMPLE = _s3.Credentials("AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
EXAMPLE_TIME = datetime.datetime(2013, 5, 24, tzinfo=datetime.timezone.utc)
EXAMPLE_HOST = "examplebucket.s3.amazonaws.com"


def _signature(headers: dict[str, str]) -> str:
    return headers["Authorization"].rsplit("Signature=", 1)[1]


# The four examples of "Signature Calculations for the Authorization Header: Transferring Payload in
# a Single Chunk" (Amazon S3 API reference): (method, path, query, headers, payload hash, signature).
AWS_EXAMPLES = {
    "GET Object": ("GET", "/test.txt", [], {"range": "bytes=0-9"}, _s3.EMPTY_SHA256,
                   "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"),
    "PUT Object": ("PUT", "/test%24file.text", [],
                   {"date": "Fri, 24 May 2013 00:00:00 GMT", "x-amz-storage-class": "REDUCED_REDUNDANCY"},
                   "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072",
                   "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd"),
    "GET Bucket Lifecycle": ("GET", "/", [("lifecycle", "")], {}, _s3.EMPTY_SHA256,
                             "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543"),
    "GET Bucket (List Objects)": ("GET", "/", [("max-keys", "2"), ("prefix", "J")], {}, _s3.EMPTY_SHA256,
                                  "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7"),
}


@pytest.mark.parametrize("name", sorted(AWS_EXAMPLES))
def test_signatures_equal_the_s3_documentations_examples(name):
    method, path, query, headers, payload, want = AWS_EXAMPLES[name]
    signed = _s3.sign(method, path, _s3.canonical_query(query), {"host": EXAMPLE_HOST, **headers}, EXAMPLE,
                      "us-east-1", EXAMPLE_TIME, payload)
    assert _signature(signed) == want


_key_text = strat.text(strat.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=40)


@settings(max_examples=150, deadline=None)
@given(key=_key_text, query=strat.lists(strat.tuples(_key_text, strat.text(max_size=12)), max_size=3),
       start=strat.integers(0, 10**9), token=strat.one_of(strat.none(), strat.text("abcXYZ+/=09", min_size=1)),
       region=strat.sampled_from(["us-east-1", "eu-west-1", "auto", "cn-north-1"]),
       when=strat.datetimes(min_value=datetime.datetime(2000, 1, 1), max_value=datetime.datetime(2099, 1, 1)))
def test_signatures_equal_botocores_for_any_key_query_range_and_token(key, query, start, token, region, when):
    from botocore.auth import S3SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    client = _s3.Client("http://127.0.0.1:9", region, lambda: None)
    _, host, port, path, _ = client._address("bucket", key)
    query_text = _s3.canonical_query(query)
    when = when.replace(tzinfo=datetime.timezone.utc)
    headers = {"host": f"{host}:{port}", "range": f"bytes={start}-"}
    ours = _s3.sign("GET", path, query_text, headers, _s3.Credentials("AKIDEXAMPLE", "se/cret+KEY", token),
                    region, when)
    request = AWSRequest(method="GET", url=f"http://{host}:{port}{path}" + (f"?{query_text}" if query_text else ""),
                         headers={k: v for k, v in ours.items() if k != "Authorization"})
    request.context["timestamp"] = ours["x-amz-date"]
    auth = S3SigV4Auth(Credentials("AKIDEXAMPLE", "se/cret+KEY", token), "s3", region)
    theirs = auth.signature(auth.string_to_sign(request, auth.canonical_request(request)), request)
    assert _signature(ours) == theirs


# -- a server that checks every signature -----------------------------------------------------------

ODD_KEYS = ["odd/a b+c%d.bin", "odd/ü/é.bin", "odd/semi;colon=eq&amp.bin", "odd/~tilde*star(1).bin"]


@pytest.fixture(scope="module")
def checking_server(tmp_path_factory):
    """moto's S3 server with IAM checks on: (endpoint, access key id, secret) of a user allowed s3:*,
    whose bucket ``checked`` holds ODD_KEYS. Checks start after the setup (moto's reset-auth)."""
    import botocore.session

    log = tmp_path_factory.mktemp("moto-iam") / "server.log"
    with MotoServer(max_lifetime_s=900, log_path=str(log)) as server:
        setup = {"endpoint_url": server.url, "region_name": "us-east-1", "aws_access_key_id": "AKIDSETUP",
                 "aws_secret_access_key": "setup"}
        session = botocore.session.get_session()
        iam, s3 = session.create_client("iam", **setup), session.create_client("s3", **setup)
        iam.create_user(UserName="reader")
        policy = iam.create_policy(PolicyName="s3-all", PolicyDocument=json.dumps({
            "Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}))
        iam.attach_user_policy(UserName="reader", PolicyArn=policy["Policy"]["Arn"])
        key = iam.create_access_key(UserName="reader")["AccessKey"]
        s3.create_bucket(Bucket="checked")
        for i, name in enumerate(ODD_KEYS):
            s3.put_object(Bucket="checked", Key=name, Body=bytes([i]) * 1000)
        request = urllib.request.Request(server.url + "/moto-api/reset-auth", data=b"0", method="POST",
                                         headers={"Content-Type": "text/plain"})
        with urllib.request.urlopen(request, timeout=10):
            pass  # from now on every request's signature is checked
        yield server.url, key["AccessKeyId"], key["SecretAccessKey"]


def _checked_store(endpoint: str, key_id: str, secret: str) -> st.ObjectStore:
    return st.ObjectStore("s3", st.StorageOptions("test", options(endpoint, access_key_id=key_id,
                                                                 secret_access_key=secret)))


def test_a_signature_checking_server_answers_every_call(checking_server):
    store = _checked_store(*checking_server)
    listed = store.list(st.split_url("s3://checked/odd/"))
    assert listed == sorted((name, 1000) for name in ODD_KEYS)
    for i, name in enumerate(ODD_KEYS):
        url = st.split_url(f"s3://checked/{name}")
        assert store.size(url) == 1000
        assert store.read(url) == bytes([i]) * 1000 and store.read(url, 10, 20) == bytes([i]) * 10
    marker = st.split_url("s3://checked/sync/ready 0.txt")
    store.write(marker, b"ready\n")
    assert store.read(marker) == b"ready\n"


def test_a_wrong_secret_is_named_not_retried_and_not_shown(checking_server):
    endpoint, key_id, _ = checking_server
    store = _checked_store(endpoint, key_id, SECRET)
    with pytest.raises(st.StorageError) as info:
        store.read(st.split_url(f"s3://checked/{ODD_KEYS[0]}"))
    text = str(info.value)
    assert info.value.status == 403 and info.value.attempts == 1
    assert "SignatureDoesNotMatch" in text and "the access key or secret is wrong" in text and SECRET not in text


def test_a_wrong_secret_on_a_single_objects_size_is_named_as_such(checking_server):
    # a HEAD's 403 has no body, so no error code: one GET of a byte learns it
    endpoint, key_id, _ = checking_server
    store = _checked_store(endpoint, key_id, SECRET)
    with pytest.raises(st.StorageError) as info:
        store.size(st.split_url(f"s3://checked/{ODD_KEYS[0]}"))
    text = str(info.value)
    assert "SignatureDoesNotMatch" in text and "the access key or secret is wrong" in text, text
    assert "grant s3:GetObject" not in text and SECRET not in text and info.value.attempts == 1


def test_an_unknown_key_id_on_a_single_objects_size_is_named_as_such(checking_server):
    endpoint, _, _ = checking_server
    with pytest.raises(st.StorageError) as info:
        md.TextFileDataset(f"s3://checked/{ODD_KEYS[0]}", storage_options=options(
            endpoint, access_key_id="AKIDNOSUCHKEY", secret_access_key=SECRET))
    text = str(info.value)
    assert "InvalidAccessKeyId" in text and "the access key or secret is wrong" in text, text
    assert SECRET not in text and info.value.attempts == 1


def test_a_key_pair_in_the_environment_reads_without_importing_botocore(checking_server):
    # botocore's import and client cost ~0.2 s of CPU in each process that reads; a key pair needs neither
    endpoint, key_id, secret = checking_server
    script = ("import sys\nfrom minddata.dataset import _storage as st\n"
              f"store = st.ObjectStore('s3', st.StorageOptions('test', {{'endpoint_url': {endpoint!r}}}))\n"
              f"assert store.read(st.split_url('s3://checked/{ODD_KEYS[1]}')) == bytes([1]) * 1000\n"
              "print('botocore' in sys.modules)\n")
    env = dict(os.environ, AWS_ACCESS_KEY_ID=key_id, AWS_SECRET_ACCESS_KEY=secret)
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


# -- connections, against small local servers ---------------------------------------------------


class _Answering(http.server.BaseHTTPRequestHandler):
    """Answers every GET with ``BODY``; counts requests and connections (class attributes)."""

    protocol_version = "HTTP/1.1"
    BODY = b"object bytes"
    requests: list[tuple[str, str, str]] = []
    connections = 0
    close_after_answer = False

    def setup(self) -> None:
        super().setup()
        type(self).connections += 1

    def log_message(self, *args: object) -> None:
        pass

    def answer(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        type(self).requests.append((self.command, self.path, self.headers.get("Authorization", "")))
        self.answer(200, self.BODY)
        # gone without a "Connection: close": the client finds out when it reuses the connection
        self.close_connection = self.close_after_answer


def _handler(**attributes: object) -> type:
    return type("Handler", (_Answering,), {"requests": [], "connections": 0, **attributes})


def test_a_kept_connection_the_server_closed_is_asked_again_on_a_new_one_at_once():
    handler = _handler(close_after_answer=True)
    with local_http_server(handler) as port:
        client = _s3.Client(f"http://127.0.0.1:{port}", "us-east-1", lambda: None)
        for _ in range(4):
            assert client.get("b", "k").read() == _Answering.BODY
        client.close()
    assert len(handler.requests) == 4 and handler.connections == 4  # each GET once, on a connection of its own


def test_connections_are_kept_between_requests():
    handler = _handler()
    with local_http_server(handler) as port:
        client = _s3.Client(f"http://127.0.0.1:{port}", "us-east-1", lambda: None)
        for _ in range(4):
            body = client.get("b", "k")
            assert body.read() == _Answering.BODY
            body.close()
        client.close()
    assert len(handler.requests) == 4 and handler.connections == 1


class _RegionRedirects(_Answering):
    """S3 on AWS for a bucket in eu-west-1: a request signed for another region gets a 301 naming it."""

    def do_GET(self) -> None:
        authorization = self.headers.get("Authorization", "")
        type(self).requests.append((self.command, self.path, authorization))
        if "/eu-west-1/s3/" in authorization:
            self.answer(200, self.BODY)
        else:
            self.answer(301, b"<Error><Code>PermanentRedirect</Code><Message>use the bucket's endpoint</Message></Error>",
                        {"x-amz-bucket-region": "eu-west-1", "Content-Type": "application/xml"})


def test_a_bucket_in_another_region_is_asked_again_there_once_and_remembered():
    handler = type("Handler", (_RegionRedirects,), {"requests": [], "connections": 0})

    class OnThisMachine(_s3.Client):  # AWS's addressing (no endpoint), sent to the local server
        def _address(self, bucket: str, key: str | None) -> tuple[str, str, int, str, str]:
            return "http", "127.0.0.1", port, f"/{key}", self._bucket_regions.get(bucket, self.region)

    with local_http_server(handler) as port:
        client = OnThisMachine(None, "us-east-1", lambda: _s3.Credentials("AKID", "secret"))
        assert client.get("far", "a.bin").read() == _Answering.BODY
        assert client.get("far", "b.bin").read() == _Answering.BODY
        client.close()
    scopes = [auth.split("Credential=")[1].split(",")[0].split("/")[2] for _, _, auth in handler.requests]
    assert scopes == ["us-east-1", "eu-west-1", "eu-west-1"]


def test_aws_addresses_are_virtual_hosted_where_the_bucket_is_a_dns_label():
    client = _s3.Client(None, "eu-central-1", lambda: None)
    assert client._address("my-bucket", "a b/c.tar")[:4] == ("https", "my-bucket.s3.eu-central-1.amazonaws.com", 443,
                                                               "/a%20b/c.tar")
    assert client._address("my.dotted.bucket", "k")[:4] == ("https", "s3.eu-central-1.amazonaws.com", 443,
                                                             "/my.dotted.bucket/k")
    behind = _s3.Client("https://gateway.example:8443/s3/", "us-east-1", lambda: None)
    assert behind._address("b", "k")[:4] == ("https", "gateway.example", 8443, "/s3/b/k")


class _ForwardProxy(http.server.BaseHTTPRequestHandler):
    """A plain-HTTP forward proxy to the S3 server: takes absolute URLs, records them."""

    protocol_version = "HTTP/1.1"
    seen: list[str] = []

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        type(self).seen.append((self.path, self.headers.get("Proxy-Authorization")))
        target = urllib.parse.urlsplit(self.path)
        import http.client

        upstream = http.client.HTTPConnection(target.hostname, target.port, timeout=30)
        try:
            upstream.request("GET", target.path + (f"?{target.query}" if target.query else ""),
                             headers={k: v for k, v in self.headers.items()
                                      if k.lower() not in ("proxy-connection", "proxy-authorization")})
            response = upstream.getresponse()
            body = response.read()
            self.send_response(response.status)
            for name, value in response.getheaders():
                if name.lower() not in ("content-length", "transfer-encoding", "connection"):
                    self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        finally:
            upstream.close()


class _TunnelProxy(http.server.BaseHTTPRequestHandler):
    """An HTTPS proxy: CONNECT host:port, then bytes relayed both ways; records the CONNECTs."""

    protocol_version = "HTTP/1.1"
    seen: list[tuple[str, str | None]] = []

    def log_message(self, *args: object) -> None:
        pass

    def do_CONNECT(self) -> None:
        import select
        import socket

        type(self).seen.append((self.path, self.headers.get("Proxy-Authorization")))
        host, _, port = self.path.rpartition(":")
        with socket.create_connection((host, int(port)), timeout=10) as upstream:
            self.send_response(200, "Connection established")
            self.end_headers()
            ends = [self.connection, upstream]
            while True:
                ready, _, _ = select.select(ends, [], [], 10)
                if not ready:
                    return
                for end in ready:
                    data = end.recv(1 << 16)
                    if not data:
                        return
                    (upstream if end is self.connection else self.connection).sendall(data)


def test_https_proxy_tunnels_to_the_endpoint(self_signed, monkeypatch):
    monkeypatch.setenv("AWS_CA_BUNDLE", self_signed[0])
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    handler = _handler()
    proxy = type("Tunnel", (_TunnelProxy,), {"seen": []})
    with local_http_server(handler, tls=_tls_server_context(self_signed)) as port, local_http_server(proxy) as proxy_port:
        monkeypatch.setenv("HTTPS_PROXY", f"http://reader:secret@127.0.0.1:{proxy_port}")
        store = st.ObjectStore("s3", st.StorageOptions("test", options(f"https://127.0.0.1:{port}")))
        assert store.read(st.split_url("s3://b/k")) == _Answering.BODY
        store.client().close()
    assert proxy.seen == [(f"127.0.0.1:{port}", "Basic cmVhZGVyOnNlY3JldA==")]  # reader:secret
    assert handler.requests[0][:2] == ("GET", "/b/k")


def test_http_proxy_from_the_environment_carries_the_requests(s3_server, s3_client, monkeypatch):
    s3_client.put_object(Bucket="data", Key="proxied/x.bin", Body=b"through the proxy")
    handler = type("Proxy", (_ForwardProxy,), {"seen": []})
    with local_http_server(handler) as port:
        monkeypatch.setenv("HTTP_PROXY", f"http://reader:p%40ss@127.0.0.1:{port}")
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        store = st.ObjectStore("s3", st.StorageOptions("test", options(s3_server)))
        assert store.read(st.split_url("s3://data/proxied/x.bin")) == b"through the proxy"
        store.client().close()
    assert handler.seen == [(f"http://127.0.0.1:{s3_server}/data/proxied/x.bin", "Basic cmVhZGVyOnBAc3M=")]  # reader:p@ss


@pytest.fixture(scope="module")
def self_signed(tmp_path_factory):
    """(certificate file, key file) of a self-signed certificate for 127.0.0.1."""
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
            .sign(key, hashes.SHA256()))
    folder = tmp_path_factory.mktemp("tls")
    cert_file, key_file = folder / "cert.pem", folder / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return str(cert_file), str(key_file)


def _tls_server_context(self_signed):
    import ssl

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(*self_signed)
    return context


def test_an_untrusted_certificate_is_named_with_the_fix_and_not_retried(self_signed):
    handler = _handler()
    with local_http_server(handler, tls=_tls_server_context(self_signed)) as port:
        store = st.ObjectStore("s3", st.StorageOptions("test", options(f"https://127.0.0.1:{port}")))
        with pytest.raises(st.StorageError) as info:
            store.read(st.split_url("s3://b/k"))
    assert info.value.attempts == 1 and "certificate" in str(info.value) and "AWS_CA_BUNDLE" in str(info.value)


def test_aws_ca_bundle_is_trusted(self_signed, monkeypatch):
    monkeypatch.setenv("AWS_CA_BUNDLE", self_signed[0])
    handler = _handler()
    with local_http_server(handler, tls=_tls_server_context(self_signed)) as port:
        store = st.get_store(st.split_url("s3://b/k"), st.StorageOptions("test", options(f"https://127.0.0.1:{port}")))
        assert store.read(st.split_url("s3://b/k")) == _Answering.BODY
        store.client().close()
    assert len(handler.requests) == 1 and "AWS4-HMAC-SHA256 Credential=" in handler.requests[0][2]


def test_a_profile_in_the_credential_file_signs_through_botocores_chain(checking_server, tmp_path, monkeypatch):
    endpoint, key_id, secret = checking_server
    credentials = tmp_path / "credentials"
    credentials.write_text(f"[reader]\naws_access_key_id = {key_id}\naws_secret_access_key = {secret}\n")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(credentials))
    store = st.ObjectStore("s3", st.StorageOptions("test", options(endpoint, profile="reader")))
    assert store.read(st.split_url(f"s3://checked/{ODD_KEYS[2]}"), 0, 4) == bytes([2]) * 4


def test_no_credentials_anywhere_is_named_with_the_fix_and_not_retried(s3_server, monkeypatch):
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    store = st.ObjectStore("s3", st.StorageOptions("test", options(s3_server)))
    with pytest.raises(st.StorageError) as info:
        store.read(st.split_url("s3://data/x.bin"))
    assert info.value.attempts == 1 and "no credentials found" in str(info.value)
    assert "AWS_ACCESS_KEY_ID" in str(info.value)


def test_anonymous_requests_carry_no_signature():
    handler = _handler()
    with local_http_server(handler) as port:
        store = st.ObjectStore("s3", st.StorageOptions("test", options(f"http://127.0.0.1:{port}", anon=True)))
        assert store.read(st.split_url("s3://public/k")) == _Answering.BODY
        store.client().close()
    assert handler.requests == [("GET", "/public/k", "")]


def test_a_server_that_ignores_ranges_is_named_and_not_retried():
    handler = _handler()  # answers every GET 200 with the whole body, Range or not
    with local_http_server(handler) as port:
        store = st.ObjectStore("s3", st.StorageOptions("test", options(f"http://127.0.0.1:{port}")))
        with pytest.raises(st.StorageError) as info:
            store.read(st.split_url("s3://b/k"), 2, 6)
        assert store.read(st.split_url("s3://b/k")) == _Answering.BODY  # a whole read needs no range
        store.client().close()
    assert info.value.attempts == 1 and "ignores byte ranges" in str(info.value)


def test_without_botocore_a_missing_key_pair_says_what_to_install(s3_server, monkeypatch):
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    monkeypatch.setitem(sys.modules, "botocore", None)  # an import of it now fails, as where it is not installed
    monkeypatch.setitem(sys.modules, "botocore.session", None)
    store = st.ObjectStore("s3", st.StorageOptions("test", options(s3_server)))
    with pytest.raises(st.StorageError) as info:
        store.read(st.split_url("s3://data/x.bin"))
    assert "pip install 'minddata[storage]'" in str(info.value) and info.value.attempts == 1


def test_a_key_pair_reads_without_botocore(s3_server, s3_client, monkeypatch):
    s3_client.put_object(Bucket="data", Key="plain/x.bin", Body=b"no botocore needed")
    monkeypatch.setitem(sys.modules, "botocore", None)
    monkeypatch.setitem(sys.modules, "botocore.session", None)
    store = st.ObjectStore("s3", st.StorageOptions("test", options(s3_server)))
    assert store.read(st.split_url("s3://data/plain/x.bin")) == b"no botocore needed"
    assert store.list(st.split_url("s3://data/plain/")) == [("plain/x.bin", 18)]


class _Listing(_Answering):
    """ListObjectsV2 in two pages (S3's XML, keys URL-encoded as asked): the continuation token leads
    from the first to the second."""

    PAGES = {
        "": ('<Contents><Key>p/a%20b.tar</Key><Size>3</Size><ETag>"e1"</ETag></Contents>'
             '<Contents><Key>p/c%2Bd.tar</Key><Size>4</Size><ETag>"e2"</ETag></Contents>'
             "<IsTruncated>true</IsTruncated><NextContinuationToken>tok/1=</NextContinuationToken>"),
        "tok/1=": '<Contents><Key>p/%C3%A9.tar</Key><Size>5</Size></Contents><IsTruncated>false</IsTruncated>',
    }

    fail_second_page = 0  # how many times the second page is answered 503 SlowDown first

    def do_GET(self) -> None:
        query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(self.path).query, keep_blank_values=True))
        type(self).requests.append((self.command, self.path, self.headers.get("Authorization", "")))
        token = query.get("continuation-token", "")
        if token and type(self).fail_second_page > 0:
            type(self).fail_second_page -= 1
            self.answer(503, b"<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>")
            return
        page = self.PAGES[token]
        body = ('<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
                f"<Name>b</Name><Prefix>{query['prefix']}</Prefix><EncodingType>url</EncodingType>{page}"
                "</ListBucketResult>").encode()
        self.answer(200, body, {"Content-Type": "application/xml"})


def test_a_listing_follows_every_page_and_decodes_the_keys():
    handler = type("Handler", (_Listing,), {"requests": [], "connections": 0})
    with local_http_server(handler) as port:
        client = _s3.Client(f"http://127.0.0.1:{port}", "us-east-1", lambda: _s3.Credentials("AKID", "secret"))
        listed = client.list("b", "p/")
        client.close()
    assert listed == [("p/a b.tar", 3, '"e1"'), ("p/c+d.tar", 4, '"e2"'), ("p/é.tar", 5, None)]
    assert [urllib.parse.parse_qs(urllib.parse.urlsplit(path).query).get("continuation-token")
            for _, path, _ in handler.requests] == [None, ["tok/1="]]


def test_a_listing_retries_a_failed_page_alone():
    handler = type("Handler", (_Listing,), {"requests": [], "connections": 0, "fail_second_page": 2})
    with local_http_server(handler) as port:
        store = st.ObjectStore("s3", st.StorageOptions("test", options(f"http://127.0.0.1:{port}")))
        assert store.list(st.split_url("s3://b/p/")) == [("p/a b.tar", 3), ("p/c+d.tar", 4), ("p/é.tar", 5)]
        store.client().close()
    tokens = [urllib.parse.parse_qs(urllib.parse.urlsplit(path).query).get("continuation-token")
              for _, path, _ in handler.requests]
    assert tokens == [None, ["tok/1="], ["tok/1="], ["tok/1="]]  # the first page once, the second until answered
