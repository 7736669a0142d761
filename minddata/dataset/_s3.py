"""A lean S3 API client: SigV4-signed requests on connections opened by the standard library's
``http.client``, written and read by :mod:`._http1`.

What the sources need of object storage is five calls (list a prefix, HEAD, GET a range, open a GET
as a stream, PUT a small marker). botocore answers them too, but importing it and building its client
costs ~0.2 s of CPU in every process that reads (its service model, waiters and docs), and each call
another ~0.5 ms of parameter checks, event hooks and response parsing: a pipeline reading a shard per
worker, or an image per GET, pays both on the cores that decode. Here a call is a signed request on a
kept connection.

- Signing: AWS Signature Version 4 in the ``Authorization`` header (:func:`sign`), checked against
  the published examples of the S3 documentation and against botocore's signer in the tests, and
  against a server that verifies signatures (moto with IAM checks on).
- Credentials (:func:`credential_source`): ``storage_options`` keys, else the environment's
  ``AWS_ACCESS_KEY_ID``/``AWS_SECRET_ACCESS_KEY`` (with ``AWS_SESSION_TOKEN``); anything else (a
  profile, the credential files, SSO, a role, the instance's metadata) goes through botocore's own
  credential chain, imported only then, whose temporary credentials refresh themselves.
- Addresses: with an endpoint, path-style ``{endpoint}/{bucket}/{key}`` (S3-compatible servers, GCS);
  on AWS, virtual-hosted ``{bucket}.s3.{region}.amazonaws.com`` (path-style where the bucket's name
  is not a DNS label), following a ``PermanentRedirect`` to the bucket's own region once.
- Connections: kept per host in a pool of ``max_connections`` (a connection the server closed while
  it idled is retried at once on a new one); timeouts for connecting and for each read; proxies from
  ``HTTPS_PROXY``/``HTTP_PROXY``/``NO_PROXY``; TLS verified against ``AWS_CA_BUNDLE`` or certifi's
  bundle where installed (as botocore does), else the system's.

Errors are :class:`S3Error` (the status, S3's error code and message) or the socket's own; the
caller's retry loop decides what is worth another try.
"""

from __future__ import annotations

import datetime
import functools
import hashlib
import hmac
import http.client
import os
import re
import socket
import threading
import urllib.parse
from collections.abc import Callable
from typing import Any, NamedTuple

from minddata.dataset._http1 import Response, send_request

EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()
_ALGORITHM = "AWS4-HMAC-SHA256"
_NAMESPACE = re.compile(r"^\{[^}]*\}")
# A bucket name usable as a host name label over TLS (no dots: a dot breaks the wildcard certificate).
_DNS_BUCKET = re.compile(r"^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$")
# An error body is read up to this much (S3's are < 1 KiB; a proxy's HTML page may be more).
_ERROR_BODY_MAX = 1 << 16
# Codes for answers that have no body (HEAD), by status, as S3 clients name them.
_STATUS_CODES = {301: "PermanentRedirect", 307: "TemporaryRedirect", 400: "BadRequest", 403: "Forbidden",
                 404: "NotFound", 412: "PreconditionFailed", 416: "InvalidRange"}


class S3Error(Exception):
    """An answer other than the one asked for: its HTTP ``status``, S3's error ``code`` and ``message``
    (from the XML body, or named by the status for a HEAD: ``coded`` False, the code then says no
    more than the status), and the ``region`` the server says the bucket is in
    (``x-amz-bucket-region``), if it says."""

    def __init__(self, status: int | None, code: str, message: str = "", region: str | None = None,
                 coded: bool = True):
        # "HTTP 404 NoSuchKey (The specified key does not exist.)"; without a code, the status's phrase:
        # "HTTP 503 Service Unavailable"
        shown = (f"HTTP {status}" if status else "", code, f"({message})" if code and message else message)
        super().__init__(" ".join(p for p in shown if p))
        self.status = status
        self.code = code
        self.message = message
        self.region = region
        self.coded = coded


