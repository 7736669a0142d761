"""Plans of the ops that cut one image into several: FiveCrop/TenCrop's boxes and SlicePatches' grid."""

from __future__ import annotations

__all__ = ["five_crop_boxes", "slice_patch_grid"]

Box = tuple[int, int, int, int]  # (top, left, height, width)


def five_crop_boxes(op_name: str, height: int, width: int, crop_height: int, crop_width: int) -> list[Box]:
    """(top, left, height, width) of the top-left, top-right, bottom-left, bottom-right and centre
    crops, in MindSpore's order; the centre's offset is ``round((side - crop) / 2)``, ties to even."""
    if crop_height > height or crop_width > width:
        raise ValueError(
            f"{op_name}: the crop size ({crop_height}, {crop_width}) is larger than the image "
            f"({height}, {width})"
        )
    bottom, right = height - crop_height, width - crop_width
    return [
        (0, 0, crop_height, crop_width),
        (0, right, crop_height, crop_width),
        (bottom, 0, crop_height, crop_width),
        (bottom, right, crop_height, crop_width),
        (int(round(bottom / 2)), int(round(right / 2)), crop_height, crop_width),
    ]


def slice_patch_grid(
    op_name: str, height: int, width: int, num_height: int, num_width: int, pad: bool
) -> tuple[int, int, list[Box]]:
    """(padded height, padded width, patch boxes in row-major order). With ``pad`` a side that does not
    divide evenly is padded at the bottom/right up to ``ceil(side / num) * num``; without it the
    remainder is dropped."""
    if pad:
        patch_h, patch_w = -(-height // num_height), -(-width // num_width)
    else:
        patch_h, patch_w = height // num_height, width // num_width
        if patch_h == 0 or patch_w == 0:
            raise ValueError(
                f"{op_name}: an image of height {height} and width {width} cannot be cut into "
                f"{num_height} x {num_width} patches of at least one pixel with SliceMode.DROP"
            )
    boxes = [
        (i * patch_h, j * patch_w, patch_h, patch_w) for i in range(num_height) for j in range(num_width)
    ]
    return (patch_h * num_height if pad else height), (patch_w * num_width if pad else width), boxes
