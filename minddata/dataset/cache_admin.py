"""``minddata cache``: MindSpore's ``cache_admin`` for this host's dataset cache (no server to run).

``start`` prepares the cache folder, ``list`` shows the sessions, ``create-session`` prints a fresh
session id, ``destroy-session ID`` frees one session's shared memory and files, and ``stop`` frees
every session's.
"""

from __future__ import annotations

from typing import TextIO

from minddata.engine import cache_store

__all__ = ["run_cache_command"]


def run_cache_command(
    action: str, out: TextIO, session_id: int | None = None, root: str | None = None
) -> int:
    """Run one ``minddata cache`` action, writing its report to ``out``; returns the exit status."""
    root = root or cache_store.cache_root()
    if action == "start":
        cache_store.private_dirs(root)
        print(
            f"dataset cache ready: sessions in {root}, rows in shared memory under {cache_store.shm_dir()}",
            file=out,
        )
        return 0
    if action == "stop":
        ids = cache_store.destroy_all(root)
        print(f"destroyed {len(ids)} session(s): every segment and file is freed", file=out)
        return 0
    if action == "create-session":
        print(f"Session created: {cache_store.create_session(root)}", file=out)
        return 0
    if action == "destroy-session":
        assert session_id is not None
        if not cache_store.destroy_session(session_id, root):
            print(f"session {session_id} holds nothing in {root}", file=out)
            return 1
        print(f"destroyed session {session_id}", file=out)
        return 0
    if action == "list":
        sessions = cache_store.list_sessions(root)
        if not sessions:
            print(f"no sessions in {root}", file=out)
            return 0
        print(
            f"{'session':>12}  {'nodes':>5}  {'rows in memory':>14}  {'rows on disk':>12}  {'memory MB':>9}  {'disk MB':>8}",
            file=out,
        )
        for s in sessions:
            print(
                f"{s.session_id:>12}  {s.keys:>5}  {s.memory_rows:>14,}  {s.disk_rows:>12,}  "
                f"{s.memory_bytes / 2**20:>9.1f}  {s.disk_bytes / 2**20:>8.1f}",
                file=out,
            )
        return 0
    raise ValueError(f"unknown cache action {action!r}")
