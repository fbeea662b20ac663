"""Nsight Compute's names that several modules key their numbers by, defined once here."""

from __future__ import annotations

TIME = "gpu__time_duration.sum"  # the kernel's duration, launch to the last write (ns)
