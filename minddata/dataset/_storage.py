"""Object storage for sources: ``s3://``, ``gs://``, ``http(s)://`` and ``file://`` next to plain paths.

One place knows URLs, settings, clients and retries; sources ask it to list a prefix (or a glob), to
size an object, and to read an object whole or a byte range of it.

- URLs: :func:`split_url` tells a local path (plain or ``file://``) from a remote URL. ``s3://bucket/key``
  and ``gs://bucket/key`` (Google Cloud Storage through its S3-compatible XML API, with HMAC keys)
  are buckets of objects; ``http(s)://`` URLs are single files (ranged GETs, no listing).
- Settings: :class:`StorageOptions`, from a source's ``storage_options`` dict over the standard
  environment (``AWS_ENDPOINT_URL[_S3]``, ``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``,
  ``AWS_SESSION_TOKEN``, ``AWS_REGION``/``AWS_DEFAULT_REGION``, ``AWS_PROFILE`` and the credential
  files, through botocore's own chain; the config file's profile for the endpoint and the region, as
  botocore reads them: :meth:`ObjectStore.endpoint`, :meth:`ObjectStore.region`). Secrets never appear
  in a repr, an error or a serialized pipeline (:func:`redact_options`), nor do those inside URLs (a
  presigned URL's query, a ``user:password@``: :func:`shown_url`).
- Client: :mod:`minddata.dataset._s3`, SigV4-signed requests on kept connections (framed by
  :mod:`minddata.dataset._http1`; botocore, from
  ``pip install 'minddata[storage]'``, only for credential chains beyond a key pair). Every request goes
  through :meth:`ObjectStore._retrying`, which retries throttling (503 SlowDown, 429), 5xx, resets,
  cut-off bodies and timeouts with exponential backoff and full jitter, bounded in tries
  (``max_attempts``) and time (``retry_time_s``), then raises a :class:`StorageError` naming the URL,
  the status and the number of tries. A read returns the exact bytes asked for or raises, so a retried
  read never loses or duplicates a row.
- Concurrency: :meth:`ObjectStore.read_many` keeps at most ``requests_in_flight`` requests in flight
  for one caller (a worker fetching a chunk of rows), so object latency overlaps.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import fnmatch
import functools
import io
import os
import random
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, NamedTuple

from minddata.engine.readahead import request_pool
from minddata.errors import ArgumentError, MinddataError

__all__ = [
    "StorageError", "StorageOptions", "ObjectStore", "ObjectURL", "RangedFile", "split_url", "is_remote",
    "local_path", "get_store", "redact_options", "refuse_remote", "REMOTE_SCHEMES",
]

REMOTE_SCHEMES = ("s3", "gs", "http", "https")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
REDACTED = "<redacted>"
GCS_ENDPOINT = "https://storage.googleapis.com"

# storage_options keys: canonical name ← accepted spellings (botocore's, s3fs's and obstore's).
_ALIASES = {
    "endpoint_url": ("endpoint_url", "endpoint", "aws_endpoint_url"),
    "access_key_id": ("access_key_id", "aws_access_key_id", "key"),
    "secret_access_key": ("secret_access_key", "aws_secret_access_key", "secret"),
    "session_token": ("session_token", "aws_session_token", "token"),
    "region": ("region", "region_name", "aws_region"),
    "profile": ("profile", "profile_name"),
    "anon": ("anon", "skip_signature"),
    "max_attempts": ("max_attempts",),
    "retry_time_s": ("retry_time_s",),
    "retry_base_s": ("retry_base_s",),
    "retry_max_delay_s": ("retry_max_delay_s",),
    "connect_timeout_s": ("connect_timeout_s",),
    "read_timeout_s": ("read_timeout_s",),
    "requests_in_flight": ("requests_in_flight",),
    "cache_dir": ("cache_dir",),
    "cache_max_bytes": ("cache_max_bytes",),
    "index_cache": ("index_cache",),
}
_SPELLING = {alias: name for name, aliases in _ALIASES.items() for alias in aliases}
SECRET_FIELDS = frozenset({"secret_access_key", "session_token"})
_SECRET_SPELLINGS = frozenset(alias for name in SECRET_FIELDS for alias in _ALIASES[name])
# (requests_in_flight's default is a setting: config.set_storage_requests_in_flight, see StorageOptions.get.)
_DEFAULTS = {
    "max_attempts": 8, "retry_time_s": 60.0, "retry_base_s": 0.1, "retry_max_delay_s": 5.0,
    "connect_timeout_s": 10.0, "read_timeout_s": 30.0, "requests_in_flight": None, "cache_max_bytes": 10 << 30,
}
# True/False options and their defaults.
_FLAGS = {"anon": False, "index_cache": True}
# Retried: throttling and server-side failures.
_RETRY_STATUS = frozenset({408, 429, 500, 502, 503, 504})
_RETRY_CODES = frozenset({"SlowDown", "Throttling", "ThrottlingException", "RequestTimeout", "InternalError",
                          "ServiceUnavailable", "RequestLimitExceeded", "TooManyRequests"})


class StorageError(MinddataError, OSError):
    """A read from object storage failed: ``url``, the HTTP ``status`` (None without an answer), the
    ``attempts`` made. The message says what to fix and holds no credentials."""

    def __init__(self, message: str, *, url: str, status: int | None = None, attempts: int = 1):
        super().__init__(message)
        self.url = url
        self.status = status
        self.attempts = attempts

    def __reduce__(self) -> tuple[Any, ...]:
        return (_storage_error, (str(self), self.url, self.status, self.attempts))


def _storage_error(message: str, url: str, status: int | None, attempts: int) -> StorageError:
    return StorageError(message, url=url, status=status, attempts=attempts)


# -- URLs -----------------------------------------------------------------------------------------


class ObjectURL(NamedTuple):
    """``s3://bucket/key``: scheme, bucket, key (an http(s) URL keeps itself whole in ``key``)."""

    scheme: str
    bucket: str
    key: str

    @property
    def url(self) -> str:
        if self.scheme in ("http", "https"):
            return self.key
        return f"{self.scheme}://{self.bucket}/{self.key}"

    @property
    def shown(self) -> str:
        """The URL as messages show it (:func:`shown_url`): an http(s) URL without its query and its
        password."""
        return shown_url(self.url)

    def child(self, key: str) -> ObjectURL:
        return ObjectURL(self.scheme, self.bucket, key)


HIDDEN_QUERY = "<query hidden>"
_USERINFO = re.compile(r"^(?P<head>[A-Za-z][A-Za-z0-9+.-]*://[^/?#@:]*):(?P<password>[^/?#@]*)@")


def shown_url(text: str) -> str:
    """A URL as it may be shown, logged or serialized: an http(s) URL's query (a presigned URL's
    ``X-Amz-Signature``, ``X-Amz-Credential``, ``X-Amz-Security-Token``, or another service's token)
    as ``?<query hidden>``, and the password of a ``user:password@`` as ``<redacted>``. Other text
    is returned as it is."""
    if not re.match(r"^https?://", text, re.I):
        return text
    if "?" in text:
        text = text.split("?", 1)[0] + "?" + HIDDEN_QUERY
    return _USERINFO.sub(lambda m: f"{m.group('head')}:{REDACTED}@", text, count=1)


