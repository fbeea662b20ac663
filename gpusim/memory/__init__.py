"""Memory units, each a spec and its run-time unit: shared memory, coalescing, L1 and the LSU path, the L2 port,
L2, HBM and the TMA engine."""
