"""Ray itself: imported on first use, with the fix when it is missing."""

from __future__ import annotations

from typing import Any

__all__ = ["RAY_INSTALL_HINT", "require_ray"]

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