def split_url(text: str | os.PathLike) -> ObjectURL | str:
    """A remote URL as an :class:`ObjectURL`, or a local path as a str (``file://`` removed)."""
    text = os.fspath(text)
    match = _SCHEME.match(text)
    if match is None:
        return text
    scheme = match.group(1).lower()
    rest = text[match.end():]
    if scheme == "file":
        return rest[len("localhost"):] if rest.startswith("localhost/") else rest
    if scheme in ("http", "https"):
        return ObjectURL(scheme, "", text)
    if scheme in ("s3", "gs", "s3a", "gcs"):
        scheme = {"s3a": "s3", "gcs": "gs"}.get(scheme, scheme)
        bucket, _, key = rest.partition("/")
        if not bucket:
            raise ArgumentError(f"{text}: an object storage URL needs a bucket: {scheme}://<bucket>/<key>.")
        return ObjectURL(scheme, bucket, key)
    raise ArgumentError(
        f"{text}: the URL scheme {scheme}:// is not one minddata reads; use a local path, file://, s3://, gs://, "
        "http:// or https://."
    )


def is_remote(text: Any) -> bool:
    """Whether ``text`` (a path, a URL, or anything else) is a remote URL."""
    if not isinstance(text, (str, os.PathLike)):
        return False
    match = _SCHEME.match(os.fspath(text))
    return match is not None and match.group(1).lower() != "file"


def local_path(text: str | os.PathLike) -> str:
    """A local path, ``file://`` removed."""
    parsed = split_url(text)
    if isinstance(parsed, ObjectURL):
        raise ArgumentError(f"{parsed.url} is a remote URL where a local path is needed.")
    return parsed


def local_paths(dataset_files: Any) -> Any:
    """``dataset_files`` (a path, a URL, or a list of them) with each ``file://`` URL made its local path;
    remote URLs and anything else are left as they are, for the caller's own checks."""
    if isinstance(dataset_files, (str, os.PathLike)):
        return dataset_files if is_remote(dataset_files) else local_path(dataset_files)
    if isinstance(dataset_files, (list, tuple)):
        return [local_paths(f) if isinstance(f, (str, os.PathLike)) else f for f in dataset_files]
    return dataset_files


def refuse_remote(where: str, paths: Any) -> None:
    """Sources that do not read object storage yet: a clear error for a remote URL among ``paths``."""
    items = [paths] if isinstance(paths, (str, os.PathLike)) else paths if isinstance(paths, (list, tuple)) else []
    for item in items:
        if is_remote(item):
            raise ArgumentError(
                f"{where}: {os.fspath(item)} is a remote URL; {where} does not read object storage yet (s3://, gs://, "
                "http(s)://). Copy the files to a local folder and pass local paths."
            )


# -- settings -------------------------------------------------------------------------------------


def redact_options(options: Any) -> Any:
    """``storage_options`` as it may be shown or written: secret values replaced by ``<redacted>``."""
    if isinstance(options, StorageOptions):
        return options
    if not isinstance(options, dict):
        return options
    return {k: (REDACTED if k in _SECRET_SPELLINGS and v is not None
                else shown_url(v) if _SPELLING.get(k) == "endpoint_url" and isinstance(v, str) else v)
            for k, v in options.items()}


class StorageOptions:
    """Settings for one dataset's object storage: ``storage_options`` checked and canonicalized.

    The environment is read when a client is made (in the process that reads), so only what the
    user passed travels with the dataset. ``repr`` and pickles for display never show secrets.
    """

    __slots__ = ("_given",)

    def __init__(self, where: str, storage_options: dict[str, Any] | None = None, cache_dir: Any = None):
        if storage_options is None:
            storage_options = {}
        if cache_dir is not None:  # a source's cache_dir= argument: the storage option of that name
            if not isinstance(cache_dir, (str, os.PathLike)):
                raise ArgumentError(f"{where}: `cache_dir` must be a folder path or None. Found: {cache_dir!r}")
            if isinstance(storage_options, (dict, StorageOptions)):
                given = storage_options._given if isinstance(storage_options, StorageOptions) else storage_options
                storage_options = {**given, "cache_dir": os.fspath(cache_dir)}
        if isinstance(storage_options, StorageOptions):
            storage_options = dict(storage_options._given)
        if not isinstance(storage_options, dict):
            raise ArgumentError(f"{where}: `storage_options` must be a dict or None. Found: {storage_options!r}")
        given: dict[str, Any] = {}
        for key, value in storage_options.items():
            name = _SPELLING.get(key) if isinstance(key, str) else None
            if name is None:
                raise ArgumentError(
                    f"{where}: `storage_options` has an unknown key {key!r}; the keys are "
                    f"{sorted(_ALIASES)} (and their botocore/s3fs spellings)."
                )
            if value is None or (name in SECRET_FIELDS and value == REDACTED):
                continue  # a deserialized pipeline's redacted secret: the environment's is used
            if name in _DEFAULTS:
                kind = int if name in ("max_attempts", "requests_in_flight", "cache_max_bytes") else float
                if isinstance(value, bool) or not isinstance(value, (int, float)) or value < (1 if kind is int else 0) or (
                    kind is int and value != int(value)
                ):
                    raise ArgumentError(f"{where}: `storage_options[{key!r}]` must be a positive number. Found: {value!r}")
                value = kind(value)
            elif name in _FLAGS:
                if not isinstance(value, bool):
                    raise ArgumentError(f"{where}: `storage_options[{key!r}]` must be True or False. Found: {value!r}")
            elif not isinstance(value, str):
                shown = REDACTED if name in SECRET_FIELDS else repr(value)
                raise ArgumentError(f"{where}: `storage_options[{key!r}]` must be a str. Found: {shown}")
            given[name] = value
        self._given = given

    def get(self, name: str) -> Any:
        if name == "requests_in_flight" and name not in self._given:
            # A setting (config.set_storage_requests_in_flight), read at each use: inside a pipeline
            # the iterator's snapshot answers (config.running), elsewhere the setting now.
            from minddata import config

            return config.get_storage_requests_in_flight()
        return self._given.get(name, _FLAGS[name] if name in _FLAGS else _DEFAULTS.get(name))

    def secrets(self) -> list[str]:
        return [v for k, v in self._given.items() if k in SECRET_FIELDS and v]

    def key(self) -> tuple:
        return tuple(sorted(self._given.items()))

    def __repr__(self) -> str:
        shown = {k: (REDACTED if k in SECRET_FIELDS else v) for k, v in self._given.items()}
        return f"StorageOptions({shown})"

    def __getstate__(self) -> dict:
        return dict(self._given)

    def __setstate__(self, state: dict) -> None:
        self._given = dict(state)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StorageOptions) and other._given == self._given

    def __hash__(self) -> int:
        return hash(self.key())


# -- errors ---------------------------------------------------------------------------------------


class _ShortRead(Exception):
    """A body shorter than asked (a connection cut in the middle of a read): retried."""


class _Answer(NamedTuple):
    retry: bool
    status: int | None
    code: str
    reason: str
    most: int = 0  # at most this many tries for this failure (0: storage_options' max_attempts)


def _classify(error: BaseException) -> _Answer:
    """Whether a failed request is worth retrying, with its status, S3 error code and a short reason."""
    import http.client  # here, not at the top: every source imports this module, few use http(s)
    import socket
    import ssl
    import urllib.error

    from minddata.dataset import _s3

    if isinstance(error, _s3.S3Error):
        retry = error.status in _RETRY_STATUS or error.code in _RETRY_CODES
        return _Answer(retry, error.status, error.code, str(error))
    if isinstance(error, urllib.error.HTTPError):
        retry = error.code in _RETRY_STATUS
        return _Answer(retry, error.code, "", f"HTTP {error.code} {error.reason}")
    if isinstance(error, _s3.NoCredentials):
        return _Answer(False, None, "NoCredentials", str(error))
    if isinstance(error, _s3.HostNotFound):
        # a name that does not resolve stays so; a resolver that says "try again" gets a few tries
        return _Answer(error.temporary, None, "UnknownHost", error.strerror or str(error), most=3)
    if isinstance(error, socket.gaierror):  # one not raised through the client's connections
        temporary = error.errno == getattr(socket, "EAI_AGAIN", None)
        return _Answer(temporary, None, "UnknownHost", f"cannot resolve a host name ({error.strerror or error})", most=3)
    if isinstance(error, http.client.InvalidURL):
        return _Answer(False, None, "InvalidURL", f"the URL is not valid ({error})")
    if isinstance(error, ssl.SSLCertVerificationError):
        return _Answer(False, None, "Certificate", f"the server's TLS certificate is not trusted ({error.verify_message})")
    if isinstance(error, _ShortRead):
        return _Answer(True, None, "", str(error))
    if isinstance(error, (OSError, http.client.HTTPException, urllib.error.URLError, TimeoutError)):
        return _Answer(True, None, "", f"{type(error).__name__} (connection reset, cut off or timed out)")
    return _Answer(False, None, "", type(error).__name__)


