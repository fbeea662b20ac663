"""The streaming multiprocessor: occupancy, warp schedulers (issue slots), execution pipes, barriers and the
instruction cache."""
