"""Tile-level descriptions of the kernels gpusim predicts. Importing this package registers them all."""

from kernels_ir import sgemm  # noqa: F401
from kernels_ir import hgemm  # noqa: F401
from kernels_ir import attention  # noqa: F401
from kernels_ir import membound  # noqa: F401