def _fix(url: ObjectURL, answer: _Answer, endpoint: str | None) -> str:
    code, status = answer.code, answer.status
    at = f" at {endpoint}" if endpoint else ""
    if code == "NoSuchBucket":
        return f"the bucket {url.bucket!r} does not exist{at}: check the bucket name and the endpoint (AWS_ENDPOINT_URL or storage_options['endpoint_url'])"
    if code == "NoSuchKey" and url.bucket:
        return (f"no such object: the bucket {url.bucket!r} has no object {url.key!r}{at}; check the path (list the "
                "prefix, e.g. `aws s3 ls`)")
    if status == 404 and url.scheme in ("http", "https"):
        return "the server has no file at this URL: check the URL"
    if code in ("NoSuchKey", "NotFound") or status == 404:
        return "no such object: check the path (list the prefix, e.g. `aws s3 ls`), or the bucket and endpoint"
    if code == "UnknownHost":
        where = (f"the endpoint{at} (AWS_ENDPOINT_URL or storage_options['endpoint_url'])" if endpoint
                 else "the bucket name and region" if url.bucket else "the URL's host name")
        return f"check {where}, and that this machine's DNS resolves it"
    if code in ("InvalidAccessKeyId", "SignatureDoesNotMatch"):
        return "the access key or secret is wrong: check AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY or storage_options"
    if code in ("AccessDenied", "Forbidden", "AllAccessDisabled") or status == 403:
        return ("access denied: the credentials in use (AWS_ACCESS_KEY_ID / AWS_PROFILE / storage_options) lack "
                "permission to read or list it; grant s3:GetObject and s3:ListBucket, or use other credentials")
    if code == "RangeIgnored":
        return (f"the endpoint{at} ignores byte ranges (the Range header); minddata reads objects by ranges: use a "
                "server, or a proxy in front of it, that honours them")
    if code == "Certificate":
        return ("point AWS_CA_BUNDLE at the CA bundle that signed the endpoint's certificate, or check the endpoint"
                f"{at}")
    if code == "NoCredentials":
        return ("no credentials found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE (credential "
                "files), or storage_options={'access_key_id': ..., 'secret_access_key': ...}")
    if status is None:
        return f"check the endpoint{at} and the network"
    if answer.retry:
        return ("the service is throttling or failing: retry later, lower storage_options['requests_in_flight'], or "
                "raise storage_options 'max_attempts' / 'retry_time_s'")
    return f"check the URL and the request (the service answered {status})"


