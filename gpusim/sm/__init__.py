"""The streaming multiprocessor: occupancy, warp schedulers and execution pipes."""
