"""Ray itself: imported on first use, with the fix when it is missing; its wrappers of minddata errors."""

from __future__ import annotations

from typing import Any

from minddata.errors import MinddataError

__all__ = ["RAY_INSTALL_HINT", "require_ray", "unwrap"]

RAY_INSTALL_HINT = "pip install 'minddata[ray]'"


def require_ray() -> Any:
    """The ``ray`` module with Ray Data, or an ImportError saying how to install it."""
    try:
        import ray
        import ray.data  # noqa: F401 - Ray Data is a separate part of the ray package
    except ImportError as error:
        raise ImportError(
            f"executor='ray' needs Ray Data, which is not installed ({error}). Install it with: {RAY_INSTALL_HINT}"
        ) from None
    return ray


def unwrap(error: BaseException) -> BaseException:
    """The minddata error inside Ray's wrappers (RayTaskError, UserCodeException), if any, else
    ``error``: a source's or an op's error reaches the user as itself, naming its file or row."""
    seen = error
    for _ in range(8):
        if isinstance(seen, MinddataError) and type(seen).__module__.startswith("minddata"):
            return seen
        cause = getattr(seen, "cause", None) or seen.__cause__
        if cause is None:
            break
        seen = cause
    return error