def _scrub(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every secret (given, or the environment's) replaced by ``<redacted>``."""
    from_env = (os.environ.get("AWS_SECRET_ACCESS_KEY"), os.environ.get("AWS_SESSION_TOKEN"))
    for secret in (*secrets, *from_env):
        if secret and len(secret) >= 4:
            text = text.replace(secret, REDACTED)
    return text


# -- stores ---------------------------------------------------------------------------------------

_UNRESOLVED = object()  # an ObjectStore's endpoint, before it is looked up


class ObjectStore:
    """One scheme and one set of options: list, stat and read with retries. Safe to share between
    threads; the client is made per process on first use (a forked worker makes its own)."""

    def __init__(self, scheme: str, options: StorageOptions):
        self.scheme = scheme
        self.options = options
        self._lock = threading.Lock()
        self._pid: int | None = None
        self._client: Any = None
        self._endpoint: Any = _UNRESOLVED
        self._secrets: list[str] = list(options.secrets())
        self._cache: ObjectCache | None = None
        self._known_sizes: dict[str, int] = {}
        # An object version's tag (its ETag) where a listing or a HEAD gave one: what keys derived data
        # kept across runs (a shard's index), so a changed object is never read through an old one.
        self._known_versions: dict[str, str] = {}
        # First blocks of objects read ahead for the file opened next (read_first_block_ahead).
        self._announced: dict[tuple[str, int, int], _BlockRead] = {}
        # The prefixes ("s3://bucket/key prefix") whose every object a listing saw, and those objects: whether
        # an object next to a listed one exists (a shard's index file) is then known without a request.
        self._listed_prefixes: set[str] = set()
        self._listed_objects: set[str] = set()

    def __repr__(self) -> str:
        return f"ObjectStore({self.scheme!r}, {self.options!r})"

    def requests_in_flight(self) -> int:
        """The GETs a reading worker keeps in flight (``storage_options`` or the setting, read now)."""
        return int(self.options.get("requests_in_flight"))

    def _announce(self, url: ObjectURL, start: int, end: int) -> None:
        with self._lock:
            if (url.url, start, end) not in self._announced:
                self._announced[(url.url, start, end)] = _BlockRead(self, url, start, end)

    def _take_announced(self, url: ObjectURL, start: int, end: int) -> bytes | None:
        """The bytes of a read announced for exactly this range, once it is done; None if none was (or
        it failed: the caller's own read then retries and names the error)."""
        with self._lock:
            read = self._announced.pop((url.url, start, end), None)
        if read is None:
            return None
        try:
            return read.result()
        except Exception:  # noqa: BLE001 - read again by the caller, whose error is the one to show
            return None

    def _drop_announced(self, url: ObjectURL) -> None:
        """Wait out and forget the reads announced for ``url`` that no file took."""
        with self._lock:
            dropped = [self._announced.pop(key) for key in list(self._announced) if key[0] == url.url]
        for read in dropped:
            read.wait()

    def __getstate__(self) -> dict:
        return {"scheme": self.scheme, "options": self.options}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["scheme"], state["options"])  # type: ignore[misc]  # rebuilds the instance through its own constructor

    # -- the client

    def endpoint(self) -> str | None:
        """The endpoint URL (None: AWS), found once per store: ``storage_options['endpoint_url']``; for
        ``gs://``, ``GCS_ENDPOINT_URL`` or Cloud Storage's; for ``s3://``, as botocore finds it (unless
        ``AWS_IGNORE_CONFIGURED_ENDPOINT_URLS`` or the profile's ``ignore_configured_endpoint_urls`` is
        true): ``AWS_ENDPOINT_URL_S3``, ``AWS_ENDPOINT_URL``, then the profile's in the AWS config file
        (its services section's ``s3 = endpoint_url = ...``, then its own ``endpoint_url``)."""
        found = self._endpoint
        if found is _UNRESOLVED:
            found = self._endpoint = self._find_endpoint()
        return found

    def _find_endpoint(self) -> str | None:
        given = self.options.get("endpoint_url")
        if given:
            return str(given)
        if self.scheme == "gs":
            return os.environ.get("GCS_ENDPOINT_URL") or GCS_ENDPOINT
        if self.scheme != "s3":
            return None
        from minddata.dataset import _s3

        profile = self.options.get("profile")
        if _s3.ignore_configured_endpoints(profile):
            return None
        return (os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
                or _s3.profile_endpoint(profile) or None)

    def region(self) -> str:
        """The region requests are signed for: ``storage_options['region']``, ``AWS_REGION`` /
        ``AWS_DEFAULT_REGION``, the profile's ``region`` in the AWS config file (``s3://``), the region
        the endpoint's host names (``s3.REGION.amazonaws.com``, ``obs.REGION.myhuaweicloud.com``), else
        us-east-1 (which S3-compatible servers that ignore the region accept)."""
        from minddata.dataset import _s3

        o = self.options
        region = o.get("region") or os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
        if not region and self.scheme == "s3":
            region = _s3.profile_region(o.get("profile"))
        return str(region or _s3.endpoint_region(self.endpoint()) or "us-east-1")

    def client(self) -> Any:
        pid = os.getpid()
        if self._client is not None and self._pid == pid:
            return self._client
        with self._lock:
            if self._client is None or self._pid != pid:
                self._client = self._make_client()
                self._pid = pid
        return self._client

    def _make_client(self) -> Any:
        from minddata.dataset import _s3

        o = self.options
        endpoint = self.endpoint()
        region = self.region()
        # (a key id without its secret, as a deserialized pipeline has: the environment's chain)
        credentials = _s3.credential_source(o.get("access_key_id"), o.get("secret_access_key"), o.get("session_token"),
                                            o.get("profile"), o.get("anon"))
        try:
            return _s3.Client(endpoint, region, credentials, max_connections=max(10, 2 * o.get("requests_in_flight")),
                              connect_timeout=o.get("connect_timeout_s"), read_timeout=o.get("read_timeout_s"))
        except ValueError as error:
            raise ArgumentError(
                f"can't set up the {self.scheme}:// client ({_scrub(str(error), self._secrets)}). Check the endpoint "
                "(AWS_ENDPOINT_URL or storage_options['endpoint_url'])."
            ) from None

    # -- retries

    def _retrying(self, url: ObjectURL, action: str, call: Callable[[], Any]) -> Any:
        o = self.options
        attempts_max, budget = o.get("max_attempts"), o.get("retry_time_s")
        base, cap = o.get("retry_base_s"), o.get("retry_max_delay_s")
        start = time.monotonic()
        attempt = 0
        while True:
            attempt += 1
            try:
                return call()
            except ArgumentError:
                raise
            except Exception as error:  # noqa: BLE001 - classified below; unknown errors are not retried
                answer = _classify(error)
                delay = random.uniform(0, min(cap, base * 2 ** (attempt - 1)))
                elapsed = time.monotonic() - start
                most = min(attempts_max, answer.most) if answer.most else attempts_max
                if answer.retry and attempt < most and elapsed + delay <= budget:
                    time.sleep(delay)
                    continue
                # the status once: an S3 error's reason starts with it ("HTTP 503 SlowDown ...")
                status = ("" if answer.status is not None and answer.reason.startswith(f"HTTP {answer.status}")
                          else f" (status {answer.status})" if answer.status is not None
                          else "" if answer.code == "UnknownHost" else " (no HTTP status)")
                tries = f"{attempt} {'try' if attempt == 1 else 'tries'}"
                if answer.retry and most < attempts_max and attempt >= most:
                    what = f"gave up after {tries} in {elapsed:.1f} s (at most {most} for this failure)"
                elif answer.retry:
                    what = (f"gave up after {tries} in {elapsed:.1f} s (limits: storage_options max_attempts="
                            f"{attempts_max}, retry_time_s={budget:g})")
                else:
                    what = f"{tries}, not retried"
                message = (f"{action} {url.shown} failed: {answer.reason}{status}; {what}. "
                           f"Fix: {_fix(url, answer, self.endpoint())}.")
                raise StorageError(_scrub(message, self._secrets), url=url.shown, status=answer.status,
                                   attempts=attempt) from None

    # -- operations

    def list(self, url: ObjectURL, pattern: str | None = None) -> list[tuple[str, int]]:
        """(key, size) of every object under the prefix ``url.key`` (keys ending in "/" left out),
        sorted; with ``pattern``, only keys matching it (``fnmatch``, "*" not crossing "/")."""
        client = self.client()
        found: list[tuple[str, int]] = []
        seen: list[str] = []  # the objects' URLs, one string each for both records below
        token: str | None = None
        while True:  # page by page, each retried on its own: a prefix of millions of objects is thousands of pages
            page, token = self._retrying(url, "listing", lambda token=token: client.list_page(url.bucket, url.key, token))
            for key, size, tag in page:
                if not key.endswith("/"):
                    found.append((key, size))
                    name = url.child(key).url
                    seen.append(name)
                    if tag:
                        self._known_versions[name] = tag
            if token is None:
                break
        with self._lock:
            self._listed_objects.update(seen)
            self._listed_prefixes.add(url.url)
        if pattern is not None:
            regex = _glob_regex(pattern)
            found = [item for item in found if regex.fullmatch(item[0])]
        return sorted(found)

    def size(self, url: ObjectURL, explain_missing: bool = True) -> int:
        """The object's size (a HEAD). A HEAD's 403 or 404 has no S3 error code, so one GET of a byte
        learns it (a wrong secret, a missing bucket, ...: :meth:`_s3.Client.head`); a caller that only
        asks whether the object is there (``explain_missing`` False) spares it for a 404."""
        client = self.client()
        explain = (400, 403, 404) if explain_missing else (400, 403)
        head = self._retrying(url, "reading the size of", lambda: client.head(url.bucket, url.key, explain))
        if head.get("etag"):
            self._known_versions[url.url] = head["etag"]
        return int(head["content-length"])

    def listed(self, url: ObjectURL) -> bool | None:
        """Whether a listing of this process saw the object: True; False where a listing of a prefix
        of its key did not; None where no listing covered it (only a request can tell)."""
        name = url.url
        if name in self._listed_objects:
            return True
        if any(name.startswith(prefix) for prefix in self._listed_prefixes):
            return False
        return None

    def answers_ranges(self, url: ObjectURL) -> bool:
        """Whether a GET of a byte range of the object gets just that range (S3 and Cloud Storage do)."""
        return True

    def version(self, url: ObjectURL) -> str | None:
        """The object's version tag (ETag) as this process's listing or HEAD saw it; None if unknown."""
        return self._known_versions.get(url.url)

    def read(self, url: ObjectURL, start: int = 0, end: int | None = None) -> bytes:
        """Bytes ``[start, end)`` of the object (all from ``start`` when ``end`` is None): exactly those,
        or a :class:`StorageError`. With ``cache_dir``, through the local cache."""
        if end is not None and end <= start:
            return b""
        folder = self.options.get("cache_dir")
        if folder:
            cache = self._cache
            if cache is None or cache.pid != os.getpid():
                cache = self._cache = ObjectCache(folder, self.options.get("cache_max_bytes"))
            return cache.read(self, url, start, end)
        return self._fetch(url, start, end)

    def _sizes(self, url: ObjectURL) -> int:
        """The object's size, asked once per process (the cache's block reads clamp to it)."""
        known = self._known_sizes.get(url.url)
        if known is None:
            known = self._known_sizes[url.url] = self.size(url)
        return known

    def _fetch(self, url: ObjectURL, start: int = 0, end: int | None = None) -> bytes:
        if end is not None and end <= start:
            return b""
        client = self.client()

        def get() -> bytes:
            body = client.get(url.bucket, url.key, start, end)
            return _whole_body(body, body.length, start, end)

        action = "reading" if not start and end is None else f"reading bytes {start}-{'' if end is None else end - 1} of"
        return self._retrying(url, action, get)

    def open_body(self, url: ObjectURL, start: int) -> Any:
        """One GET of the object from byte ``start`` to its end, answered: its body, a stream with
        ``read(n)``, ``readinto(buffer)`` and ``close()`` (read by :class:`StreamedFile`, which retries the reads)."""
        return self.client().get(url.bucket, url.key, start, ranged=True)

    def write(self, url: ObjectURL, data: bytes) -> None:
        """Store ``data`` as the object ``url`` (a small one: a marker), retried as reads are."""
        client = self.client()
        self._retrying(url, "writing", lambda: client.put(url.bucket, url.key, data))

    def read_many(self, requests: Sequence[tuple[ObjectURL, int, int | None]], gap: int = 64 << 10,
                  most: int = 8 << 20) -> list[bytes]:
        """Several reads, results in order: ranges of one object less than ``gap`` bytes apart are
        read as one ranged GET (up to ``most`` bytes), and at most ``requests_in_flight`` GETs are in
        flight at a time (read ahead of a pipeline's workers, engine/readahead.py: the pass's pool of
        requests, shared by the chunks read ahead, bounds them instead)."""
        groups: list[list[Any]] = []  # [url, start, end, [request numbers]]
        for i in sorted(range(len(requests)), key=lambda i: (requests[i][0].url, requests[i][1])):
            url, start, end = requests[i]
            last = groups[-1] if groups else None
            if (end is not None and last is not None and last[2] is not None and last[0] == url
                    and start <= last[2] + gap and max(end, last[2]) - last[1] <= most):
                last[2] = max(end, last[2])
                last[3].append(i)
            else:
                groups.append([url, start, end, [i]])
        limit = min(self.requests_in_flight(), len(groups))
        shared = request_pool()  # read ahead of a pipeline's workers: the pass's requests share a pool
        if shared is not None and len(groups) > 1:
            self.client()
            blobs = list(shared.map(lambda g: self.read(g[0], g[1], g[2]), groups))
        elif limit <= 1 or shared is not None:
            blobs = [self.read(url, start, end) for url, start, end, _ in groups]
        else:
            self.client()
            with concurrent.futures.ThreadPoolExecutor(limit, thread_name_prefix="minddata-storage") as pool:
                blobs = list(pool.map(lambda g: self.read(g[0], g[1], g[2]), groups))
        out: list[bytes] = [b""] * len(requests)
        for (_, first, _, members), data in zip(groups, blobs):
            for i in members:
                _, start, end = requests[i]
                out[i] = data if len(members) == 1 else data[start - first:(len(data) + first if end is None else end) - first]
        return out


def close_body(body: Any) -> None:
    """Close a GET's body (None: nothing open); a broken connection has nothing left to release."""
    if body is not None:
        try:
            body.close()
        except Exception:  # noqa: BLE001 - a broken connection: nothing left to release
            pass


def _whole_body(body: Any, length: Any, start: int, end: int | None) -> bytes:
    """A GET's body read to its end and closed: exactly its ``length`` bytes (and ``end - start`` for a
    closed range), or a :class:`_ShortRead` (a cut connection, retried)."""
    try:
        data = body.read()
    finally:
        body.close()
    expected = int(length) if length is not None else len(data)
    if len(data) != expected or (end is not None and len(data) != end - start):
        raise _ShortRead(f"the body ended after {len(data)} of {expected if end is None else end - start} bytes")
    return data


class HTTPStore(ObjectStore):
    """Single files over http(s): ranged GETs through the standard library, with the same retries."""

    def __init__(self, scheme: str, options: StorageOptions):
        super().__init__(scheme, options)
        # Files whose server said in its HEAD answer that it does not serve byte ranges (no
        # "Accept-Ranges: bytes", as `python -m http.server`): read front to back in one GET.
        self._whole_only: set[str] = set()

    def answers_ranges(self, url: ObjectURL) -> bool:
        """False where the file's HEAD answer did not say ``Accept-Ranges: bytes``."""
        self._sizes(url)
        return url.url not in self._whole_only

    def client(self) -> Any:
        return None

    def endpoint(self) -> str | None:
        return None

    def list(self, url: ObjectURL, pattern: str | None = None) -> list[tuple[str, int]]:
        if pattern is not None or url.key.endswith("/"):
            raise ArgumentError(f"{url.shown}: http(s) URLs name single files; listing and patterns need s3:// or gs://.")
        return [(url.key, self.size(url))]

    def _open(self, url: ObjectURL, method: str, headers: dict[str, str]) -> Any:
        import base64
        import socket
        import urllib.error
        import urllib.parse
        import urllib.request

        from minddata.dataset import _s3

        if url.key.endswith("?" + HIDDEN_QUERY) or f":{REDACTED}@" in url.key:
            raise ArgumentError(
                f"{url.shown}: this URL's query or password was hidden when the pipeline was serialized (a presigned "
                "URL's signature and a password are credentials). Build the source again with the full URL."
            )
        parts = urllib.parse.urlsplit(url.key)
        target = url.key
        if parts.username is not None:  # user:password@host: sent as HTTP Basic authentication, as curl does
            user = f"{urllib.parse.unquote(parts.username)}:{urllib.parse.unquote(parts.password or '')}"
            headers = {**headers, "Authorization": "Basic " + base64.b64encode(user.encode()).decode()}
            target = urllib.parse.urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))
        request = urllib.request.Request(target, method=method, headers=headers)
        try:
            return urllib.request.urlopen(request, timeout=self.options.get("read_timeout_s"))  # noqa: S310 - the user's URL
        except urllib.error.URLError as error:
            if isinstance(error.reason, socket.gaierror):
                raise _s3.HostNotFound(parts.hostname or "", error.reason) from None
            raise

    def size(self, url: ObjectURL, explain_missing: bool = True) -> int:
        def head() -> int:
            with self._open(url, "HEAD", {}) as response:
                length = response.headers.get("Content-Length")
                tag = response.headers.get("ETag") or response.headers.get("Last-Modified")
                ranges = (response.headers.get("Accept-Ranges") or "").strip().lower()
            if tag:
                self._known_versions[url.url] = tag
            if ranges != "bytes":
                self._whole_only.add(url.url)
            if length is None:
                raise ArgumentError(f"{url.shown}: the server sends no Content-Length; minddata needs the file's size.")
            return int(length)

        return self._retrying(url, "reading the size of", head)

    def _fetch(self, url: ObjectURL, start: int = 0, end: int | None = None) -> bytes:
        if end is not None and end <= start:
            return b""

        def get() -> bytes:
            headers = {"Range": f"bytes={start}-{'' if end is None else end - 1}"} if start or end is not None else {}
            with self._open(url, "GET", headers) as response:
                if headers and response.status != 206:
                    raise _ranges_ignored(url, response.status)
                return _whole_body(response, response.headers.get("Content-Length"), start, end)

        return self._retrying(url, "reading", get)

    def open_body(self, url: ObjectURL, start: int) -> Any:
        response = self._open(url, "GET", {"Range": f"bytes={start}-"})
        if response.status != 206 and start:
            response.close()
            raise _ranges_ignored(url, response.status)
        return response


