"""The shapes the ladders run their rungs at, one source for the CLI (`gpusim ladder`) and the app's pages."""

from __future__ import annotations

import math

DEFAULT_SHAPES = {"sgemm": "4096,4096,4096", "hgemm": "4096,4096,4096", "attention": "4,16,4096,128",
                  "membound": "67108864"}
# kernels whose one dimension is the side of a square matrix (N x N floats): a ladder given N elements runs them at
# sqrt(N) per side, so every rung of the membound ladder moves the same data (the transposes measured at 8192 x 8192
# beside STREAM at 67,108,864 floats)
SQUARE_PREFIXES = ("mem_transpose",)


class ShapeError(ValueError):
    """A ladder shape a rung cannot run at (one line)."""


def rung_shape(name: str, shape: tuple[int, ...]) -> tuple[int, ...]:
    """The shape a ladder runs ``name`` at: ``shape`` itself, or for a square-matrix kernel (:data:`SQUARE_PREFIXES`)
    given a one-dimensional ``(N,)``, the side ``sqrt(N)`` (N elements either way)."""
    if len(shape) == 1 and name.startswith(SQUARE_PREFIXES):
        side = math.isqrt(shape[0])
        if side * side != shape[0]:
            raise ShapeError(f"--shape {shape[0]}: the {name} rung is an N x N matrix of the same elements, and "
                             f"{shape[0]:,} is not a square (try {side * side:,} or {(side + 1) ** 2:,})")
        return (side,)
    return tuple(shape)
