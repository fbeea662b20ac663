"""Memory units: shared memory, coalescing, L1, L2, HBM."""
