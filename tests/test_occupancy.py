"""Occupancy, hand-worked against the CUDA occupancy rules with the H100 SXM limits:
64 warps, 2048 threads, 32 CTAs, 64K registers (allocated per warp in units of 256) and 228 KB
(233472 B) of shared memory per SM, with 1 KB reserved per CTA that uses shared memory.
"""

from __future__ import annotations

import dataclasses

import pytest

from gpusim.sm.occupancy import LaunchError, occupancy


@pytest.fixture(scope="module")
def occ(h100):
    def run(threads: int, regs: int, smem: int = 0):
        return occupancy(h100.sm, threads, regs, smem, h100.shared_memory.carveouts_bytes)

    return run


def test_register_limited_256_threads_128_regs(occ):
    # 128 regs x 32 lanes = 4096 per warp (already a multiple of 256); 8 warps -> 32768 per CTA;
    # 65536 // 32768 = 2 CTAs. Warps would allow 64 // 8 = 8.
    o = occ(256, 128)
    assert o.ctas_per_sm == 2
    assert o.limiter == "registers"
    assert o.limits["registers"] == 2
    assert o.limits["warps"] == 8
    assert o.warps_per_sm == 16


def test_register_rounding_1024_threads_37_regs(occ):
    # 37 x 32 = 1184 registers per warp, rounded up to 5 x 256 = 1280; x 32 warps = 40960 per CTA.
    # A second CTA would need 81920 > 65536 (40960 > the 32768 left per CTA at 2 CTAs): 1 CTA.
    o = occ(1024, 37)
    assert o.ctas_per_sm == 1
    assert o.limiter == "registers"
    assert o.limits["warps"] == 2


def test_register_rounding_changes_the_answer(occ):
    # 128 threads (4 warps) x 33 regs: 33 x 32 = 1056 per warp, rounded up to 1280 -> 5120 per CTA;
    # 65536 // 5120 = 12 CTAs. Unrounded (4224 per CTA) it would be 15.
    o = occ(128, 33)
    assert o.limits["registers"] == 12
    assert o.ctas_per_sm == 12
    assert o.limiter == "registers"


def test_shared_memory_limited_with_1kb_reservation(occ):
    # 76 KB = 77824 B per CTA; three of them would be exactly 233472 B = the whole SM, but each CTA also
    # reserves 1 KB: 3 x 78848 = 236544 > 233472, so only 2 fit. Registers: 4 warps x 1024 -> 16.
    o = occ(128, 32, 76 * 1024)
    assert o.ctas_per_sm == 2
    assert o.limiter == "shared memory"
    # 2 x 78848 = 157696 B: the smallest carve-out that holds it is 164 KB (167936 B).
    assert o.smem_carveout_bytes == 167936


def test_no_reservation_without_shared_memory(occ):
    # No shared memory: the 1 KB reservation does not apply and shared memory does not limit.
    # 32 threads (1 warp) x 16 regs = 512 per CTA: registers allow 128, warps 64, the CTA limit is 32.
    o = occ(32, 16, 0)
    assert o.ctas_per_sm == 32
    assert o.limiter == "blocks"
    assert o.smem_carveout_bytes == 0


def test_warps_limited(occ):
    # 512 threads = 16 warps; 64 // 16 = 4 CTAs. Registers: 16 x 32 = 512 per warp x 16 = 8192 -> 8.
    o = occ(512, 16)
    assert o.ctas_per_sm == 4
    assert o.limiter in ("warps", "threads")  # 2048 threads = 64 warps: the two limits coincide on H100
    assert o.limits["warps"] == 4
    assert o.limits["registers"] == 8


def test_partial_warp_counts_as_a_whole_warp(occ):
    # 48 threads occupy 2 warps: 64 // 2 = 32 CTAs by warps, 32 by the CTA limit.
    o = occ(48, 32)
    assert o.warps_per_cta == 2
    assert o.limits["warps"] == 32


def test_carveout_is_the_smallest_that_fits(occ):
    # 12 KB x 4 CTAs: 256 threads x 64 regs -> 8 warps x 2048 = 16384 per CTA -> 4 by registers;
    # shared: 4 x (12288 + 1024) = 53248 B -> the 64 KB carve-out (65536 B).
    o = occ(256, 64, 12 * 1024)
    assert o.ctas_per_sm == 4
    assert o.smem_carveout_bytes == 65536


def test_too_many_registers_raises_naming_registers(occ):
    # 255 x 32 = 8160 -> 8192 per warp x 32 warps = 262144 > 65536 registers per block.
    with pytest.raises(LaunchError, match="regist") as e:
        occ(1024, 255)
    assert "1024" in str(e.value) and "65536" in str(e.value)


def test_too_much_shared_memory_raises_naming_shared_memory(occ):
    # 240 KB = 245760 B > the 227 KB (232448 B) a block may use.
    with pytest.raises(LaunchError, match="shared memory") as e:
        occ(256, 32, 240 * 1024)
    assert "232448" in str(e.value)


def test_largest_block_smem_fits_exactly_once(occ):
    # 232448 + 1024 reserved = 233472 = the whole SM: exactly one CTA.
    o = occ(256, 32, 232448)
    assert o.ctas_per_sm == 1
    assert o.limiter == "shared memory"
    assert o.smem_carveout_bytes == 233472


@pytest.mark.parametrize("threads, regs, what", [
    (1025, 32, "1025"),   # more threads than a block may have
    (0, 32, "threads"),
    (256, 0, "regs_per_thread=0"),
    (256, 256, "regs_per_thread=256"),  # over the 255-register ISA limit
])
def test_invalid_launch_parameters(occ, threads, regs, what):
    with pytest.raises(LaunchError, match=what):
        occ(threads, regs)


def test_not_even_one_cta_names_the_resource(h100):
    # An SM with fewer registers than one CTA needs: 16384 registers per SM, 1024 threads x 32 regs
    # = 32 warps x 1024 = 32768 per CTA (allowed per block, but 16384 // 32768 = 0 per SM).
    small = dataclasses.replace(h100.sm, registers_per_sm=16384)
    with pytest.raises(LaunchError, match="registers") as e:
        occupancy(small, 1024, 32, 0, h100.shared_memory.carveouts_bytes)
    assert "not even one CTA" in str(e.value)
