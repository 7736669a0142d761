"""A record folder's housekeeping: folder locks, writers' locked temporary files, commit journals.

Commit protocol (:meth:`minddata.record.ArrowRecordWriter.commit`): every new file (data and metadata) is
written and fsynced under a temporary name ``<final>.tmp-<pid>-<token>``; then, holding the folder's
exclusive lock, the writer renames a *commit journal* ``<first shard>.commit-journal.json`` (the list
of its temporary files) into place: that rename is the commit point. It then renames each temporary
file onto its final name and removes the journal. Readers read metadata under the folder's shared lock,
so a reader never sees a half-switched set; a writer killed after the commit point leaves the journal,
and the next open of the folder (reader or writer) finishes the renames; one killed before it leaves
the old set untouched and temporary files, which the next open removes.

Whether a temporary file's writer is gone is proved by a lock, never by a PID (PID namespaces share
folders): a writer creates each temporary file under the folder's shared lock and holds an exclusive
``flock`` on it while it lives. A sweeper holding the folder's exclusive lock removes only files whose
lock it can take, which it can only when no process holds the file open with its lock.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import re
import secrets
import time
from collections.abc import Iterator

from minddata.errors import DataFormatError

__all__ = ["TempFile", "folder_lock", "sweep_folder", "new_token", "JOURNAL_SUFFIX", "fsync_folder"]

TEMP_NAME = re.compile(r"^(?P<final>[^/]+)\.tmp-(?P<pid>\d+)-(?P<token>[0-9a-f]{8})$")
JOURNAL_SUFFIX = ".commit-journal.json"
JOURNAL_FORMAT = "minddata.record.commit"
# A folder lock is held for a few renames; waiting longer than this means something is stuck.
LOCK_WAIT_S = 60.0
# Filesystems without flock (some network and FUSE mounts) answer with one of these.
_NO_LOCKS = (errno.ENOLCK, errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS)


def new_token() -> str:
    """``<pid>-<8 hex digits>``: the suffix of one writer's temporary files."""
    return f"{os.getpid()}-{secrets.token_hex(4)}"