class HostNotFound(OSError):
    """A host name that does not resolve (``socket.gaierror``): ``host``, and whether the resolver
    said it may resolve later (``temporary``: ``EAI_AGAIN``)."""

    def __init__(self, host: str, error: OSError):
        import socket

        self.host = host
        self.temporary = error.errno == getattr(socket, "EAI_AGAIN", None)
        super().__init__(error.errno, f"cannot resolve host {host!r} ({error.strerror or error})")


class Credentials(NamedTuple):
    access_key: str
    secret_key: str
    token: str | None = None


# -- signing --------------------------------------------------------------------------------------


def _uri_encode(text: str, safe: str = "") -> str:
    """RFC 3986 percent-encoding, as SigV4 wants it: every byte but the unreserved (and ``safe``)."""
    return urllib.parse.quote(text, safe="-_.~" + safe)


@functools.lru_cache(maxsize=64)
def _signing_key(secret: str, date: str, region: str, service: str) -> bytes:
    key = hmac.new(("AWS4" + secret).encode(), date.encode(), hashlib.sha256).digest()
    for part in (region, service, "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    return key


def canonical_query(query: list[tuple[str, str]]) -> str:
    """The query string, encoded and sorted as SigV4 signs it (and as the request sends it)."""
    return "&".join(f"{k}={v}" for k, v in sorted((_uri_encode(k), _uri_encode(v)) for k, v in query))


def sign(method: str, path: str, query: str, headers: dict[str, str], credentials: Credentials, region: str,
         now: datetime.datetime, payload_sha256: str = EMPTY_SHA256, service: str = "s3") -> dict[str, str]:
    """``headers`` with SigV4's ``x-amz-date``, ``x-amz-content-sha256``, the session token (if any)
    and the ``Authorization`` added: every header given is signed (``host`` must be among them).

    ``path`` is the request's path as sent (already percent-encoded; S3 signs it as it is, without
    normalizing it), ``query`` its query string as :func:`canonical_query` writes it.

    >>> creds = Credentials("AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
    >>> signed = sign("GET", "/test.txt", "", {"host": "examplebucket.s3.amazonaws.com", "range": "bytes=0-9"},
    ...               creds, "us-east-1", datetime.datetime(2013, 5, 24, tzinfo=datetime.timezone.utc))
    >>> signed["Authorization"][-64:]
    'f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41'
    """
    stamp = now.strftime("%Y%m%dT%H%M%SZ")
    date = stamp[:8]
    out = {k.lower(): v for k, v in headers.items()}
    out["x-amz-date"] = stamp
    out["x-amz-content-sha256"] = payload_sha256
    if credentials.token:
        out["x-amz-security-token"] = credentials.token
    names = sorted(out)
    canonical_headers = "".join(f"{name}:{' '.join(str(out[name]).split())}\n" for name in names)
    signed_headers = ";".join(names)
    request = "\n".join((method, path, query, canonical_headers, signed_headers, payload_sha256))
    scope = f"{date}/{region}/{service}/aws4_request"
    to_sign = "\n".join((_ALGORITHM, stamp, scope, hashlib.sha256(request.encode()).hexdigest()))
    signature = hmac.new(_signing_key(credentials.secret_key, date, region, service), to_sign.encode(),
                         hashlib.sha256).hexdigest()
    out["Authorization"] = (f"{_ALGORITHM} Credential={credentials.access_key}/{scope}, "
                            f"SignedHeaders={signed_headers}, Signature={signature}")
    return out


# -- credentials ----------------------------------------------------------------------------------


class NoCredentials(Exception):
    """No credentials anywhere the chain looks."""


def credential_source(access_key_id: str | None, secret_access_key: str | None, session_token: str | None,
                      profile: str | None, anon: bool) -> Callable[[], Credentials | None]:
    """What gives each request its credentials (None: unsigned, for public buckets).

    Keys given, or the environment's key pair when no profile is named, are used as they are; anything
    else asks botocore's credential chain (credential files, SSO, roles, the metadata service), whose
    temporary credentials refresh themselves before they expire."""
    if anon:
        return lambda: None
    if access_key_id and secret_access_key:
        fixed = Credentials(access_key_id, secret_access_key, session_token)
        return lambda: fixed
    env_id, env_secret = os.environ.get("AWS_ACCESS_KEY_ID"), os.environ.get("AWS_SECRET_ACCESS_KEY")
    if not profile and not os.environ.get("AWS_PROFILE") and env_id and env_secret:
        fixed = Credentials(env_id, env_secret, os.environ.get("AWS_SESSION_TOKEN") or None)
        return lambda: fixed
    return _CredentialChain(profile)


class _CredentialChain:
    """botocore's credential chain, asked on the first request (whose error then names the URL) and
    kept: its temporary credentials refresh themselves before they expire."""

    def __init__(self, profile: str | None):
        from minddata.dataset._loaders import Lazy

        self._profile = profile
        self._found = Lazy(self._resolve)

    def __call__(self) -> Credentials:
        now = self._found.get().get_frozen_credentials()
        return Credentials(now.access_key, now.secret_key, now.token)

    def _resolve(self) -> Any:
        try:
            import botocore.session
        except ImportError:
            raise NoCredentials(
                "no credentials given (storage_options or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY), and reading the "
                "credential files, profiles and roles needs botocore: pip install 'minddata[storage]'"
            ) from None
        try:
            session = botocore.session.Session(profile=self._profile) if self._profile else botocore.session.get_session()
            found = session.get_credentials()
        except Exception as error:  # noqa: BLE001 - a missing profile, a broken credential file or role
            raise NoCredentials(f"the credential chain failed: {type(error).__name__}: {error}") from None
        if found is None:
            raise NoCredentials("no credentials found")
        return found


def _config_file() -> Any:
    """The AWS config file (``AWS_CONFIG_FILE``, else ``~/.aws/config``) parsed; empty if missing or
    broken."""
    import configparser

    parser = configparser.RawConfigParser(strict=False)
    try:
        parser.read(os.path.expanduser(os.environ.get("AWS_CONFIG_FILE") or "~/.aws/config"))
    except (OSError, configparser.Error):
        return configparser.RawConfigParser()
    return parser


def _profile_section(parser: Any, profile: str | None) -> dict[str, str]:
    """The settings of the profile (``profile``, else ``AWS_PROFILE``, else ``default``): the section
    ``[profile NAME]`` (``[default]`` for the default one, as botocore reads them)."""
    name = profile or os.environ.get("AWS_PROFILE") or "default"
    for section in (f"profile {name}", name):
        if parser.has_section(section):
            return {k: v.strip() for k, v in parser.items(section)}
    return {}


def _nested(text: str) -> dict[str, str]:
    """A nested setting's lines (``s3 =`` followed by indented ``name = value`` lines) as a dict."""
    out = {}
    for line in text.splitlines():
        name, equals, value = line.partition("=")
        if equals and name.strip():
            out[name.strip()] = value.strip()
    return out


def profile_region(profile: str | None) -> str | None:
    """The ``region`` of the profile (``profile``, ``AWS_PROFILE``, or ``default``) in the AWS config file, if set."""
    return _profile_section(_config_file(), profile).get("region") or None


def _true(value: str | None) -> bool:
    return (value or "").strip().lower() == "true"


def ignore_configured_endpoints(profile: str | None) -> bool:
    """Whether configured endpoints are off (``AWS_IGNORE_CONFIGURED_ENDPOINT_URLS``, else the profile's
    ``ignore_configured_endpoint_urls``), as botocore reads the switch."""
    given = os.environ.get("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS")
    if given is not None:
        return _true(given)
    return _true(_profile_section(_config_file(), profile).get("ignore_configured_endpoint_urls"))


def profile_endpoint(profile: str | None, service: str = "s3") -> str | None:
    """The endpoint the AWS config file gives ``service`` in the profile, as botocore (1.31 on) reads
    it: the ``endpoint_url`` under ``service =`` in the ``[services NAME]`` section the profile's
    ``services = NAME`` names, else the profile's own ``endpoint_url``; None where neither is set."""
    parser = _config_file()
    scoped = _profile_section(parser, profile)
    services = scoped.get("services")
    if services and parser.has_section(f"services {services}"):
        nested = parser.get(f"services {services}", service, fallback="")
        found = _nested(nested).get("endpoint_url")
        if found:
            return found
    return scoped.get("endpoint_url") or None


# Regions named in endpoint host names: AWS's regional S3 endpoints (``s3.REGION.amazonaws.com``,
# ``s3-REGION.amazonaws.com``, ``BUCKET.s3.REGION.amazonaws.com``, dualstack and FIPS ones) and Huawei
# OBS's (``obs.REGION.myhuaweicloud.com``), whose S3 API checks the region a request is signed for.
_ENDPOINT_REGIONS = (
    re.compile(r"(?:^|\.)s3[.-](?:dualstack\.|fips\.)*(?P<region>[a-z]{2}(?:-[a-z]+)+-\d+)\.amazonaws\.com(?:\.cn)?$"),
    re.compile(r"(?:^|\.)obs\.(?P<region>[a-z]{2}(?:-[a-z]+)+-\d+)\.myhuaweicloud\.[a-z]+$"),
)


def endpoint_region(endpoint: str | None) -> str | None:
    """The region an endpoint's host name says (``https://s3.eu-west-1.amazonaws.com``: ``eu-west-1``;
    ``https://obs.cn-north-4.myhuaweicloud.com``: ``cn-north-4``), or None."""
    if not endpoint:
        return None
    host = urllib.parse.urlsplit(endpoint if "://" in endpoint else f"https://{endpoint}").hostname or ""
    for pattern in _ENDPOINT_REGIONS:
        match = pattern.search(host.lower())
        if match:
            return match.group("region")
    return None


# -- connections ----------------------------------------------------------------------------------


def _tls_context() -> Any:
    return _tls_context_for(os.environ.get("AWS_CA_BUNDLE") or None)


@functools.lru_cache(maxsize=4)
def _tls_context_for(bundle: str | None) -> Any:
    """One context per CA bundle, shared by connections (loading a bundle costs milliseconds)."""
    import ssl

    if bundle is None:
        try:
            import certifi
        except ImportError:
            pass
        else:
            bundle = certifi.where()
    return ssl.create_default_context(cafile=bundle)


class _Connection:
    """One connection: ``http.client`` opened it (TLS, a proxy's tunnel); requests are written to its
    socket and answers read through its buffered reader (:mod:`._http1`), kept with it."""

    __slots__ = ("opened", "sock", "reader")

    def __init__(self, opened: http.client.HTTPConnection):
        assert opened.sock is not None
        self.opened, self.sock = opened, opened.sock
        self.reader = opened.sock.makefile("rb")

    def close(self) -> None:
        self.reader.close()
        self.opened.close()


class _Pool:
    """Kept connections to one ``scheme://host:port``, at most ``size`` idle ones."""

    def __init__(self, scheme: str, host: str, port: int, size: int, connect_timeout: float, read_timeout: float):
        self.scheme, self.host, self.port = scheme, host, port
        self.size = size
        self.connect_timeout, self.read_timeout = connect_timeout, read_timeout
        self._idle: list[_Connection] = []
        self._lock = threading.Lock()
        self.proxy = _proxy_for(scheme, host)

    def take(self) -> tuple[_Connection, bool]:
        """A connection and whether it was kept from an earlier request."""
        with self._lock:
            if self._idle:
                return self._idle.pop(), True
        return self._connect(), False

    def _connect(self) -> _Connection:
        conn: http.client.HTTPConnection
        if self.proxy is not None:
            proxy = self.proxy
            if self.scheme == "https":  # a CONNECT tunnel through the proxy, TLS with the endpoint inside it
                conn = http.client.HTTPSConnection(proxy.host, proxy.port, timeout=self.connect_timeout,
                                                   context=_tls_context())
                tunnel_headers = {"Proxy-Authorization": proxy.authorization} if proxy.authorization else None
                conn.set_tunnel(self.host, self.port, headers=tunnel_headers)
            else:
                conn = http.client.HTTPConnection(proxy.host, proxy.port, timeout=self.connect_timeout)
        elif self.scheme == "https":
            conn = http.client.HTTPSConnection(self.host, self.port, timeout=self.connect_timeout, context=_tls_context())
        else:
            conn = http.client.HTTPConnection(self.host, self.port, timeout=self.connect_timeout)
        try:
            conn.connect()
        except socket.gaierror as error:
            conn.close()
            raise HostNotFound(self.proxy.host if self.proxy is not None else self.host, error) from None
        assert conn.sock is not None
        conn.sock.settimeout(self.read_timeout)  # connecting had its own limit; each read has this one
        return _Connection(conn)

    def give_back(self, conn: _Connection) -> None:
        with self._lock:
            if len(self._idle) < self.size:
                self._idle.append(conn)
                return
        conn.close()

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()


class _Proxy(NamedTuple):
    host: str
    port: int
    authorization: str | None  # a Proxy-Authorization value, from the proxy URL's user and password


def _proxy_for(scheme: str, host: str) -> _Proxy | None:
    """The proxy the environment names for ``scheme://host`` (``HTTPS_PROXY``/``HTTP_PROXY``, unless
    ``NO_PROXY`` covers the host), or None."""
    import base64
    import urllib.request

    proxy = urllib.request.getproxies().get(scheme)
    if not proxy or urllib.request.proxy_bypass(host):
        return None
    parts = urllib.parse.urlsplit(proxy if "://" in proxy else f"http://{proxy}")
    authorization = None
    if parts.username is not None:
        user = f"{urllib.parse.unquote(parts.username)}:{urllib.parse.unquote(parts.password or '')}"
        authorization = "Basic " + base64.b64encode(user.encode()).decode()
    return _Proxy(parts.hostname or "", parts.port or (443 if parts.scheme == "https" else 80), authorization)


class Body:
    """A successful answer's body, read as it arrives: ``read(n)`` (all with no ``n``), ``readinto(buffer)``
    and ``close()``.
    A body read to its end gives its connection back to the pool; one closed early closes it."""

    def __init__(self, response: Response, conn: _Connection, pool: _Pool):
        self._response = response
        self._conn: _Connection | None = conn
        self._pool = pool
        self.length = response.length

    def read(self, n: int | None = None) -> bytes:
        data = self._response.read() if n is None or n < 0 else self._response.read(n)
        if self._response.isclosed():
            self.close()
        return data

    def readinto(self, buffer: Any) -> int:
        got = self._response.readinto(buffer)
        if self._response.isclosed():
            self.close()
        return got

    def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is None:
            return
        if not self._response.isclosed() and self._response.length == 0:
            self._response.read()  # nothing left (a HEAD's answer): marks it done, the connection reusable
        if self._response.isclosed() and not self._response.will_close:
            self._pool.give_back(conn)
        else:
            self._response.close()
            conn.close()


# -- the client -----------------------------------------------------------------------------------


class Client:
    """S3 calls for one endpoint (None: AWS), region and credential source; thread-safe. Make one per
    process (its connections are not shared with a forked child)."""

    def __init__(self, endpoint: str | None, region: str, credentials: Callable[[], Credentials | None], *,
                 max_connections: int = 10, connect_timeout: float = 10.0, read_timeout: float = 30.0):
        self.endpoint = endpoint
        self.region = region
        self.max_connections = max_connections
        self._credentials = credentials
        self._timeouts = (connect_timeout, read_timeout)
        self._pools: dict[tuple[str, str, int], _Pool] = {}
        self._lock = threading.Lock()
        self._bucket_regions: dict[str, str] = {}
        if endpoint is not None:
            parts = urllib.parse.urlsplit(endpoint if "://" in endpoint else f"https://{endpoint}")
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise ValueError(f"the endpoint must be an http:// or https:// URL. Found: {endpoint!r}")
            self._endpoint_parts = (parts.scheme, parts.hostname, parts.port or (443 if parts.scheme == "https" else 80),
                                    parts.path.rstrip("/"))

    def close(self) -> None:
        with self._lock:
            pools, self._pools = list(self._pools.values()), {}
        for pool in pools:
            pool.close()

    # -- addresses

    def _address(self, bucket: str, key: str | None) -> tuple[str, str, int, str, str]:
        """(scheme, host, port, path, region) of ``bucket``/``key`` (``key`` None: the bucket itself)."""
        quoted_key = "" if key is None else _uri_encode(key, safe="/")
        if self.endpoint is not None:
            scheme, host, port, prefix = self._endpoint_parts
            path = f"{prefix}/{_uri_encode(bucket)}" + ("/" + quoted_key if key is not None else "/")
            return scheme, host, port, path, self.region
        region = self._bucket_regions.get(bucket, self.region)
        if _DNS_BUCKET.match(bucket):
            return "https", f"{bucket}.s3.{region}.amazonaws.com", 443, "/" + quoted_key, region
        path = f"/{_uri_encode(bucket)}" + ("/" + quoted_key if key is not None else "/")
        return "https", f"s3.{region}.amazonaws.com", 443, path, region

    def _pool(self, scheme: str, host: str, port: int) -> _Pool:
        key = (scheme, host, port)
        pool = self._pools.get(key)
        if pool is None:
            with self._lock:
                pool = self._pools.get(key)
                if pool is None:
                    pool = self._pools[key] = _Pool(scheme, host, port, self.max_connections, *self._timeouts)
        return pool

    # -- requests

    def request(self, method: str, bucket: str, key: str | None, *, query: list[tuple[str, str]] | None = None,
                headers: dict[str, str] | None = None, body: bytes = b"", expect: tuple[int, ...] = (200,)) -> Body:
        """One signed request; its body (unread) for an ``expect``-ed status, else an :class:`S3Error`.
        A bucket in another region than assumed (AWS) is asked again there, once."""
        for attempt in range(2):
            scheme, host, port, path, region = self._address(bucket, key)
            try:
                return self._send(method, scheme, host, port, path, region, query or [], headers or {}, body, expect)
            except S3Error as error:
                if (attempt == 0 and self.endpoint is None and error.region and error.region != region
                        and error.status in (301, 307, 400)):
                    self._bucket_regions[bucket] = error.region
                    continue
                raise
        raise AssertionError("unreachable")  # pragma: no cover

    def _send(self, method: str, scheme: str, host: str, port: int, path: str, region: str,
              query: list[tuple[str, str]], headers: dict[str, str], body: bytes, expect: tuple[int, ...]) -> Body:
        pool = self._pool(scheme, host, port)
        query_text = canonical_query(query)
        target = path + ("?" + query_text if query_text else "")
        plain_proxy = pool.proxy if scheme == "http" else None
        if plain_proxy is not None:
            target = f"http://{host}:{port}{target}"  # a plain-HTTP proxy takes the absolute URL
        fields = {"host": host if port == (443 if scheme == "https" else 80) else f"{host}:{port}", **headers}
        if body:
            fields["content-length"] = str(len(body))
        credentials = self._credentials()
        if credentials is not None:
            payload = hashlib.sha256(body).hexdigest() if body else EMPTY_SHA256
            fields = sign(method, path, query_text, fields, credentials, region,
                          datetime.datetime.now(datetime.timezone.utc), payload)
        if plain_proxy is not None and plain_proxy.authorization:  # for the proxy, not signed
            fields = {**fields, "Proxy-Authorization": plain_proxy.authorization}
        while True:
            conn, kept = pool.take()
            try:
                send_request(conn.sock, method, target, fields, body)
                response = Response(conn.reader, method)
                break
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                conn.close()
                if not kept:
                    raise
                # a kept connection the server closed while it idled: again on a new one, at once
            except BaseException:
                conn.close()
                raise
        if response.status in expect:
            return Body(response, conn, pool)
        raise self._error(response, conn, pool, method)

    @staticmethod
    def _error(response: Response, conn: _Connection, pool: _Pool,
               method: str) -> S3Error:
        status = response.status
        region = response.getheader("x-amz-bucket-region")
        text = ""
        try:
            if method != "HEAD":
                text = response.read(_ERROR_BODY_MAX).decode("utf-8", "replace")
        except (OSError, http.client.HTTPException):
            pass
        finally:
            Body(response, conn, pool).close()
        code = _xml_text(text, "Code")
        if region is None:
            region = _xml_text(text, "Region")
        if code is None:  # no body (a HEAD), or not S3's: named by the status
            return S3Error(status, _STATUS_CODES.get(status, ""), "" if status in _STATUS_CODES else response.reason,
                           region, coded=False)
        return S3Error(status, code, _xml_text(text, "Message") or "", region)

    # -- the calls

    def get(self, bucket: str, key: str, start: int = 0, end: int | None = None, ranged: bool | None = None) -> Body:
        """GET bytes ``[start, end)`` (to the object's end with ``end`` None) as a body to read; a
        ranged GET (206) unless it is the whole object and ``ranged`` is not True."""
        ranged = bool(start) or end is not None if ranged is None else ranged
        headers = {"range": f"bytes={start}-{'' if end is None else end - 1}"} if ranged else {}
        body = self.request("GET", bucket, key, headers=headers, expect=(200, 206) if ranged else (200,))
        if ranged and body._response.status == 200 and (start or end is not None):
            body.close()  # the whole object, to a ranged GET: these are not the bytes asked for
            raise S3Error(200, "RangeIgnored", "the server answered a ranged GET with the whole object")
        return body

    def head(self, bucket: str, key: str, explain: tuple[int, ...] = (400, 403, 404)) -> dict[str, str]:
        """The object's headers (lower-case names): ``content-length``, ``etag``, ...

        A HEAD's error has no body, so no S3 error code: a wrong secret, an unknown key id, a missing
        bucket and a missing object are all a bare 403 or 404. For those statuses (``explain``) one GET
        of the object's first byte learns the code, as other S3 clients do, and its error is raised."""
        try:
            body = self.request("HEAD", bucket, key)
        except S3Error as error:
            if error.coded or error.status not in explain:
                raise
            raise self._explained(bucket, key, error) from None
        headers = {k.lower(): v for k, v in body._response.getheaders()}
        body.close()
        return headers

    def _explained(self, bucket: str, key: str, error: S3Error) -> S3Error:
        """The error of a GET of ``key``'s first byte where its HEAD failed with ``error`` (no code):
        the GET's, if it names one of the same kind (a 4xx with a code), else ``error``."""
        try:
            self.get(bucket, key, 0, 1).close()
        except S3Error as answer:
            if answer.coded and answer.status is not None and 400 <= answer.status < 500 and answer.status != 416:
                return answer
        return error

    def put(self, bucket: str, key: str, data: bytes) -> None:
        self.request("PUT", bucket, key, body=data).read()

    def list(self, bucket: str, prefix: str) -> list[tuple[str, int, str | None]]:
        """(key, size, ETag) of every object under ``prefix``, in the order listed (all pages)."""
        found: list[tuple[str, int, str | None]] = []
        token: str | None = None
        while True:
            page, token = self.list_page(bucket, prefix, token)
            found.extend(page)
            if token is None:
                return found

    def list_page(self, bucket: str, prefix: str, token: str | None = None) -> tuple[list[tuple[str, int, str | None]], str | None]:
        """One page of ListObjectsV2: (key, size, ETag) of its objects, and the token of the next page
        (None after the last). A caller that retries does so page by page, not from the first."""
        import xml.etree.ElementTree as ET

        query = [("list-type", "2"), ("prefix", prefix), ("encoding-type", "url")]
        if token:
            query.append(("continuation-token", token))
        root = ET.fromstring(self.request("GET", bucket, None, query=query).read())
        page: list[tuple[str, int, str | None]] = []
        fields: dict[str, str | None] = {}
        for child in root:
            name = _NAMESPACE.sub("", child.tag)
            if name == "Contents":
                item = {_NAMESPACE.sub("", part.tag): part.text or "" for part in child}
                page.append((item.get("Key", ""), int(item.get("Size") or 0), item.get("ETag")))
            else:
                fields[name] = child.text
        if (fields.get("EncodingType") or "").lower() == "url":
            # the keys come percent-encoded ("+" for a space) from a server that honours encoding-type
            page = [(urllib.parse.unquote_plus(k), size, tag) for k, size, tag in page]
        following = fields.get("NextContinuationToken")
        return page, following if (fields.get("IsTruncated") or "").lower() == "true" and following else None


def _xml_text(text: str, tag: str) -> str | None:
    match = re.search(f"<{tag}>([^<]*)</{tag}>", text)
    return match.group(1) if match else None
