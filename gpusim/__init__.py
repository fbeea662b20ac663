"""gpusim: a cycle-approximate, discrete-event simulator of the NVIDIA H100 memory hierarchy."""

__version__ = "0.1.0"