def _ranges_ignored(url: ObjectURL, status: int) -> ArgumentError:
    """The error for an http(s) server that answers a ranged GET with the whole file."""
    return ArgumentError(
        f"{url.shown}: the server ignores byte ranges (status {status}, not 206), and minddata reads http(s) files "
        "by ranges. Serve the file from a server that answers Range requests, or download it and read the local copy."
    )


def _glob_regex(pattern: str) -> re.Pattern[str]:
    """A glob over object keys: ``*`` and ``?`` stay within one "/" level, ``**`` crosses levels."""
    out = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            close = pattern.find("]", i + 1)
            if close < 0:
                out.append(re.escape(c))
            else:
                out.append(fnmatch.translate(pattern[i:close + 1])[4:-3])
                i = close + 1
                continue
        else:
            out.append(re.escape(c))
        i += 1
    return re.compile("".join(out), re.S)


_ENVIRONMENT = ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "GCS_ENDPOINT_URL",
                "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION",
                "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE", "AWS_CA_BUNDLE", "HTTPS_PROXY", "https_proxy",
                "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy")
_STORES: dict[tuple, ObjectStore] = {}
_STORES_LOCK = threading.Lock()


def get_store(url: ObjectURL, options: StorageOptions) -> ObjectStore:
    """The store for ``url``'s scheme and these options (one per process and setting)."""
    scheme = "http" if url.scheme in ("http", "https") else url.scheme
    # The environment and requests_in_flight (a setting unless given; the client's connection pool is
    # sized by it) are part of the key: a client made under other settings is not reused.
    key = (scheme, options.key(), options.get("requests_in_flight"), tuple(os.environ.get(name) for name in _ENVIRONMENT))
    with _STORES_LOCK:
        store = _STORES.get(key)
        if store is None:
            store = (HTTPStore if scheme == "http" else ObjectStore)(scheme, options)
            _STORES[key] = store
    return store