def fsync_folder(folder: str) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _lock(fd: int, exclusive: bool, what: str) -> bool:
    """Take ``flock`` on ``fd``, waiting up to LOCK_WAIT_S; False where the filesystem has no locks."""
    deadline = time.monotonic() + LOCK_WAIT_S
    mode = (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB
    while True:
        try:
            fcntl.flock(fd, mode)
            return True
        except BlockingIOError:
            if time.monotonic() > deadline:
                raise DataFormatError(
                    f"record folder {what}: still locked by another writer after {LOCK_WAIT_S:.0f} s (a commit holds "
                    "the lock for a few renames). Check for a stopped (SIGSTOP) or hung process writing there.",
                    path=what,
                ) from None
            time.sleep(0.005)
        except OSError as error:
            if error.errno in _NO_LOCKS:
                return False
            raise


@contextlib.contextmanager
def folder_lock(folder: str, exclusive: bool) -> Iterator[None]:
    """The folder's lock (``flock`` on the folder itself: no lock file to leave behind).

    A folder that can't be opened is not locked: whatever is done in it next fails with an error
    that names the file it was after.
    """
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        yield
        return
    try:
        _lock(fd, exclusive, folder)
        yield
    finally:
        os.close(fd)  # releases the lock


class TempFile:
    """A writer's temporary file ``<final>.tmp-<token>``, created empty and locked while it lives."""

    def __init__(self, final: str, token: str):
        self.final = final
        self.path = f"{final}.tmp-{token}"
        folder = os.path.dirname(final)
        # Created and locked under the folder's shared lock, so a sweeper (exclusive lock) never sees
        # it between the two steps, when its lock would be free.
        with folder_lock(folder, exclusive=False):
            self.fd: int | None = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as error:
                if error.errno not in _NO_LOCKS:
                    os.close(self.fd)
                    os.remove(self.path)
                    raise

    def write_json(self, content: object) -> None:
        """Write ``content`` as the file's text and fsync it."""
        assert self.fd is not None
        data = json.dumps(content, indent=1).encode()
        view = memoryview(data)
        while view:
            view = view[os.write(self.fd, view):]
        os.fsync(self.fd)

    def release(self) -> None:
        """Drop the lock (the file stays wherever it now is)."""
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def remove(self) -> None:
        """Delete the file (if still there) and drop the lock."""
        with contextlib.suppress(FileNotFoundError):
            os.remove(self.path)
        self.release()


def _owner_gone(path: str) -> bool:
    """True when no process holds ``path``'s writer lock (the lock can be taken)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except OSError:
        return False  # held (alive) or unlockable here (can't prove anything)
    finally:
        os.close(fd)


def _journal_renames(folder: str, name: str) -> list[tuple[str, str]]:
    """The (temporary, final) paths a journal lists; only ``X.tmp-<token> -> X`` in this folder."""
    path = os.path.join(folder, name)
    try:
        with open(path, encoding="utf-8") as f:
            content = json.load(f)
    except (OSError, ValueError) as error:
        raise DataFormatError(
            f"record folder {folder}: commit journal {name} is unreadable ({type(error).__name__}); a commit was "
            "interrupted and can't be finished. Rewrite the record set, then delete the journal.",
            path=path,
        ) from None
    temps = content.get("temporary_files") if isinstance(content, dict) else None
    matches = [TEMP_NAME.match(t) if isinstance(t, str) else None for t in temps] if isinstance(temps, list) else [None]
    if content.get("format") != JOURNAL_FORMAT or not all(matches):
        raise DataFormatError(
            f"record folder {folder}: commit journal {name} is damaged (it must list the temporary files of one "
            "commit, as file names in this folder). Rewrite the record set, then delete the journal.",
            path=path,
        )
    return [(os.path.join(folder, m.string), os.path.join(folder, m["final"])) for m in matches]  # type: ignore[union-attr, index]  # all(matches) was checked above


def finish_journal(folder: str, name: str) -> None:
    """Roll an interrupted commit forward (caller holds the folder's exclusive lock)."""
    renames = _journal_renames(folder, name)
    try:
        for temp, final in renames:
            with contextlib.suppress(FileNotFoundError):  # renamed before the writer stopped
                os.replace(temp, final)
        fsync_folder(folder)
        os.remove(os.path.join(folder, name))
        fsync_folder(folder)
    except OSError as error:
        raise DataFormatError(
            f"record folder {folder}: a commit was interrupted (journal {name}) and can't be finished here: "
            f"{error.strerror or error}. Open the set once from an account that may write to the folder.",
            path=os.path.join(folder, name),
        ) from None


def sweep_folder(folder: str) -> None:
    """Finish interrupted commits and remove temporary files whose writer is gone.

    Costs one ``listdir`` when there is nothing to do. A read-only folder is left as it is (its
    temporary files are harmless), but an interrupted commit there is an error: the set is mixed.
    """
    try:
        names = os.listdir(folder)
    except OSError:
        return
    if not any(n.endswith(JOURNAL_SUFFIX) or TEMP_NAME.match(n) for n in names):
        return
    with folder_lock(folder, exclusive=True):
        names = os.listdir(folder)
        for name in names:
            if name.endswith(JOURNAL_SUFFIX):
                finish_journal(folder, name)
        for name in os.listdir(folder):
            if TEMP_NAME.match(name):
                path = os.path.join(folder, name)
                if _owner_gone(path):
                    with contextlib.suppress(OSError):
                        os.remove(path)


class CommitOnExit:
    """A writer's lifecycle around ``_state`` (``"open"`` until ``commit()`` or ``abort()``): a
    ``with`` block commits on success and aborts on an exception; a writer dropped while open aborts,
    so its temporary files go at once."""

    _state: str

    def commit(self) -> None:  # pragma: no cover - every writer defines it
        raise NotImplementedError

    def abort(self) -> None:  # pragma: no cover - every writer defines it
        raise NotImplementedError

    def __enter__(self):
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if self._state != "open":
            return
        if exc_type is None:
            self.commit()
        else:
            self.abort()

    def __del__(self) -> None:
        if getattr(self, "_state", None) == "open":
            try:
                self.abort()
            except Exception:  # noqa: BLE001 - best effort at interpreter exit
                pass
