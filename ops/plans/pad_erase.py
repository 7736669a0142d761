"""Plan of PadToSize: the padding on each side."""

from __future__ import annotations

__all__ = ["pad_to_size_padding"]


def pad_to_size_padding(
    op_name: str, height: int, width: int, size: tuple[int, int], offset: tuple[int, int] | None
) -> tuple[int, int, int, int]:
    """(left, top, right, bottom) padding taking a ``height`` x ``width`` image to ``size``."""
    th, tw = size
    if offset is None:
        if height > th or width > tw:
            raise ValueError(
                f"{op_name}: the target size ({th}, {tw}) must be at least the image's size ({height}, {width})"
            )
        top, left = (th - height) // 2, (tw - width) // 2
    else:
        top, left = offset
        if height + top > th or width + left > tw:
            raise ValueError(
                f"{op_name}: an image of size ({height}, {width}) at offset (top={top}, left={left}) does not fit "
                f"in the target size ({th}, {tw})"
            )
    return left, top, tw - width - left, th - height - top