def expand_urls(where: str, text: str, options: StorageOptions) -> list[tuple[ObjectURL, int]]:
    """A remote URL, a prefix ending in "/" or a glob → the objects (URL, size), sorted; an error
    naming the URL and the fix when nothing is there."""
    url = split_url(text)
    assert isinstance(url, ObjectURL)
    store = get_store(url, options)
    if url.scheme in ("http", "https"):
        return [(url, store.size(url))]
    magic = re.search(r"[*?[]", url.key)
    if magic:
        prefix = url.key[: magic.start()]
        found = store.list(url.child(prefix), pattern=url.key)
    elif url.key.endswith("/") or not url.key:
        found = store.list(url)
    else:  # one object: a HEAD (needs read access only, not listing)
        found = [(url.key, store.size(url))]
    if not found:
        raise ArgumentError(
            f"{where}: {url.url} matches no object. Check the bucket, the prefix and the pattern (list it with "
            "`aws s3 ls`), and the endpoint (AWS_ENDPOINT_URL or storage_options['endpoint_url'])."
        )
    for key, size in found:  # a listing's sizes spare a HEAD per object when it is read (store._sizes)
        store._known_sizes.setdefault(url.child(key).url, size)
    return [(url.child(k), s) for k, s in found]


class _ObjectFile(io.RawIOBase):
    """A read-only, seekable file over one object of ``_size`` bytes, at position ``_pos``; a
    subclass reads (``readinto``)."""

    def __init__(self, store: ObjectStore, url: ObjectURL, size: int):
        super().__init__()
        self.store = store
        self.url = url
        self.name = url.url
        self._size = size
        self._pos = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def size(self) -> int:
        return self._size

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = 0) -> int:
        base = {0: 0, 1: self._pos, 2: self._size}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def read_on(self, offset: int, buffer: Any) -> int:
        """Up to ``len(buffer)`` bytes from ``offset`` into ``buffer``, the file's position left as it
        was (as ``pread``): for a walk front to back that keeps what it needs itself (a tar's
        headers). 0 at the end."""
        at = self._pos
        self._pos = offset
        try:
            return self.readinto(buffer)
        finally:
            self._pos = at


class RangedFile(_ObjectFile):
    """A read-only, seekable file over one object, read through ranged GETs of ``block`` bytes (one
    block kept), for readers that want a file object (tar headers, TFRecord, CSV, Parquet).

    With ``read_ahead``, a file read front to back (a block wanted where the one before ended) gets
    its next block's GET started as soon as it enters a block, on a thread of its own, so a reader
    that streams records decodes one block while the next arrives. Memory: two blocks."""

    def __init__(self, store: ObjectStore, url: ObjectURL, size: int | None = None, block: int = 1 << 20,
                 read_ahead: bool = False):
        super().__init__(store, url, store.size(url) if size is None else size)
        self._block = block
        self._cached_at = -1
        self._cached = b""
        self._read_ahead = read_ahead
        self._ahead: _BlockRead | None = None

    def prime(self, start: int, data: bytes) -> None:
        """Hold ``data``, the object's bytes from ``start``, as if read: a reader that already fetched
        a part (a file's tail, where a footer lies) serves reads there without another request."""
        self._cached_at, self._cached = start, data

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        want = min(len(view), self._size - self._pos)
        if want <= 0:
            return 0
        if want >= self._block:
            data = self.store.read(self.url, self._pos, self._pos + want)
        else:
            if not (self._cached_at <= self._pos and self._pos + want <= self._cached_at + len(self._cached)):
                self._load_block()
            at = self._pos - self._cached_at
            data = self._cached[at:at + want]
        view[: len(data)] = data
        self._pos += len(data)
        return len(data)

    def _load_block(self) -> None:
        cached_end = self._cached_at + len(self._cached)
        if self._cached_at <= self._pos < cached_end:
            # A read that runs past the block: its tail is kept and the next block joined to it, so
            # that blocks follow one another (and the block read ahead is the one wanted next).
            start, keep = cached_end, self._cached[self._pos - self._cached_at:]
        else:
            start, keep = self._pos, b""
        end = min(self._size, start + self._block)
        # Sequential: from where the last block ended, or the first block of a file read from its start.
        sequential = start == cached_end or (start == 0 and self._cached_at < 0)
        ahead, self._ahead = self._ahead, None
        if ahead is not None and (ahead.start, ahead.end) == (start, end):
            data = ahead.result()  # its error, if it failed, is the read's (already retried)
        else:
            if ahead is not None:
                ahead.wait()  # a seek elsewhere: the block read ahead is not wanted
            announced = self.store._take_announced(self.url, start, end) if start == 0 else None
            data = announced if announced is not None else self.store.read(self.url, start, end)
        self._cached = keep + data if keep else data
        self._cached_at = self._pos
        if self._read_ahead and sequential and end < self._size:
            self._ahead = _BlockRead(self.store, self.url, end, min(self._size, end + self._block))

    def readall(self) -> bytes:
        announced = self.store._take_announced(self.url, 0, self._size) if self._pos == 0 else None
        if announced is not None:
            data = announced
        else:
            data = self.store.read(self.url, self._pos, self._size) if self._pos < self._size else b""
        self._pos += len(data)
        return data

    def close(self) -> None:
        ahead, self._ahead = self._ahead, None
        if ahead is not None:
            ahead.wait()  # one GET, bounded by the store's timeouts and retries: no thread outlives the file
        super().close()


class _BlockRead:
    """One ranged read on a thread of its own (:class:`RangedFile`'s next block)."""

    def __init__(self, store: ObjectStore, url: ObjectURL, start: int, end: int):
        self.start, self.end = start, end
        self._data = b""
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(store, url), name="minddata-storage-ahead", daemon=True)
        self._thread.start()

    def _run(self, store: ObjectStore, url: ObjectURL) -> None:
        try:
            self._data = store.read(url, self.start, self.end)
        except BaseException as error:  # noqa: BLE001 - handed to the reader that wants the block
            self._error = error

    def wait(self) -> None:
        self._thread.join()

    def result(self) -> bytes:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._data


