"""Every peak rate gpusim reports against, computed once from the config at the SM clock the model ran.

The SM side (issue slots, pipes, the L1TEX pipe, shared memory, an SM's port to L2) keeps its rates per SM cycle, so
its peaks per second follow the clock the kernel ran at (``sm__cycles_elapsed.avg.per_second``: 1.98 GHz for FP32 and
memory work, lower under tensor work, :func:`gpusim.metrics.sm_clock_hz_for`). The memory side (L2, its write path,
HBM) keeps its rates per second whatever the SM clock (:func:`gpusim.chip.at_sm_clock`). Every verdict, percentage,
roofline and "% of peak" in gpusim reads its peak from :func:`peaks`; none computes its own.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpusim.config import HardwareConfig


@dataclass(frozen=True)
class Peaks:
    """Peak rates of one GPU at one SM clock, in the units their names carry (chip-wide unless ``per_sm``)."""

    sm_clock_hz: float
    sm_count: int
    fp32_flops_per_second: float  # FFMA: 2 FLOPs per lane per cycle
    mma_sync_flops_per_second: float  # bf16 mma.sync, measured (66% of the dense peak)
    tensor_flops_per_second: float  # bf16 dense wgmma (the datasheet's dense tensor peak at this clock; mma.sync's
    # on a GPU without wgmma)
    issue_instructions_per_second: float  # warp instructions, every scheduler of every SM
    shared_bytes_per_second: float  # shared-memory wavefronts (32 banks x 4 B) per cycle, every SM
    l1_bytes_per_second: float  # L1 data path, every SM
    l1tex_wavefronts_per_second: float  # L1TEX pipe: a 128-B line or a shared wavefront per cycle, every SM
    l2_port_bytes_per_second_per_sm: float  # one SM's path to L2
    l2_bytes_per_second: float  # the L2's read bandwidth (measured: the most an L2-resident stream pulls)
    l2_write_bytes_per_second: float  # the L2's write path, whole 128-B lines (stores and fills): the most measured
    l2_write_model_bytes_per_second: float  # ... the rate the model runs it at (its line and sector costs)
    hbm_bytes_per_second: float  # sustained (measured): the rate the model runs HBM at
    hbm_datasheet_bytes_per_second: float  # the datasheet's peak (what ncu's dram__throughput is a share of)

    def tensor_for(self, kind: str) -> float:
        """The tensor peak of an instruction kind: ``wgmma`` (dense) or ``mma.sync`` (measured)."""
        return self.tensor_flops_per_second if kind == "wgmma" else self.mma_sync_flops_per_second


def peaks(cfg: HardwareConfig, sm_clock_hz: float | None = None) -> Peaks:
    """The peaks of ``cfg`` with the SMs at ``sm_clock_hz`` (default: the config's clock). ``cfg`` may be the
    config as loaded or as :func:`gpusim.chip.at_sm_clock` rescaled it: the memory side's rates per second are the
    same in both."""
    clock = float(sm_clock_hz or cfg.chip.sm_clock_hz)
    n = cfg.chip.sm_count
    p, sm, l1, l2 = cfg.pipes, cfg.sm, cfg.l1, cfg.l2
    per_sm = n * clock
    mem_clock = cfg.chip.sm_clock_hz  # the clock the memory side's per-cycle numbers are stated at
    line_cycles = l2.write_cycles_per_line + l2.write_cycles_per_sector * l1.line_bytes / l2.sector_bytes
    return Peaks(
        sm_clock_hz=clock,
        sm_count=n,
        fp32_flops_per_second=2.0 * p.fp32_lanes_per_sm * per_sm,
        mma_sync_flops_per_second=p.mma_sync_flops_per_cycle_per_sm * per_sm,
        tensor_flops_per_second=p.dense_tensor_flops_per_cycle_per_sm * per_sm,  # wgmma; mma.sync before Hopper
        issue_instructions_per_second=cfg.scheduler.issue_instructions_per_cycle * sm.subpartitions * per_sm,
        shared_bytes_per_second=cfg.shared_memory.wavefronts_per_cycle * cfg.shared_memory.banks
        * cfg.shared_memory.bank_width_bytes * per_sm,
        l1_bytes_per_second=l1.data_bytes_per_cycle * per_sm,
        l1tex_wavefronts_per_second=l1.lines_per_cycle * per_sm,
        l2_port_bytes_per_second_per_sm=l2.sm_port_bytes_per_cycle * clock,
        l2_bytes_per_second=l2.bandwidth_bytes_per_cycle * mem_clock,
        l2_write_bytes_per_second=l2.write_peak_bytes_per_second,
        l2_write_model_bytes_per_second=l1.line_bytes / line_cycles * mem_clock,
        hbm_bytes_per_second=cfg.hbm.achievable_bandwidth_bytes_per_second,
        hbm_datasheet_bytes_per_second=cfg.hbm.peak_bandwidth_bytes_per_second,
    )