class StreamedFile(_ObjectFile):
    """A read-only file over one object of known ``size`` for a reader that goes front to back (tar
    headers): one streaming GET, read as it arrives, instead of a round trip per block.

    A forward seek reads on (and drops) what it passes, unless it skips more than ``skip`` bytes: then
    the stream is closed and a new GET starts at the target. A backward seek within the last
    ``window`` bytes read is served from them; further back starts a new GET. A read that fails (a
    cut connection, a short body, a 503) is retried as every request is (a new GET from the position
    reached), so the bytes returned are exactly the object's. Memory: the window and one read."""

    def __init__(self, store: ObjectStore, url: ObjectURL, size: int, window: int = 1 << 16, skip: int = 8 << 20):
        super().__init__(store, url, size)
        self._window = window
        self._skip = skip
        self._body: Any = None
        self._body_at = 0  # the next byte the open body gives
        self._recent = bytearray()  # the last bytes read from the body, ending at _body_at
        self.gets = 0  # GETs started

    def close(self) -> None:
        self._drop_body()
        super().close()

    def _drop_body(self) -> None:
        body, self._body = self._body, None
        close_body(body)

    def _from_body(self, read: Callable[[Any], Any]) -> Any:
        """``read(body)`` of the open body at ``_body_at`` (a new GET from there if none); nothing
        read is a short body (retried by the caller from the same byte)."""
        if self._body is None:
            self.gets += 1
            self._body = self.store.open_body(self.url, self._body_at)
        try:
            got = read(self._body)
        except BaseException:
            self._drop_body()
            raise
        if not got:
            self._drop_body()
            raise _ShortRead(f"the body ended at byte {self._body_at} of {self._size}")
        return got

    def _pull(self, most: int) -> bytes:
        """Up to ``most`` bytes at ``_body_at`` from the open body."""
        data: bytes = self._from_body(lambda body: body.read(most))
        return data

    def _pull_into(self, view: memoryview) -> int:
        """Bytes at ``_body_at`` from the open body into ``view``: how many."""
        return int(self._from_body(lambda body: body.readinto(view)))

    def _body_into(self, view: memoryview) -> int:
        """One read of the body into ``view`` (retried, from where the body stopped)."""
        got: int = self.store._retrying(self.url, f"reading bytes {self._body_at}- of", lambda: self._pull_into(view))
        self._body_at += got
        return got

    def read_on(self, offset: int, buffer: Any) -> int:
        """As :meth:`_ObjectFile.read_on`, each byte copied once, from the connection into ``buffer``
        (where :meth:`readinto` copies it three times): from the window where it holds ``offset``;
        else from the body, read on (into ``buffer``, then dropped) over a forward skip of at most
        ``skip`` bytes, or a new GET from ``offset``. What this reads is not kept in the window."""
        view = memoryview(buffer).cast("B")
        want = min(len(view), self._size - offset)
        if want <= 0:
            return 0
        behind = self._body_at - len(self._recent)
        if behind <= offset < self._body_at:
            got = min(want, self._body_at - offset)
            with memoryview(self._recent) as recent:
                view[:got] = recent[offset - behind:offset - behind + got]
            return got
        if offset < behind or offset > self._body_at + self._skip:
            self._drop_body()
            self._body_at = offset
        self._recent = bytearray()
        while self._body_at < offset:  # a short skip forward: read on and drop
            self._body_into(view[:min(offset - self._body_at, want)])
        return self._body_into(view[:want])

    def _advance(self, most: int) -> None:
        """The next bytes of the body into the recent window (retried, from where the body stopped)."""
        data = self.store._retrying(self.url, f"reading bytes {self._body_at}- of", lambda: self._pull(most))
        self._body_at += len(data)
        self._recent += data
        if len(self._recent) > self._window:
            del self._recent[: len(self._recent) - self._window]

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        want = min(len(view), self._size - self._pos)
        if want <= 0:
            return 0
        if self._pos < self._body_at - len(self._recent) or self._pos > self._body_at + self._skip:
            self._drop_body()  # behind the window, or far ahead: a new GET from there
            self._body_at, self._recent = self._pos, bytearray()
        while self._body_at < self._pos:  # a short skip forward: read on
            self._advance(min(self._pos - self._body_at, self._window))
        if self._pos == self._body_at:
            self._advance(min(max(want, 1 << 14), self._window, self._size - self._body_at))
        at = self._pos - (self._body_at - len(self._recent))
        got = min(want, len(self._recent) - at)
        with memoryview(self._recent) as recent:  # released at once: the window is resized by the next read
            view[:got] = recent[at:at + got]
        self._pos += got
        return got


class RemotePath(str):
    """A remote URL as a plain ``str`` (messages, origins, sorting) that carries its dataset's
    :class:`StorageOptions` to :func:`open_file`, also into worker processes."""

    options: StorageOptions

    def __new__(cls, url: str, options: StorageOptions) -> RemotePath:
        self = super().__new__(cls, url)
        self.options = options
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return (RemotePath, (str(self), self.options))


def store_of(path: str) -> tuple[ObjectStore, ObjectURL]:
    """The store and URL of a remote path (its own options if a :class:`RemotePath`)."""
    url = split_url(path)
    assert isinstance(url, ObjectURL)
    options = path.options if isinstance(path, RemotePath) else StorageOptions("object storage")
    return get_store(url, options), url


def open_file(path: str, mode: str = "rb", *, encoding: str | None = None, newline: str | None = None,
              block: int = 4 << 20) -> Any:
    """``open(path, mode)`` for a local path, or a buffered file over an object read by ranged GETs of
    ``block`` bytes (sequential readers: large; readers that seek to one record: small)."""
    if mode not in ("rb", "r"):
        raise ValueError(f"open_file reads only; mode {mode!r}")
    if not is_remote(path):
        local = local_path(path)
        return open(local, mode, encoding=encoding, newline=newline) if mode == "r" else open(local, "rb")  # noqa: SIM115
    store, url = store_of(path)
    raw: _ObjectFile
    if block >= 1 << 20 and not store.answers_ranges(url):
        # A sequential reader of a file whose server does not serve ranges (it answers a ranged GET
        # with the whole file): one GET from the start, read front to back, forward seeks read on. A
        # seek back past the window, or a retry after a cut, asks for a range, which is refused naming
        # the server's limit and the fix.
        size = store._sizes(url)
        raw = StreamedFile(store, url, size, skip=size + 1)
    else:
        # Large blocks are a sequential reader's: its next block is read ahead (RangedFile).
        raw = RangedFile(store, url, size=store._sizes(url), block=block, read_ahead=block >= 1 << 20)
    buffered = io.BufferedReader(raw, buffer_size=min(block, 1 << 16))
    if mode == "r":
        return io.TextIOWrapper(buffered, encoding=encoding or "utf-8", newline=newline)
    return buffered


def file_size(path: str) -> int:
    """The size of a local file or of an object."""
    if not is_remote(path):
        return os.path.getsize(local_path(path))
    store, url = store_of(path)
    return store.size(url)


def exists(path: str, options: StorageOptions) -> bool:
    """Whether a local file or an object is there (an object: as this process's listing saw it where
    one covered it, else by a HEAD)."""
    if not is_remote(path):
        return os.path.exists(local_path(path))
    url = split_url(path)
    assert isinstance(url, ObjectURL)
    store = get_store(url, options)
    seen = store.listed(url)
    if seen is not None:
        return seen
    try:
        store.size(url, explain_missing=False)
    except StorageError as error:
        if error.status == 404:
            return False
        raise
    return True


def write_file(path: str, data: bytes, options: StorageOptions | None = None) -> None:
    """``data`` as the whole file ``path``. A local file appears whole or not at all (written under a
    hidden temporary name in its folder, then renamed; the temporary file removed if writing fails);
    an object is one PUT, retried as reads are."""
    if is_remote(path):
        url = split_url(path)
        assert isinstance(url, ObjectURL)
        get_store(url, options or StorageOptions("object storage")).write(url, data)
        return
    path = local_path(path)
    folder, name = os.path.split(path)
    staged = os.path.join(folder, f".{name}.{os.getpid()}-{threading.get_ident()}.tmp")
    try:
        with open(staged, "wb") as f:
            f.write(data)
        os.replace(staged, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(staged)
        raise


def read_first_block_ahead(path: str, block: int = 4 << 20) -> Callable[[], None]:
    """Start reading the first ``block`` bytes of ``path`` (an object whose size this process knows;
    nothing for a local file) on a thread of its own, for the :func:`open_file` of it that comes next
    in this process: a reader going from file to file gets each file's first bytes without waiting a
    round trip. Returns the call that waits out and forgets the read if no file took it."""
    if not is_remote(path):
        return _nothing
    store, url = store_of(path)
    size = store._known_sizes.get(url.url)
    if not size:
        return _nothing
    store._announce(url, 0, min(size, block))
    return functools.partial(store._drop_announced, url)


def _nothing() -> None:
    pass


def known_size(path: str) -> int:
    """The size of a local file, or of an object as this process's listing saw it (asked once when no
    listing did): a file read through soon after it was listed costs no request for its size."""
    if not is_remote(path):
        return os.path.getsize(local_path(path))
    store, url = store_of(path)
    return store._sizes(url)


def expand_remote(where: str, items: Sequence[str], options: StorageOptions) -> list[str]:
    """Remote URLs, prefixes and globs → :class:`RemotePath` objects, each once, in the order given."""
    out: list[str] = []
    for item in items:
        out.extend(RemotePath(u.url, options) for u, _ in expand_urls(where, item, options))
    return list(dict.fromkeys(out))


@contextlib.contextmanager
def _file_lock(path: str) -> Iterator[None]:
    """An exclusive ``flock`` on the file ``path`` (made, with its folder, if missing) while held:
    between processes, and between threads that each take it. Where there is no ``flock`` (not POSIX)
    or the file can't be made, nothing is locked: what it guards is then done more than once."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        lock = open(path, "a")  # noqa: SIM115 - closed below
    except OSError:
        yield
        return
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


class ObjectCache:
    """A local, size-bounded, least-recently-used cache of object bytes, shared by processes.

    Whole-object reads are kept as one file; ranged reads as aligned blocks of ``BLOCK`` bytes (the
    object's size, asked once, clamps the last one), so ranges that differ between epochs still hit.
    Files are named by a hash of the endpoint, URL, (size), block and the object's version
    tag (its ETag, from a listing or a HEAD: an object changed in the bucket is read anew, never
    served stale), written under a temporary name and renamed into place (two processes filling one
    entry both write the same bytes; a reader sees a whole file or none, and a writer killed mid-write
    leaves only a temporary file, never read and evicted in its turn). A hit refreshes the file's
    mtime. A process's first write, and each write that would take the folder past ``max_bytes`` as
    the process last measured it, takes the folder's lock (``flock``) and removes the oldest files
    down to 90%, so one process never leaves the folder over ``max_bytes``. A file removed under a
    reader is a miss.
    """

    BLOCK = 4 << 20

    def __init__(self, folder: str, max_bytes: int, kind: str = "objects"):
        self.folder = os.path.join(os.path.expanduser(folder), kind)
        os.makedirs(self.folder, exist_ok=True)
        self.max_bytes = int(max_bytes)
        self.pid = os.getpid()
        self._written = 0
        self._room: int | None = None  # bytes this process may write before the folder is measured again
        self._lock = threading.Lock()
        self._evicting = threading.Lock()

    def _path(self, store: ObjectStore, url: ObjectURL, part: str) -> str:
        import hashlib

        name = hashlib.sha256(f"{store.endpoint()}\n{url.url}\n{part}".encode()).hexdigest()
        return os.path.join(self.folder, name[:2], name)

    def _get(self, path: str) -> bytes | None:
        try:
            with open(path, "rb") as f:
                data = f.read()
            os.utime(path)
            return data
        except OSError:
            return None

    def _put(self, path: str, data: bytes) -> None:
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            tmp = f"{path}.tmp-{os.getpid()}-{threading.get_ident()}"
            with open(tmp, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
        except OSError:
            return  # a full or read-only disk: the read still succeeds, uncached
        with self._lock:
            self._written += len(data)
            due = self._room is None or self._written > self._room
            if due:
                self._written = 0
                self._room = 0
        if due:
            self.evict()

    @staticmethod
    def _version(store: ObjectStore, url: ObjectURL) -> str:
        """The object's version tag as a listing or a HEAD of this process saw it (a HEAD, once per
        process, for an object no listing covered): part of each entry's name."""
        version = store.version(url)
        if version is None:
            store._sizes(url)
            version = store.version(url)
        return version or ""

    def read(self, store: ObjectStore, url: ObjectURL, start: int, end: int | None) -> bytes:
        if start == 0 and end is None:
            path = self._path(store, url, f"whole:{self._version(store, url)}")
            data = self._get(path)
            if data is None:
                data = store._fetch(url)
                self._put(path, data)
            return data
        size = store._sizes(url)
        end = size if end is None else end
        if end > size:
            return store._fetch(url, start, end)  # past the end: let the store report it
        first, last = start // self.BLOCK, (end - 1) // self.BLOCK
        version = self._version(store, url)
        pieces = []
        for block in range(first, last + 1):
            path = self._path(store, url, f"{size}:{version}:{block}")
            data = self._get(path)
            if data is None:
                lo = block * self.BLOCK
                data = store._fetch(url, lo, min(size, lo + self.BLOCK))
                self._put(path, data)
            pieces.append(data)
        joined = pieces[0] if len(pieces) == 1 else b"".join(pieces)
        offset = first * self.BLOCK
        return joined[start - offset:end - offset]

    def get_entry(self, store: ObjectStore, url: ObjectURL, part: str) -> bytes | None:
        """The bytes kept for ``url``'s ``part`` (a name for what they are), or None."""
        return self._get(self._path(store, url, part))

    def put_entry(self, store: ObjectStore, url: ObjectURL, part: str, data: bytes) -> None:
        """Keep ``data`` as ``url``'s ``part`` (quietly not, on a full or read-only disk)."""
        self._put(self._path(store, url, part), data)

    def making(self, store: ObjectStore, url: ObjectURL, part: str) -> contextlib.AbstractContextManager:
        """Held while one thread of one process makes ``url``'s ``part``, so that the others wait for
        it and then read it rather than make it again (each rank of a node indexing the same shard):
        an exclusive lock on one of 256 lock files, chosen by the entry's name (a bounded number of
        files; two entries that share one wait for each other)."""
        name = os.path.basename(self._path(store, url, part))[:2]
        return _file_lock(os.path.join(os.path.dirname(self.folder), f".locks-{os.path.basename(self.folder)}", name))

    def evict(self) -> None:
        """Oldest files first, down to 90% of ``max_bytes``; one thread of one process at a time (the
        folder's ``flock``), the others wait their turn and then find less to do."""
        lock_path = os.path.join(os.path.dirname(self.folder), f".lock-{os.path.basename(self.folder)}")
        with self._evicting, _file_lock(lock_path):
            entries = []
            for sub in os.scandir(self.folder):
                if not sub.is_dir():
                    continue
                for entry in os.scandir(sub.path):
                    try:
                        info = entry.stat()
                    except OSError:
                        continue
                    entries.append((info.st_mtime, info.st_size, entry.path))
            total = sum(size for _, size, _ in entries)
            for _, size, path in sorted(entries):
                if total <= self.max_bytes * 0.9:
                    break
                try:
                    os.unlink(path)
                    total -= size
                except OSError:
                    pass
            with self._lock:  # what this process may write before it measures the folder again
                self._room = max(0, self.max_bytes - total - self._written)

    def total_bytes(self) -> int:
        return sum(e.stat().st_size for sub in os.scandir(self.folder) if sub.is_dir() for e in os.scandir(sub.path))
