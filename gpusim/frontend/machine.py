"""The SIMT emulator: a batch of CTAs of one launch executing a kernel's SASS, lane by lane as numpy vectors.

All lanes of the batch (every thread of every emulated CTA) share one register file of shape (registers, lanes).
Control flow follows the *minimum-PC* rule: the lanes are kept in groups by program counter, and the group with the
lowest PC runs next (all lanes at that PC together). Lanes that branch apart reconverge where their paths meet again,
as the hardware's convergence barriers make them, and every lane reaches a ``__syncthreads`` before any lane of its CTA
passes it. Each executed instruction is one *step*: the emulator hands the step (the instruction, the lanes at it, the
lanes its guard lets execute, the addresses a memory instruction touched) to a recorder
(:mod:`gpusim.frontend.trace`), which builds the kernel description from the steps.

Long loops are not executed trip by trip: once a loop's registers have advanced by the same amount over two
iterations (its induction variables: counters, addresses), the emulator finds each lane's trip count by probing single
iterations far ahead (side-effect free) and *jumps* to the last iterations, which it executes for real. The recorder
checks that the addresses there are the ones the observed strides predict; where they are not, the kernel is emulated
again without the jump (bounded by ``max_steps``).
"""

from __future__ import annotations

import math

import heapq
from dataclasses import dataclass, field

import numpy as np

from gpusim.frontend import hopper, regs
from gpusim.frontend.args import COMPILER_SCRATCH
from gpusim.frontend import semantics as S
from gpusim.frontend.isa import Addr, Const, Decoded, Pred, Reg, Target
from gpusim.frontend.memory import (CONST_BLOCK_DIM, CONST_CLUSTER_CTAS, CONST_CLUSTER_DIM, CONST_CLUSTER_RCP,
                                    CONST_DESC, CONST_EXPLICIT_CLUSTER, CONST_GRID_DIM, CONST_NCLUSTER, CONST_STACK,
                                    DATA, ORDER, PARAM_BASE, UNKNOWN, EmulationError, GlobalMemory, MemAccess,
                                    set_words_taint)
from gpusim.patterns import PREDICATED_OFF

WARP = 32
INSTRUCTION_BYTES = 16  # an sm_90 instruction's size (a relative branch counts from the next one)
SHARED_WINDOW_BASE = 0x400  # sm_90 reserves the first 1 KB of a CTA's shared window (UMOV UR4, 0x400 in the SASS)
SHARED_WINDOW_MASK = 0xFFFFFF  # the window address's low 24 bits are the byte in the CTA's shared memory
CONST_PARAM_ADDR = 0x198  # the generic address of the parameters (&param of a __grid_constant__ tensor map)
SHARED_WINDOW_HI = 0x7E00  # the high word of a generic address in the shared window (global tensors sit at 0x7F00...)
MAX_PERIOD = 4  # the longest period of a loop's induction variables looked for (a 4-stage pipeline's buffers)
WARM_ARRIVALS = 2 * MAX_PERIOD + 1  # iterations emulated (after the first) before a loop's strides are trusted

MEMORY = {"LDG", "STG", "LD", "ST", "LDS", "STS", "LDL", "STL", "LDSM", "STSM", "LDGSTS", "ATOMS", "ATOMG", "ATOM",
          "RED", "REDG"}
CONTROL = {"BRA", "JMP", "BRX", "JMX", "CALL", "RET", "EXIT"}
# driver constants a kernel may read that gpusim does not model, as a user knows what reads them (found by compiling
# the construct and reading its SASS)
DRIVER_CONSTANTS = {0x40: "the grid-sync workspace of a cooperative launch (cooperative_groups::this_grid().sync()): "
                          "a grid-wide barrier is not modelled; split the kernel at it into two launches",
                    0x48: "the grid-sync workspace of a cooperative launch (cooperative_groups::this_grid().sync()): "
                          "a grid-wide barrier is not modelled; split the kernel at it into two launches"}
# device-runtime functions a kernel may call through constant bank 4, as a user knows them
RUNTIME_CALLS = {"vprintf": "printf", "malloc": "malloc", "free": "free", "__assertfail": "assert"}
BARRIER = {"BAR"}
BARRIER_IDS = 16  # a CTA's named barriers (PTX bar.sync: 0..15)
UNSUPPORTED_WHY = {
    **hopper.REFUSED, "BPT": "breakpoints and traps stop the kernel", "KILL": "KILL ends threads abnormally",
}


@dataclass
class Step:
    inst: Decoded
    group: np.ndarray  # (lanes,) bool: lanes at this instruction
    exec: np.ndarray  # (lanes,) bool: of them, those whose guard holds
    iters: np.ndarray | None  # (lanes,) int: each lane's iteration of the loop being summarised (-1 outside)
    mem: MemAccess | None = None
    cond_taint: int = 0  # a branch: its predicate's taint
    distinct: np.ndarray | None = None  # MATCH: (warps,) distinct values among each warp's executing lanes
    issues: np.ndarray | None = None  # BSYNC: (warps,) times each warp issues it (once per group of its lanes arriving)
    bar: np.ndarray | None = None  # BAR: (warps,) the barrier id each warp names (a register's value, or the immediate)


@dataclass
class LoopJump:
    """A jump over a loop's middle iterations (see the module docstring)."""

    head: int  # instruction index of the loop's first instruction
    back: int  # instruction index of its backward branch
    arrivals: int  # iterations executed before the jump (WARM_ARRIVALS)
    trips: np.ndarray  # (lanes,) trips of each lane (0: not in the loop)
    resume: np.ndarray  # (lanes,) iteration each lane resumed at
    period: int = 1  # the period of its induction variables


@dataclass
class Launch:
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    smem_bytes: int  # static + dynamic shared memory of a CTA
    local_bytes: int  # per-thread local memory (stack frame)
    params: bytes  # the kernel parameters as laid out in constant bank 0 from PARAM_BASE
    cluster: tuple[int, int, int] = (1, 1, 1)  # thread-block cluster (__cluster_dims__): its CTAs emulated together
    const3: bytes = b""  # constant bank 3: the module's __constant__ variables, as it initialises them
    const4: bytes = b""  # constant bank 4: the addresses of the module's __device__ variables (as loaded)
    calls: tuple = ()  # (offset in bank 4, function): device-runtime functions the kernel calls (printf's vprintf)
    const2: bytes = b""  # constant bank 2: the kernel's own constants from ptxas (a switch's jump tables)


@dataclass
class Machine:
    program: list[Decoded]
    launch: Launch
    ctas: list[tuple[int, int, int]]
    gmem: GlobalMemory
    recorder: object = None
    max_steps: int = 200_000
    no_jump: frozenset = frozenset()  # loops (head index) not to jump
    notes: list = field(default_factory=list)
    data: bool = False  # compute every value (the data too), not only what addresses and control need

    def __post_init__(self) -> None:
        bx, by, bz = self.launch.block
        self.threads = bx * by * bz
        self.T = -(-self.threads // WARP) * WARP
        self.N = len(self.ctas) * self.T
        n = self.N
        tid = np.tile(np.arange(self.T), len(self.ctas))
        self.valid = tid < self.threads
        self.tid = (tid % bx, (tid // bx) % by, tid // (bx * by))
        cta = np.repeat(np.arange(len(self.ctas)), self.T)
        self.cta_of = cta
        ctas = np.array(self.ctas, dtype=np.int64).reshape(-1, 3)
        self.ctaid = tuple(ctas[cta, k] for k in range(3))
        cx, cy, cz = self.launch.cluster
        # a CTA's rank in its cluster (%cluster_ctarank, SR_CgaCtaId: the byte of a shared::cluster address above the
        # CTA's 24-bit window), and each batch CTA's partners by rank
        rank_of = (ctas[:, 0] % cx) + cx * ((ctas[:, 1] % cy) + cy * (ctas[:, 2] % cz))
        self.rank = rank_of[cta]
        index = {tuple(int(v) for v in c): i for i, c in enumerate(ctas)}
        self.partners: list[dict[int, int]] = []
        for c in ctas:
            origin = (c[0] - c[0] % cx, c[1] - c[1] % cy, c[2] - c[2] % cz)
            self.partners.append({r: index[m] for r in range(cx * cy * cz)
                                  if (m := (origin[0] + r % cx, origin[1] + (r // cx) % cy, origin[2] + r // (cx * cy)))
                                  in index})
        self.lane = tid % WARP
        self.warp = tid // WARP  # warp within its CTA
        nreg = 1 + max([_max_reg(d) for d in self.program] + [0])
        self.R = np.zeros((256, n), dtype=np.uint32)
        self.UR = np.zeros((64, n), dtype=np.uint32)
        self.P = np.zeros((8, n), dtype=bool)
        self.UP = np.zeros((8, n), dtype=bool)
        self.P[7] = self.UP[7] = True
        # taints (gpusim.frontend.memory: DATA, UNKNOWN) of each register: a number, or a per-lane vector
        self.Rt, self.URt, self.Pt, self.UPt = [0] * 256, [0] * 64, [0] * 8, [0] * 8
        self.nreg = nreg
        self.smem = np.zeros((len(self.ctas), max(self.launch.smem_bytes, 4)), dtype=np.uint8)
        self.smem_taint = np.zeros(-(-max(self.launch.smem_bytes, 4) // 4), dtype=np.uint8)  # per 4-byte word
        self.local = np.zeros((n, max(self.launch.local_bytes, 4)), dtype=np.uint8)
        self.local_taint = np.zeros(-(-max(self.launch.local_bytes, 4) // 4), dtype=np.uint8)
        c0 = bytearray(PARAM_BASE + len(self.launch.params))
        c0[CONST_BLOCK_DIM:CONST_BLOCK_DIM + 12] = np.array(self.launch.block, dtype=np.uint32).tobytes()
        c0[CONST_GRID_DIM:CONST_GRID_DIM + 12] = np.array(self.launch.grid, dtype=np.uint32).tobytes()
        c0[CONST_STACK:CONST_STACK + 4] = np.array([self.launch.local_bytes], dtype=np.uint32).tobytes()
        c0[CONST_PARAM_ADDR:CONST_PARAM_ADDR + 8] = np.array([hopper.PARAM_WINDOW], dtype=np.uint64).tobytes()
        cl = self.launch.cluster
        c0[CONST_EXPLICIT_CLUSTER:CONST_EXPLICIT_CLUSTER + 4] = np.array([cl != (1, 1, 1)], dtype=np.uint32).tobytes()
        c0[CONST_CLUSTER_DIM:CONST_CLUSTER_DIM + 12] = np.array(cl, dtype=np.uint32).tobytes()
        c0[CONST_CLUSTER_RCP:CONST_CLUSTER_RCP + 8] = np.array([1.0 / cl[0], 1.0 / cl[1]], dtype=np.float32).tobytes()
        clusters = [g // c for g, c in zip(self.launch.grid[:2], cl[:2], strict=True)]
        c0[CONST_NCLUSTER:CONST_NCLUSTER + 8] = np.array(clusters, dtype=np.uint32).tobytes()
        c0[CONST_CLUSTER_CTAS:CONST_CLUSTER_CTAS + 4] = np.array([math.prod(cl)], dtype=np.uint32).tobytes()
        c0[PARAM_BASE:] = self.launch.params
        self.const0 = bytes(c0)
        self.index_of = {d.addr: d.index for d in self.program}
        # instructions whose results only ever become data, and whether loads may skip their values (regs.data_only)
        self.skip, self.skip_values = (set(), False) if self.data else regs.data_only(self.program, S.SEMANTICS)
        self.full = True
        self.steps = 0
        self.exited = ~self.valid  # lanes that have executed EXIT (or were never launched)
        self._bar_wait: dict = {}  # (cta, barrier id) -> {pc: lanes waiting there}
        self._bar_count: dict = {}  # (cta, barrier id) -> threads arrived
        self._bar_expect: dict = {}  # (cta, barrier id) -> threads a counted barrier (bar.sync id, n) waits for
        self._bar_red: dict = {}  # (cta, barrier id) -> a barrier reduction's op, lanes arrived, lanes true, taint
        self.bar_result: dict = {}  # cta -> (the last barrier reduction's result, its taint): B2R.RESULT
        self._jump_closed = False  # the jumped loop has ended: no loop is jumped again
        self.iters = np.full(n, -1, dtype=np.int64)  # iteration of the loop being tracked, per lane
        self.tracked: tuple[int, int] | None = None  # (head, back) of the loop whose iterations are counted
        self.snapshots: list = []
        self.jump: LoopJump | None = None
        self.probing = False
        self.loop_data = False  # the tracked loop's addresses or trip count depend on loaded data
        # instructions a forward branch on loaded data jumps over (a compare-exchange's swap, a bin's leader), or that
        # follow an exit on data: which of a warp's lanes reach them depends on the data, so their accesses differ
        # between CTAs (Kernel.varying)
        self.data_controlled: set[int] = set()
        self.watch = None  # (instruction index, operands) whose values a trip-count probe records
        self.watched = None
        self.hopper = hopper.State(self) if any(d.mnemonic in hopper.MNEMONICS for d in self.program) else None
        self.back_edges = {d.index: self.index_of.get(_target(d)) for d in self.program
                           if d.mnemonic in ("BRA", "JMP") and _target(d) is not None and _target(d) <= d.addr}
        # convergence regions (BSSY Bn, reconvergence address): (first index, index its lanes reconverge at)
        self.regions = [(d.index, self.index_of.get(int(d.ops[1].bits), len(self.program))) for d in self.program
                        if d.mnemonic == "BSSY" and len(d.ops) > 1 and hasattr(d.ops[1], "bits")]
        self._bmask: dict[str, np.ndarray] = {}  # convergence barrier -> the lanes its region still waits for
        self._held: dict[int, np.ndarray] = {}  # BSYNC -> lanes waiting there for the rest of their region
        self._forced: set[int] = set()  # BSYNCs released with lanes still missing (nothing else could run)

    # --- operands the semantics read ------------------------------------------------------------------------------
    def const32(self, c: Const, em: np.ndarray | None = None) -> np.ndarray:
        """Four bytes of a constant bank for every lane (an indexed read checks the bounds of ``em``'s lanes only:
        the others' index registers hold whatever they last held)."""
        if c.bank == 3:
            note = ("reads __constant__ memory as the module initialises it (zero where it does not), not what the "
                    "host copies there (cudaMemcpyToSymbol)")
            if note not in self.notes:
                self.notes.append(note)
            return self._bank(self.launch.const3, c, "the module's __constant__ data", em=em)
        if c.bank == 4:
            return self._bank(self.launch.const4, c, "the addresses of the module's __device__ variables", True, em)
        if c.bank == 2:
            return self._bank(self.launch.const2, c, "the kernel's constants from ptxas (jump tables)", em=em)
        if c.bank != 0:
            raise EmulationError(f"reads constant bank {c.bank} (c[0x{c.bank:x}][0x{c.offset:x}]), which gpusim does "
                                 "not model")
        if c.reg is not None:  # an indexed read (a parameter array): its lanes' words, in bounds
            return self._bank(self.const0, c, "the kernel parameters")
        o = c.offset
        known = o < CONST_GRID_DIM + 12 or o in (CONST_STACK, CONST_DESC, CONST_DESC + 4, CONST_PARAM_ADDR,
                                                 CONST_PARAM_ADDR + 4, CONST_EXPLICIT_CLUSTER, CONST_CLUSTER_DIM,
                                                 CONST_CLUSTER_DIM + 4, CONST_CLUSTER_DIM + 8, CONST_CLUSTER_RCP,
                                                 CONST_CLUSTER_RCP + 4, CONST_NCLUSTER, CONST_NCLUSTER + 4,
                                                 CONST_CLUSTER_CTAS) or o >= PARAM_BASE
        if not known or o + 4 > len(self.const0):
            what = "past the kernel parameters" if o >= PARAM_BASE else DRIVER_CONSTANTS.get(
                o & ~7, "a driver constant gpusim does not model")
            raise EmulationError(f"reads c[0x0][0x{o:x}], {what}")
        v = int.from_bytes(self.const0[o:o + 4], "little")
        return np.full(self.N, v, dtype=np.uint32)

    def _bank(self, data: bytes, c: Const, what: str, addresses: bool = False,
              em: np.ndarray | None = None) -> np.ndarray:
        """Four bytes at ``c`` of a constant bank holding ``data`` (an immediate offset, or a register's plus one).
        ``addresses``: bank 4, whose slots for device-runtime functions (printf's vprintf) are refused."""
        off = c.offset if c.reg is None else (self.R[c.reg.idx] if not c.reg.uniform
                                              else self.UR[c.reg.idx]).astype(np.int64) + c.offset
        # the offsets read: an indexed read's executing lanes only (the others' index registers hold anything)
        read = np.asarray(off)[em] if c.reg is not None and em is not None else np.asarray(off)
        if addresses:
            for at, name in self.launch.calls:
                if np.any((read >= at) & (read < at + 8)):
                    user = RUNTIME_CALLS.get(name, "a device-runtime function")
                    raise EmulationError(f"calls {user} ({name}, its address in c[0x4][0x{at:x}]): not modelled; leave "
                                         "it out of the kernel gpusim predicts")
        bad = (read < 0) | (read + 4 > len(data))
        if bad.any():
            o = int(read[bad].flat[0])
            raise EmulationError(f"reads c[0x{c.bank:x}][0x{o:x}], past {what} ({len(data)} bytes)")
        if c.reg is None:
            return np.full(self.N, int.from_bytes(data[off:off + 4], "little"), dtype=np.uint32)
        if em is not None:  # lanes that do not execute read nothing
            off = np.where(em, off, 0)
        return np.frombuffer(data, dtype=np.uint8)[off[:, None] + np.arange(4)].copy().view(np.uint32).reshape(-1)

    def special(self, name: str) -> np.ndarray:
        n = self.N
        table = {"SR_TID.X": self.tid[0], "SR_TID.Y": self.tid[1], "SR_TID.Z": self.tid[2],
                 "SR_CTAID.X": self.ctaid[0], "SR_CTAID.Y": self.ctaid[1], "SR_CTAID.Z": self.ctaid[2],
                 "SR_LANEID": self.lane, "SR_CgaCtaId": self.rank, "SRZ": np.zeros(n, np.int64),
                 "SR_LTMASK": (1 << self.lane) - 1, "SR_LEMASK": (2 << self.lane) - 1,
                 "SR_EQMASK": 1 << self.lane, "SR_GTMASK": ~((2 << self.lane) - 1),
                 "SR_GEMASK": ~((1 << self.lane) - 1), "SR_VIRTUALSMID": np.zeros(n, np.int64),
                 "SR_SMID": np.zeros(n, np.int64), "SR_CLOCKLO": np.full(n, self.steps),
                 "SR_CLOCKHI": np.zeros(n, np.int64), "SR_GLOBALTIMERLO": np.full(n, self.steps),
                 "SR_GLOBALTIMERHI": np.zeros(n, np.int64), "SR_WARPID": self.warp,
                 "SR_SWINHI": np.full(n, SHARED_WINDOW_HI), "SR_SWINLO": np.zeros(n, np.int64)}
        if name not in table:
            raise EmulationError(f"reads special register {name}, which gpusim does not model")
        return (np.asarray(table[name]).astype(np.int64) & 0xFFFFFFFF).astype(np.uint32)

    def dest_regs(self, d: Decoded) -> int:
        """Registers an MMA instruction writes (its accumulator fragment)."""
        if d.mnemonic == "HMMA":
            shape = next((k for k in d.mods if k[0].isdigit()), "16816")
            acc32 = d.has("F32")
            if shape == "16816" or shape == "1688":
                return 4 if acc32 else 2
            return 4
        if d.mnemonic in ("IMMA", "DMMA"):
            return 4
        return 1

    # --- memory instructions --------------------------------------------------------------------------------------
    def _address(self, d: Decoded, a: Addr, space: str) -> np.ndarray:
        n = self.N
        if space == "global":
            # .E: a 64-bit address, the register pair's (``ATOMG.E.CAS ... [R4]`` writes no ``.64`` on it)
            wide = a.reg is not None and (a.reg.wide or d.has("E"))
            if a.reg is not None and not a.reg.zero:
                base = S.u64(self, a.reg) if wide else self.R[a.reg.idx].astype(np.uint64)
            else:
                base = np.zeros(n, np.uint64)
            if a.ureg is not None and not a.ureg.zero:
                base = base + (S.u64(self, a.ureg) if not (a.reg and wide) else
                               self.UR[a.ureg.idx].astype(np.uint64))
            return (base.astype(np.int64) + a.offset)
        v = self._window(a)
        if space == "shared":
            v = (v & SHARED_WINDOW_MASK) - SHARED_WINDOW_BASE
        return v

    def _window(self, a: Addr) -> np.ndarray:
        """A shared or local address as the instruction forms it (register, uniform register, offset)."""
        v = np.zeros(self.N, dtype=np.int64)
        if a.reg is not None and not a.reg.zero:
            v += self.R[a.reg.idx].astype(np.int64) * a.reg.scale
        if a.ureg is not None and not a.ureg.zero:
            v += self.UR[a.ureg.idx].astype(np.int64)
        return v + a.offset

    def cluster_rank(self, d: Decoded, a: Addr) -> np.ndarray:
        """The cluster rank a shared::cluster address names (its byte above the CTA's 24-bit window: ``mapa``)."""
        return (self._window(a) >> 24) & 0xFF

    def partner(self, c: int, rank: int, d: Decoded) -> int:
        """The batch CTA of rank ``rank`` in batch CTA ``c``'s cluster."""
        p = self.partners[c].get(rank)
        if p is None:
            if self.launch.cluster == (1, 1, 1):
                raise EmulationError(f"{d.where}: the kernel reaches CTA rank {rank} of a cluster, but the launch has "
                                     "no cluster: give the launch's cluster with --cluster X[,Y,Z]")
            raise EmulationError(f"{d.where}: CTA {self.ctas[c]} addresses rank {rank} of its cluster of "
                                 f"{self.launch.cluster}, which has no such CTA")
        return p

    @staticmethod
    def width_of(d: Decoded) -> int:
        for k, w in (("128", 16), ("64", 8), ("U8", 1), ("S8", 1), ("U16", 2), ("S16", 2)):
            if k in d.mods:
                return w
        return 4

    def _check_shared(self, d: Decoded, off: np.ndarray, width: int, em: np.ndarray, what: str = "") -> None:
        o = off[em]
        if len(o) and ((o < 0).any() or (o + width > self.launch.smem_bytes).any()):
            bad = int(o[(o < 0) | (o + width > self.launch.smem_bytes)][0])
            raise EmulationError(f"{d.where}: {what or 'accesses'} shared byte {bad}, outside the CTA's "
                                 f"{self.launch.smem_bytes} B of shared memory")
        if len(o) and (o % min(width, 16)).any():
            raise EmulationError(f"{d.where}: a misaligned {width}-byte shared-memory access")

    def _smem_read(self, off: np.ndarray, width: int, em: np.ndarray) -> np.ndarray:
        o = np.where(em, off, 0)
        flat = self.smem.reshape(-1)
        base = self.cta_of * self.smem.shape[1] + o
        return flat[base[:, None] + np.arange(width)]

    def _smem_write(self, off: np.ndarray, data: np.ndarray, em: np.ndarray) -> None:
        if self.probing:
            return
        width = data.shape[1]
        flat = self.smem.reshape(-1)
        base = (self.cta_of * self.smem.shape[1] + off)[em]
        flat[base[:, None] + np.arange(width)] = data[em]

    def _regs_bytes(self, reg: Reg, width: int) -> np.ndarray:
        """(lanes, width) bytes of the source register(s) of a store."""
        words = max(width // 4, 1)
        arr = self.UR if reg.uniform else self.R
        if reg.zero:
            vals = np.zeros((self.N, words), dtype=np.uint32)
        else:
            vals = np.stack([arr[reg.idx + k] for k in range(words)], axis=1)
        b = vals.view(np.uint8).reshape(self.N, -1)
        return b[:, :width]

    def _put_loaded(self, d: Decoded, dst: Reg, data: np.ndarray, em: np.ndarray, t: int) -> None:
        width = data.shape[1]
        if width < 4:
            signed = d.has("S8", "S16")
            word = np.zeros((self.N, 4), dtype=np.uint8)
            word[:, :width] = data
            v = word.view(np.uint32).reshape(-1)
            if signed:
                shift = np.uint32(32 - 8 * width)
                v = ((v << shift).view(np.int32) >> int(shift)).view(np.uint32)
            S.put(self, dst, v, em, t)
            return
        words = np.ascontiguousarray(data).view(np.uint32).reshape(self.N, -1)
        for k in range(words.shape[1]):
            S.put(self, Reg(dst.uniform, dst.idx + k), words[:, k], em, t)

    def memory(self, d: Decoded, em: np.ndarray) -> MemAccess:
        mn = d.mnemonic
        ops = d.ops
        width = self.width_of(d)
        if self.probing:  # a trip-count probe: the loop's control never depends on memory (checked), so no access
            self._probe_memory(d)
            return MemAccess("global", "ld", width, np.full(self.N, -1, dtype=np.int64))
        if mn in ("LDG", "LD", "LDS", "LDL"):
            dst, a = ops[0], ops[1]
            space = {"LDG": "global", "LD": self._generic(d, a, em), "LDS": "shared", "LDL": "local"}[mn]
            return self._load(d, dst, a, space, width, em)
        if mn in ("STG", "ST", "STS", "STL"):
            a, src = ops[0], ops[1]
            space = {"STG": "global", "ST": self._generic(d, a, em), "STS": "shared", "STL": "local"}[mn]
            return self._store(d, a, src, space, width, em)
        if mn == "LDSM":
            return self._ldsm(d, em)
        if mn == "STSM":
            return self._stsm(d, em)
        if mn == "LDGSTS":
            return self._ldgsts(d, em)
        if mn in ("ATOMS", "ATOMG", "ATOM", "RED", "REDG"):
            return self._atomic(d, em)
        raise S.unsupported(d)

    def _generic(self, d: Decoded, a: Addr, em: np.ndarray) -> str:
        """The space a generic LD/ST addresses: shared when the address lies in the shared window."""
        addr = self._address(d, a, "global")
        hi = (addr >> 32)[em]
        if not len(hi):
            return "global"
        if (hi == SHARED_WINDOW_HI).all():
            # another CTA's shared memory: its rank in the byte above the window (cluster.map_shared_rank)
            if (((addr >> 24) & 0xFF)[em] != self.rank[em]).any():
                raise S.unsupported(d, "a generic access to another CTA's shared memory of the cluster (distributed "
                                       "shared memory, cluster.map_shared_rank)")
            return "shared"
        if (hi == SHARED_WINDOW_HI).any():
            raise EmulationError(f"{d.where}: one generic access reaches both shared and global memory")
        return "global"

    def _probe_memory(self, d: Decoded) -> None:
        """Loads in a probe write unknown values (the loop's control does not read them)."""
        mn = d.mnemonic
        returns = mn in ("ATOMS", "ATOMG", "ATOM") and isinstance(d.ops[0], Reg)
        if mn in ("LDG", "LD", "LDS", "LDL", "LDSM") or returns:
            dst = d.ops[0]
            n = 4 if mn == "LDSM" else max(self.width_of(d) // 4, 1)
            for k in range(n):
                S.put(self, Reg(dst.uniform, dst.idx + k), np.zeros(self.N, np.uint32), self.valid, DATA | UNKNOWN)

    def _load(self, d, dst, a: Addr, space: str, width: int, em) -> MemAccess:
        off = self._address(d, a, space)
        t_addr = S.any_taint(S.taint(self, a), em)
        self._check_address_taint(d, t_addr)
        out = np.full(self.N, -1, dtype=np.int64)
        ti = -1
        if space == "global":
            if em.any():
                ti, o = self.gmem.locate(off[em], width, d.where)
                out[em] = o
                if self.skip_values:  # the value never reaches control (regs.data_only)
                    return MemAccess(space, "ld", width, out, ti, t_addr)
                data = np.zeros((self.N, width), dtype=np.uint8)
                data[em] = self.gmem.read(ti, o, width)
                tensor = self.gmem.tensors[ti]
                t = DATA | (0 if tensor.given else UNKNOWN) | t_addr
            else:
                data, t = np.zeros((self.N, width), dtype=np.uint8), 0
        elif space == "shared":
            self._check_shared(d, off, width, em)
            if self.skip_values:
                out[em] = off[em]
                return MemAccess(space, "ld", width, out, ti, t_addr)
            data = self._smem_read(off, width, em)
            out[em] = off[em]
            t = DATA | _words_taint(self.smem_taint, off[em], width) | t_addr
        else:
            self._check_local(d, off, width, em)
            data = self.local[np.arange(self.N)[:, None], np.where(em, off, 0)[:, None] + np.arange(width)]
            out[em] = off[em]
            t = _words_taint(self.local_taint, off[em], width) | t_addr
        self._put_loaded(d, dst, data, em, t)
        return MemAccess(space, "ld", width, out, ti, t_addr)

    def _store(self, d, a: Addr, src: Reg, space: str, width: int, em) -> MemAccess:
        off = self._address(d, a, space)
        t_addr = S.any_taint(S.taint(self, a), em)
        self._check_address_taint(d, t_addr)
        data = None if self.skip_values else self._regs_bytes(src, width)
        out = np.full(self.N, -1, dtype=np.int64)
        ti = -1
        if space == "global":
            if em.any():
                ti, o = self.gmem.locate(off[em], width, d.where)
                if not self.probing and data is not None:
                    self.gmem.write(ti, o, data[em])
                out[em] = o
        elif space == "shared":
            self._check_shared(d, off, width, em)
            if data is not None:
                self._smem_write(off, data, em)
            set_words_taint(self.smem_taint, off[em], width, S.any_taint(S.taint(self, src), em))
            out[em] = off[em]
        else:
            self._check_local(d, off, width, em)
            if not self.probing and data is not None:
                rows = np.nonzero(em)[0]
                self.local[rows[:, None], off[em][:, None] + np.arange(width)] = data[em]
            set_words_taint(self.local_taint, off[em], width, S.any_taint(S.taint(self, src), em))
            out[em] = off[em]
        return MemAccess(space, "st", width, out, ti, t_addr)

    def _check_local(self, d, off, width, em) -> None:
        o = off[em]
        if len(o) and ((o < 0).any() or (o + width > self.launch.local_bytes).any()):
            why = ""
            if any(x.mnemonic == "CALL" for x in self.program):  # a frame pushed below the stack pointer: a call
                why = (" (a device function's frame, as a recursive call pushes: ptxas cannot size a recursive "
                       "kernel's stack, and gpusim does not emulate one)")
            raise EmulationError(f"{d.where}: accesses local byte {int(o.max())}, outside the "
                                 f"{self.launch.local_bytes}-byte stack frame ptxas reports{why}")

    def _check_address_taint(self, d: Decoded, t: int) -> None:
        if t & UNKNOWN:
            names = ", ".join(t.name for t in self.gmem.tensors
                              if not t.given and t.name not in COMPILER_SCRATCH) or "none"
            raise EmulationError(f"{d.where}: its address is computed from memory contents gpusim was not given "
                                 f"(tensors without contents: {names}); give them, e.g. --arg NAME=i32[N]:randint(0,N) "
                                 "or NAME=@file.npy")

    def _matrix_rows(self, d: Decoded, a: Addr, em):
        """ldmatrix / stmatrix .x1/.x2/.x4: (matrices, the lanes' shared offsets, their taint, the lanes that give a
        row address: 0..8x-1), checked."""
        x = int(d.mods[-1]) if d.mods and d.mods[-1].isdigit() else 1
        off = self._address(d, a, "shared")
        t_addr = S.any_taint(S.taint(self, a), em)
        self._check_address_taint(d, t_addr)
        rows_active = em & (self.lane < 8 * x)
        self._check_shared(d, off, 16, rows_active)
        return x, off, t_addr, rows_active

    def _ldsm(self, d: Decoded, em) -> MemAccess:
        # LDSM.16.M88.x4 R, [addr]: lanes 0..8x-1 give the row addresses (16 B each) of x 8x8 matrices of 16-bit
        # elements; lane t receives, of matrix i, the word (t % 4) of row t // 4 (MT88: transposed)
        dst, a = d.ops[0], d.ops[1]
        x, off, t_addr, rows_active = self._matrix_rows(d, a, em)
        if self.skip_values:
            return MemAccess("shared", "ldsm", 16, np.where(rows_active, off, -1), -1, t_addr, matrices=x)
        nw = self.N // WARP
        rowaddr = np.where(rows_active, off, 0).reshape(nw, WARP)
        flat = self.smem.reshape(-1)
        cbase = (self.cta_of * self.smem.shape[1]).reshape(nw, WARP)[:, :1]
        lane = np.arange(WARP)
        ra = rowaddr[:, :8 * x] + cbase  # (warps, 8x) row byte addresses
        if flat.size % 16 == 0 and not (ra % 16).any():  # rows are 16-byte aligned (ldmatrix requires it)
            rows = flat.reshape(-1, 16)[ra // 16].reshape(nw, x, 8, 16)  # (warps, matrix, row, 16 bytes)
        else:
            rows = flat[ra[:, :, None] + np.arange(16)].reshape(nw, x, 8, 16)
        if d.has("MT88"):
            el = rows.reshape(nw, x, 8, 8, 2)  # [matrix, row, col, byte]
            r0 = el[:, :, 2 * (lane % 4), lane // 4, :]  # element (row 2*(t%4), col t//4)
            r1 = el[:, :, 2 * (lane % 4) + 1, lane // 4, :]
            word = np.concatenate([r0, r1], axis=3)
        else:
            word = rows.reshape(nw, x, 8, 4, 4)[:, :, lane // 4, lane % 4, :]
        v = np.ascontiguousarray(word).view(np.uint32).reshape(nw, x, WARP)
        t_rows = DATA | _words_taint(self.smem_taint, off[rows_active], 16)
        for i in range(x):
            S.put(self, Reg(dst.uniform, dst.idx + i), v[:, i].reshape(-1), em, t_rows)
        out = np.where(rows_active, off, -1)
        return MemAccess("shared", "ldsm", 16, out, -1, t_addr, matrices=x)

    def _stsm(self, d: Decoded, em) -> MemAccess:
        # STSM.16.M88.x4 [addr], R: LDSM's mirror; lanes 0..8x-1 give the row addresses of x 8x8 matrices of 16-bit
        # elements, lane t's register i holds, of matrix i, the word (t % 4) of row t // 4 (MT88: transposed)
        a, src = d.ops[0], d.ops[1]
        x, off, t_addr, rows_active = self._matrix_rows(d, a, em)
        nw = self.N // WARP
        cbase = (self.cta_of * self.smem.shape[1]).reshape(nw, WARP)[:, :1]
        lane = np.arange(WARP)
        flat = self.smem.reshape(-1)
        t_data = 0
        for i in range(x):
            reg = Reg(src.uniform, src.idx + i)
            t_data |= S.any_taint(S.taint(self, reg), em)
            if self.skip_values or self.probing:  # the values never reach control (regs.data_only)
                continue
            word = np.ascontiguousarray(self._regs_bytes(reg, 4)).reshape(nw, WARP, 4)
            if d.has("MT88"):
                el = np.zeros((nw, 8, 8, 2), dtype=np.uint8)  # [row, col, byte]
                el[:, 2 * (lane % 4), lane // 4, :] = word[:, :, :2]
                el[:, 2 * (lane % 4) + 1, lane // 4, :] = word[:, :, 2:]
                rows = el.reshape(nw, 8, 16)
            else:
                rows = word.reshape(nw, 8, 16)
            ra = off.reshape(nw, WARP)[:, 8 * i:8 * i + 8] + cbase
            on = rows_active.reshape(nw, WARP)[:, 8 * i:8 * i + 8]
            flat[ra[on][:, None] + np.arange(16)] = rows[on]
        set_words_taint(self.smem_taint, off[rows_active], 16, t_data)
        out = np.where(rows_active, off, -1)
        return MemAccess("shared", "stsm", 16, out, -1, t_addr, matrices=x)

    def _ldgsts(self, d: Decoded, em) -> MemAccess:
        sa, ga = d.ops[0], d.ops[1]
        width = self.width_of(d)
        soff = self._address(d, sa, "shared")
        goff = self._address(d, ga, "global")
        t_addr = S.any_taint(S.taint(self, sa, ga), em)
        self._check_address_taint(d, t_addr)
        self._check_shared(d, soff, width, em, "copies into")
        gout = np.full(self.N, -1, dtype=np.int64)
        sout = np.full(self.N, -1, dtype=np.int64)
        ti = -1
        # a trailing predicate without .ZFILL is cp.async's source size (16 or 0, as Triton's masked loads write it):
        # where it is false the lane reads nothing and fills its shared bytes with zeros
        reads = em.copy()
        if not d.has("ZFILL") and len(d.ops) > 2 and isinstance(d.ops[2], Pred):
            reads &= S.pred(self, d.ops[2])
        if reads.any():
            ti, o = self.gmem.locate(goff[reads], width, d.where)
            gout[reads] = o
        if em.any() and not self.skip_values:
            data = np.zeros((self.N, width), dtype=np.uint8)
            if reads.any():
                data[reads] = self.gmem.read(ti, o, width)
            if d.has("ZFILL") and len(d.ops) > 2 and isinstance(d.ops[2], Pred):
                data[S.pred(self, d.ops[2])] = 0
            self._smem_write(soff, data, em)
            taint = DATA | (0 if ti >= 0 and self.gmem.tensors[ti].given else UNKNOWN)
            set_words_taint(self.smem_taint, soff[em], width, taint)
        gout[em & ~reads] = PREDICATED_OFF
        sout[em] = soff[em]
        return MemAccess("global", "cp", width, gout, ti, t_addr, shared_addr=sout)

    def _atomic(self, d: Decoded, em) -> MemAccess:
        ops = list(d.ops)
        mn = d.mnemonic
        if mn in ("RED", "REDG"):
            dst, a, src = None, ops[0], ops[1] if len(ops) > 1 else None
        else:
            if isinstance(ops[0], Pred):
                ops.pop(0)
            dst, a, src = ops[0], ops[1], ops[2] if len(ops) > 2 else None
        if src is None and not d.has("INC", "DEC"):
            raise S.unsupported(d, "an atomic without a source operand")
        space = "shared" if mn == "ATOMS" else "global"
        if mn == "ATOM" and self._generic(d, a, em) == "shared":
            raise S.unsupported(d, "a generic atomic on shared memory (atomicAdd through a generic pointer into the "
                                   "shared window, or cluster.map_shared_rank's distributed shared memory)")
        width = 8 if d.has("64") and not d.has("F64") or d.has("F64") else 4
        op = next((k for k in d.mods if k in ("ADD", "MIN", "MAX", "INC", "DEC", "AND", "OR", "XOR", "EXCH", "CAS",
                                              "POPC")), None)
        if op is None or op in ("CAS",) and len(ops) < 4:
            raise S.unsupported(d, "atomic operation")
        off = self._address(d, a, space)
        t_addr = S.any_taint(S.taint(self, a), em)
        self._check_address_taint(d, t_addr)
        out = np.full(self.N, -1, dtype=np.int64)
        ti = -1
        idx = np.nonzero(em)[0]
        if len(idx):
            if space == "shared":
                self._check_shared(d, off, width, em)
                flat = self.smem.reshape(-1)
                keys = self.cta_of[idx] * self.smem.shape[1] + off[idx]  # each lane's byte in the CTAs' smem

                def rd_many(ks):
                    return flat[keys[ks].reshape(-1, 1) + np.arange(width)]

                def wr_many(ks, b):
                    flat[keys[ks].reshape(-1, 1) + np.arange(width)] = b
            else:
                ti, keys = self.gmem.locate(off[idx], width, d.where)  # each lane's byte offset in tensor ti

                def rd_many(ks):
                    return self.gmem.read(ti, keys[ks], width)

                def wr_many(ks, b):
                    self.gmem.write(ti, keys[ks], b)
            if src is None:  # ATOMS.POPC.INC: each active lane adds one
                srcv = np.tile(np.array([1], dtype=np.uint32).view(np.uint8), (len(idx), 1))[:, :width]
            else:
                srcv = self._regs_bytes(src, width)[idx]
            cmpv = self._regs_bytes(ops[3], width)[idx] if op == "CAS" else None
            typ = next((k for k in d.mods if k in ("F32", "F64", "S32", "U32", "64", "F16x2", "BF16x2")), "U32")
            if width == 4 and op in ("ADD", "POPC") and typ in ("U32", "S32"):  # a counter: every lane at once
                olds, firsts, finals = _add_in_lane_order(keys, srcv, rd_many, self.probing)
                if not self.probing:
                    wr_many(firsts, finals)
            else:
                olds = np.zeros((len(idx), width), dtype=np.uint8)
                for k in range(len(idx)):  # lane order: same-address lanes see each other's updates, as the unit does
                    old = rd_many([k])[0]
                    olds[k] = old
                    new = _atomic_apply(op, typ, old, srcv[k], None if cmpv is None else cmpv[k], width)
                    if not self.probing:
                        wr_many([k], new.reshape(1, -1))
            out[idx] = off[idx] if space == "shared" else keys
            if dst is not None:
                data = np.zeros((self.N, width), dtype=np.uint8)
                data[idx] = olds
                self._put_loaded(d, dst, data, em, DATA | UNKNOWN * (space == "global" and not
                                                                      self.gmem.tensors[ti].given)
                                 | ORDER * (space == "global"))
            if space == "shared":
                t_src = S.any_taint(S.taint(self, src), em) if src is not None else 0
                set_words_taint(self.smem_taint, off[idx], width, t_src | DATA)
        return MemAccess(space, "atom", width, out, ti, t_addr)

    # --- running --------------------------------------------------------------------------------------------------
    def run(self) -> None:
        """Emulate every lane of the batch from the kernel's first instruction to its exit."""
        self._pending: dict[int, np.ndarray] = {0: self.valid.copy()}
        self._heap = [0]
        self._arrivals: dict[int, np.ndarray] = {}  # BSYNC -> (warps,) groups of lanes that arrived apart
        self._drive(stop=None)
        if self.hopper is not None:
            self.hopper.check_done()

    def _drive(self, stop) -> None:
        program = self.program
        pending, heap = self._pending, self._heap
        while heap or self._held or (stop is None and self._bar_wait):
            if not heap and self._held:  # the missing lanes wait elsewhere (a CTA barrier): let the held ones go
                for pc, lanes in sorted(self._held.items()):
                    self._forced.add(pc)
                    self._goto_now(pc, lanes)
                self._held.clear()
                continue
            if not heap:
                (c, bid), waiting = next(iter(self._bar_wait.items()))
                where = ", ".join(f"0x{program[pc].addr:04x}" for pc in waiting)
                raise EmulationError(f"CTA {self.ctas[c]}: barrier {bid} can never complete (warps wait at {where}; "
                                     f"{self._bar_count.get((c, bid), 0)} threads arrived)")
            pc = heapq.heappop(heap)
            mask = pending.pop(pc, None)
            if mask is None:
                continue
            while heap and heap[0] == pc:
                heapq.heappop(heap)
            if stop is not None and stop(pc, mask):
                continue
            if pc < len(program) and program[pc].mnemonic == "BSYNC" and not self.probing:
                if pc in self._forced:
                    self._forced.discard(pc)
                elif self._region_missing(program[pc], mask):  # lanes of its region still on their way (in a
                    # subroutine placed after it): they reconverge here first, as the hardware's barrier makes them
                    self._held[pc] = mask
                    continue
            if pc >= len(program):
                raise EmulationError(f"execution ran past the end of the kernel's code (after 0x{program[-1].addr:x})")
            self.steps += 1
            if self.steps > self.max_steps:
                raise EmulationError(f"the kernel did not finish within {self.max_steps:,} emulated instructions "
                                     "(a loop that never ends, or one whose addresses do not advance by a constant "
                                     "stride and runs too long to emulate trip by trip)")
            self._execute(program[pc], mask)

    def _goto(self, pc: int, lanes: np.ndarray) -> None:
        if not lanes.any():
            return
        held = self._held.pop(pc, None) if not self.probing else None
        if held is not None:  # lanes waiting at this BSYNC join the ones arriving
            self._goto_now(pc, held)
        if not self.probing and pc < len(self.program) and self.program[pc].mnemonic == "BSYNC":
            # lanes that branched apart wait for each other at the convergence barrier: each group that arrives
            # issues the BSYNC (ncu's source counters: twice a trip in histogram_aggregated's loop, leaders and the
            # rest), where the minimum-PC rule runs the merged lanes once
            arrived = lanes.reshape(-1, WARP).any(axis=1).astype(np.int32)
            self._arrivals[pc] = self._arrivals.get(pc, 0) + arrived
        self._goto_now(pc, lanes)

    def _goto_now(self, pc: int, lanes: np.ndarray) -> None:
        cur = self._pending.get(pc)
        if cur is None:
            self._pending[pc] = lanes
            heapq.heappush(self._heap, pc)
        else:
            self._pending[pc] = cur | lanes

    # --- convergence barriers (BSSY / BREAK / BSYNC) ---------------------------------------------------------------
    def _convergence(self, d: Decoded, mask: np.ndarray, em: np.ndarray) -> None:
        """BSSY Bn: the warps' lanes here make up region Bn; BREAK Bn: its lanes leave it."""
        name = d.ops[0].text if d.ops else ""
        if d.mnemonic == "BSSY":
            b = self._bmask.setdefault(name, np.zeros(self.N, dtype=bool))
            present = np.repeat(mask.reshape(-1, WARP).any(axis=1), WARP)
            b[present] = mask[present]
        elif name in self._bmask:
            self._bmask[name][em] = False

    def _region_missing(self, d: Decoded, mask: np.ndarray) -> bool:
        """Whether lanes of the region a BSYNC closes, in the warps arriving, are not among them (nor exited)."""
        b = self._bmask.get(d.ops[0].text if d.ops else "")
        if b is None:
            return False
        present = np.repeat(mask.reshape(-1, WARP).any(axis=1), WARP)
        return bool((b & present & ~mask & ~self.exited).any())

    def _execute(self, d: Decoded, mask: np.ndarray) -> None:
        em = mask if d.guard is None else mask & S.pred(self, d.guard)
        self.full = bool(em.all())
        mn = d.mnemonic
        nxt = d.index + 1
        mem = None
        cond_taint = S.any_taint(S.taint(self, d.guard), mask) if d.guard is not None else 0
        if mn in CONTROL:
            self._record(d, mask, em, None, cond_taint)
            self._control(d, mask, em, cond_taint)
            return
        if self.hopper is not None and mn in hopper.MNEMONICS:
            hopper.execute(self, d, mask, em, cond_taint)
            return
        if mn in ("BSSY", "BREAK") and not self.probing:
            self._convergence(d, mask, em)
        if d.index in self.skip:
            self._record(d, mask, em, None, cond_taint)
            self._goto(nxt, mask)
            return
        if mn in MEMORY:
            mem = self.memory(d, em)
            if self.tracked is not None and self.tracked[0] <= d.index <= self.tracked[1] and mem.taint & DATA:
                self.loop_data = True
            if cond_taint & DATA or d.index in self.data_controlled:  # which lanes access depends on data
                mem.taint |= DATA
        elif mn in BARRIER:
            if d.has("SCAN"):
                raise S.unsupported(d, "barrier scans")
            ids = self._bar_ids(d, em)
            self._record(d, mask, em, None, cond_taint, bar=ids.reshape(-1, WARP).max(axis=1))
            if self.probing:
                self._goto(nxt, mask)
            else:
                self._goto(nxt, mask & ~em)
                self._barrier(d, em, ids)
            return
        else:
            fn = S.SEMANTICS.get(mn)
            if self.watch is not None and d.index == self.watch[0]:
                self.watched = (S.u32(self, self.watch[1]).copy(), S.u32(self, self.watch[2]).copy())
            if fn is None:
                why = UNSUPPORTED_WHY.get(mn, "")
                raise S.unsupported(d, why)
            self.distinct = None
            fn(self, d, em)
        issues = self._arrivals.pop(d.index, None) if mn == "BSYNC" else None
        self._record(d, mask, em, mem, cond_taint, self.distinct if mn == "MATCH" else None, issues)
        self._goto(nxt, mask)

    def _record(self, d, mask, em, mem, cond_taint, distinct=None, issues=None, bar=None) -> None:
        if self.recorder is not None and not self.probing:
            iters = self.iters.copy() if self.tracked is not None else None
            self.recorder.step(Step(d, mask.copy(), em.copy() if em is not mask else em.copy(), iters, mem,
                                    cond_taint, distinct, issues, bar))

    def _control(self, d: Decoded, mask, em, cond_taint) -> None:
        mn = d.mnemonic
        rest = mask & ~em
        if cond_taint & UNKNOWN and not self.probing:
            note = f"{d.where}: a branch on memory contents that were not given (emulated with generated contents)"
            if note not in self.notes:
                self.notes.append(note)
        if cond_taint & ORDER and not self.probing:
            note = (f"{d.where}: a branch on a value a global atomic returned (a ticket, a counter: which CTAs take it "
                    "depends on the order they reach the atomic): emulated as the batch's CTAs, one after another, "
                    "took it (work only a late CTA does, a 'last block' step, may be left out)")
            if note not in self.notes:
                self.notes.append(note)
        if mn == "EXIT":
            if cond_taint & DATA:  # the lanes that go on depend on data
                self.data_controlled.update(range(d.index + 1, len(self.program)))
            self._goto(d.index + 1, rest)
            self.exited |= em
            if not self.probing:
                for key in list(self._bar_wait):
                    self._release(key)
            return
        if mn in ("BRA", "JMP", "CALL"):
            cond = next((o for o in d.ops if isinstance(o, Pred)), None)
            taken = em if cond is None else em & S.pred(self, cond)
            if mn == "BRA" and d.has("DIV"):  # BRA.DIV: to a warp-synchronous operation's slow path where the
                # warp's lanes have diverged; the emulator runs a warp's lanes at one instruction together (the
                # lowest first), so it takes them as converged, as a warp that reaches __syncwarp whole does
                taken = np.zeros_like(em)
            target = self.index_of.get(_target(d))
            if target is None:
                raise EmulationError(f"{d.where}: branches to 0x{_target(d):x}, not an instruction of the kernel")
            if cond_taint & DATA and target > d.index + 1:
                # which lanes run the code it jumps over, and the code it jumps to, depends on data up to where the
                # lanes reconverge: the end of the outermost convergence region around it (a switch's cases break out
                # of the inner regions to code of the outer one)
                end = max([target] + [e for b, e in self.regions if b < d.index < e])
                self.data_controlled.update(range(d.index + 1, end))
            self._goto(d.index + 1, mask & ~taken)
            if self.tracked is not None and self.tracked[1] == d.index and not self.probing:
                self.iters[mask & ~taken] = -1  # lanes leaving the loop
                if not taken.any() and not (self.iters >= 0).any():
                    self._untrack()
            if d.index in self.back_edges and taken.any():
                self._back_edge(d, target, taken)
                return
            self._goto(target, taken)
            return
        if mn in ("RET", "BRX", "JMX"):
            reg = next(o for o in d.ops if isinstance(o, Reg))
            off = next((o.bits for o in d.ops if hasattr(o, "bits")), 0)
            dest = self.R[reg.idx].astype(np.int64) + off
            if mn == "BRX":  # BRX R8 -0x9f0: the register plus an offset from the next instruction (ptxas's jump
                # tables in constant bank 2 hold the targets' addresses, the offset cancels the next one's)
                dest += sum(o.addr for o in d.ops if isinstance(o, Target)) + d.addr + INSTRUCTION_BYTES
            self._goto(d.index + 1, rest)
            for t in np.unique(dest[em]):
                idx = self.index_of.get(int(t))
                if idx is None:
                    raise EmulationError(f"{d.where}: jumps to 0x{int(t):x}, not an instruction of the kernel")
                self._goto(idx, em & (dest == t))
            return
        raise S.unsupported(d)

    # --- barriers -------------------------------------------------------------------------------------------------
    def _bar_ids(self, d: Decoded, em: np.ndarray) -> np.ndarray:
        """(lanes,) the barrier each executing lane names: ``BAR.SYNC 0x1`` an immediate, ``BAR.SYNC R2`` a register's
        value (FA3's ping-pong: each consumer warpgroup its own turn's barrier); -1 elsewhere. A warp names one."""
        ids = np.full(self.N, -1, dtype=np.int64)
        o = d.ops[0] if d.ops else None
        if isinstance(o, Reg) and not o.zero:
            v = (self.UR[o.idx] if o.uniform else self.R[o.idx]).astype(np.int64)
            ids[em] = v[em] % BARRIER_IDS
        else:
            ids[em] = o.bits if o is not None and hasattr(o, "bits") else 0
        w = np.where(em, ids, -1).reshape(-1, WARP)
        lo = np.where(em.reshape(-1, WARP), w, 1 << 20).min(axis=1)
        if ((w >= 0) & (w != lo[:, None])).any():
            raise EmulationError(f"{d.where}: the lanes of one warp name different barriers")
        return ids

    def _barrier(self, d: Decoded, em: np.ndarray, ids: np.ndarray) -> None:
        """``BAR.SYNC id[, count]`` (``BAR.ARV``: arrive and go on): the lanes wait until every live warp of their CTA
        (or ``count`` threads) has arrived at barrier ``id``, wherever in the code."""
        count = None
        rest = [o for o in d.ops[1:] if not isinstance(o, Pred)]  # BAR.RED.OR 0x0, !P0: the predicate it reduces
        if rest:
            c = rest[0]
            count = int(c.bits) if hasattr(c, "bits") else int(self.R[c.idx][em][0])
        red = None
        if d.has("RED"):  # __syncthreads_or / _and / _count: the CTA's lanes' predicates, reduced at the release
            op = next((k for k in ("OR", "AND", "POPC") if d.has(k)), None)
            p = next((o for o in d.ops[1:] if isinstance(o, Pred)), None)
            if op is None or p is None:
                raise S.unsupported(d, "a barrier reduction other than OR, AND or POPC of a predicate")
            red = (op, S.pred(self, p), S.any_taint(S.taint(self, p), em))
        for pair in np.unique(self.cta_of[em].astype(np.int64) * BARRIER_IDS + ids[em]).tolist():
            c, bid = divmod(pair, BARRIER_IDS)
            lanes = em & (self.cta_of == c) & (ids == bid)
            key = (c, bid)
            warps = len(np.unique(self.warp[lanes]))
            self._bar_count[key] = self._bar_count.get(key, 0) + WARP * warps
            if red is not None:
                op, vals, t = red
                _, seen, got, taint = self._bar_red.get(key, (op, np.zeros(self.N, bool), np.zeros(self.N, bool), 0))
                self._bar_red[key] = (op, seen | lanes, got | (vals & lanes), taint | t)
            if count is not None:
                self._bar_expect[key] = count
            if d.has("ARV"):
                self._goto(d.index + 1, lanes)
            else:
                waiting = self._bar_wait.setdefault(key, {})
                waiting[d.index] = waiting[d.index] | lanes if d.index in waiting else lanes
            self._release(key)

    def _release(self, key) -> None:
        if key not in self._bar_count:
            return
        c, _ = key
        expect = self._bar_expect.get(key)
        if expect is None:
            live = ~self.exited & (self.cta_of == c)
            expect = WARP * len(np.unique(self.warp[live]))
        if self._bar_count[key] < expect:
            return
        if key in self._bar_red:  # what B2R.RESULT reads in the CTA's lanes after the barrier
            op, seen, got, taint = self._bar_red.pop(key)
            n_on, n_seen = int(got.sum()), int(seen.sum())
            value = {"OR": int(n_on > 0), "AND": int(n_on == n_seen), "POPC": n_on}[op]
            self.bar_result[c] = (value, taint)
        for pc, lanes in self._bar_wait.pop(key, {}).items():
            self._goto(pc + 1, lanes)
        del self._bar_count[key]

    # --- loops ----------------------------------------------------------------------------------------------------
    def _back_edge(self, d: Decoded, head: int, taken: np.ndarray) -> None:
        """Lanes ``taken`` go round the loop [head, d.index] again: count their iterations, and jump the loop's
        middle once its induction variables are known."""
        key = (head, d.index)
        if self.probing:
            self._goto(head, taken)
            return
        if self.tracked is None:  # its iterations are counted (and it may be jumped, once)
            self.tracked = key
            self.iters[:] = -1
            self.iters[taken] = 0
            self.snapshots = []
            self.loop_data = False
            if self.hopper is not None:
                self.hopper.reset_history()
            if self.recorder is not None:
                self.recorder.loop_start(head, d.index, taken)
        if self.tracked == key:
            if d.guard is not None and S.any_taint(S.taint(self, d.guard), taken) & DATA:
                self.loop_data = True  # the trip count depends on data: emulate the loop whole
            self.iters[taken & (self.iters < 0)] = 0
            self.iters[taken] += 1
            arrivals = int(self.iters[taken].max())
            if self.jump is None and head not in self.no_jump and not self.loop_data and \
                    len(self.snapshots) < WARM_ARRIVALS:
                self.snapshots.append((taken.copy(), self._regs()))
                if self.hopper is not None:
                    self.hopper.snapshot()
                if len(self.snapshots) == WARM_ARRIVALS and arrivals == WARM_ARRIVALS:
                    if self._try_jump(head, d.index, taken):
                        return
        self._goto(head, taken)

    def _untrack(self) -> None:
        """Every lane left the tracked loop: another loop may be tracked (none jumped after the first jump)."""
        if self.recorder is not None:
            self.recorder.loop_end(self.jump is not None and self.jump.head == self.tracked[0] and
                                   not self._jump_closed)
        if self.jump is not None:
            self._jump_closed = True
        self.tracked = None
        self.snapshots = []
        self.iters[:] = -1

    def _regs(self):
        n = self.nreg
        return self.R[:n].copy(), self.UR.copy()

    def _induction(self, lanes: np.ndarray):
        """The period (iterations) with which the loop's registers repeat, up to a constant step per period, and
        for each register whether it does: the period that makes the most registers induction variables (a
        double-buffered loop's buffer offsets toggle with period 2; counters and global addresses advance every
        iteration; accumulators never qualify)."""
        stack_r = np.stack([s[1][0] for s in self.snapshots])  # (arrivals, regs, lanes), arrivals 1..WARM
        stack_u = np.stack([s[1][1] for s in self.snapshots])
        best = None
        for p in range(1, MAX_PERIOD + 1):
            if 2 * p + 1 > len(self.snapshots):
                break
            ok_r = _periodic(stack_r, p, lanes)
            ok_u = _periodic(stack_u, p, lanes)
            score = int(ok_r.sum() + ok_u.sum())
            if best is None or score > best[0]:
                best = (score, p, ok_r, ok_u)
        _, p, ok_r, ok_u = best
        return p, stack_r, stack_u, ok_r, ok_u

    def _try_jump(self, head: int, back: int, taken: np.ndarray) -> bool:
        lanes = np.logical_and.reduce([s[0] for s in self.snapshots])
        if not (lanes == taken).all() or self.loop_data:  # lanes left or joined during the warm-up: emulate whole
            return False
        if self.hopper is not None and not self.hopper.may_jump(lanes):  # another role's loop runs beside it
            return False
        ind = self._induction(lanes)
        trips = self._probe_trips(head, back, lanes, ind)
        if trips is None:
            return False
        t = trips[lanes]
        if (t < WARM_ARRIVALS + 2).any() or (t == WARM_ARRIVALS + 2).all():
            return False  # each lane must have iterations to skip or run after the warm-up: too short to jump
        resume = np.where(lanes, trips - 2, -1)
        self._set_iteration(lanes, resume, ind)
        if self.hopper is not None:
            self.hopper.jump(lanes, resume, ind[0])
        self.iters[lanes] = resume[lanes]
        self.jump = LoopJump(head, back, WARM_ARRIVALS, np.where(lanes, trips, 0), resume, ind[0])
        self._goto(head, taken)
        return True

    def _set_iteration(self, lanes: np.ndarray, n: np.ndarray, ind) -> None:
        """Set the induction registers of ``lanes`` to their values at the start of iteration ``n`` (per lane),
        extrapolated from the warm-up's last period."""
        p, stack_r, stack_u, ok_r, ok_u = ind
        a_max = len(self.snapshots)  # snapshot k holds iteration k + 1
        nn = np.maximum(n, 1)
        b = a_max - ((a_max - nn) % p)  # the last warm-up iteration in the same phase
        q = (((nn - b) // p) % (1 << 32)).astype(np.uint32)  # negative: modular arithmetic steps back
        cols = np.arange(self.N)
        bi = np.clip(b - 1, 0, a_max - 1)
        pi = np.clip(b - 1 - p, 0, a_max - 1)
        for stack, ok, arr in ((stack_r, ok_r, self.R), (stack_u, ok_u, self.UR)):
            last = stack[bi, :, cols].T  # (regs, lanes)
            step = last - stack[pi, :, cols].T
            val = (last + step * q[None, :]).astype(np.uint32)
            sel = ok[:, None] & lanes[None, :]
            sub = arr[:stack.shape[1]]
            sub[sel] = val[sel]

    def _exits(self, head: int, back: int) -> set[int]:
        return _loop_exits(self.program, self.index_of, head, back)

    def _probe_trips(self, head, back, lanes, ind) -> np.ndarray | None:
        """Each lane's trip count of the loop [head, back], from single iterations executed far ahead from the
        advanced induction variables (stores dropped, nothing recorded). Where the back edge's predicate is one
        compare of two values that advance by a constant step (``i != n``, ``i < n``), the trip count is solved
        from the compare's operands in three probes and checked with two more; otherwise it is searched
        (exponentially, then by bisection) on the assumption that the loop, once left, stays left."""
        saved = (self.R.copy(), self.UR.copy(), self.P.copy(), self.UP.copy(), list(self.Rt), list(self.URt),
                 list(self.Pt), list(self.UPt), self._pending, self._heap, self.full)
        held, self._held = self._held, {}  # lanes held at a BSYNC wait out the probe
        self.probing = True
        self.gmem.frozen = True
        try:
            trips = self._solve_trips(head, back, lanes, ind, saved)
            if trips is None:
                trips = self._search_trips(head, back, lanes, ind, saved)
        finally:
            self.probing = False
            self.gmem.frozen = False
            self.watch = None
            (self.R, self.UR, self.P, self.UP, self.Rt, self.URt, self.Pt, self.UPt, self._pending, self._heap,
             self.full) = saved
            self._held = held
        return trips

    def _search_trips(self, head, back, lanes, ind, saved) -> np.ndarray | None:
        n_lanes = self.N
        lo = np.full(n_lanes, WARM_ARRIVALS - 1, dtype=np.int64)  # the back edge was taken after iteration lo
        hi = np.full(n_lanes, -1, dtype=np.int64)  # ... and not after iteration hi (-1: not known yet)
        for _ in range(100):
            todo = lanes & ((hi < 0) | (hi - lo > 1))
            if not todo.any():
                return np.where(lanes, hi + 1, 0)
            n = np.where(hi < 0, 2 * lo + 1, (lo + hi) // 2)
            if (n[todo] > 1 << 40).any():
                return None
            cont = self._probe(head, back, lanes, np.where(todo, n, lo), ind, saved)
            if cont is None:
                return None
            lo = np.where(todo & cont, n, lo)
            hi = np.where(todo & ~cont, n, hi)
        return None

    def _deciding_compare(self, head: int, back: int) -> tuple[Decoded, bool] | None:
        """The ISETP whose result alone decides the back edge (and whether the branch is taken on its false side)."""
        br = self.program[back]
        guard = br.guard if br.guard is not None else next((o for o in br.ops if isinstance(o, Pred)), None)
        if guard is None:
            return None
        for d in reversed(self.program[head:back]):
            dests = [o for o in d.ops[:2] if isinstance(o, Pred)]
            if not any(p.idx == guard.idx and p.uniform == guard.uniform for p in dests):
                continue
            if d.mnemonic not in ("ISETP", "UISETP") or len(d.ops) < 5 or d.has("EX"):
                return None
            first = d.ops[0]
            comb = d.ops[4]
            if not (first.idx == guard.idx and first.uniform == guard.uniform) or not isinstance(comb, Pred) \
                    or not comb.const_true:
                return None
            return d, guard.neg
        return None

    def _solve_trips(self, head, back, lanes, ind, saved) -> np.ndarray | None:
        found = self._deciding_compare(head, back)
        if found is None:
            return None
        d, negated = found
        cmp = next(k for k in d.mods if k in S._CMP)
        signed = not d.has("U32")
        self.watch = (d.index, d.ops[2], d.ops[3])
        n1 = WARM_ARRIVALS
        vals = []
        for n in (n1, n1 + 1, n1 + 2):
            self.watched = None
            if self._probe(head, back, lanes, np.full(self.N, n), ind, saved) is None or self.watched is None:
                return None
            vals.append(self.watched)
        (a1, b1), (a2, b2), (a3, b3) = vals
        da, db = (a2 - a1).astype(np.uint32), (b2 - b1).astype(np.uint32)
        if not (((a3 - a2) == da) | ~lanes).all() or not (((b3 - b2) == db) | ~lanes).all():
            return None
        k = _first_exit(a1, b1, da, db, cmp, signed, negated)
        if k is None:
            return None
        trips = np.where(lanes, n1 + k + 1, 0)
        # check: the back edge is not taken after the last iteration, and is after the one before
        last = self._probe(head, back, lanes, np.where(lanes, trips - 1, n1), ind, saved)
        before = self._probe(head, back, lanes, np.where(lanes, trips - 2, n1), ind, saved)
        if last is None or before is None or (last & lanes).any() or ((~before) & lanes & (trips - 2 >= n1)).any():
            return None
        return trips

    def _probe(self, head, back, lanes, n, ind, saved) -> np.ndarray | None:
        self.R, self.UR, self.P, self.UP = (a.copy() for a in saved[:4])
        self.Rt, self.URt, self.Pt, self.UPt = (list(a) for a in saved[4:8])
        self._set_iteration(lanes, n, ind)
        self._pending, self._heap = {head: lanes.copy()}, [head]
        came_back = np.zeros(self.N, dtype=bool)
        start = self.steps
        exits = self._exits(head, back)

        started = [False]

        def stop(pc, mask):
            if pc == head:
                if not started[0]:  # the probe's own start
                    started[0] = True
                    return False
                came_back[:] |= mask
                return True
            return pc in exits

        try:
            self._drive(stop)
        except EmulationError as e:
            self.probe_error = str(e)
            return None
        finally:
            self.steps = start
        return came_back


def _first_exit(a, b, da, db, cmp: str, signed: bool, negated: bool) -> np.ndarray | None:
    """Per lane, the first k >= 0 at which ``cmp(a + k*da, b + k*db)`` (32-bit, wrapping) no longer lets the branch
    be taken (taken while the compare holds, or while it fails when ``negated``); None where no k < 2^32 does."""
    a, b = a.astype(np.uint64), b.astype(np.uint64)
    da, db = da.astype(np.uint64), db.astype(np.uint64)
    mask = np.uint64(0xFFFFFFFF)
    fn = S._CMP[cmp]

    def taken(k):
        k = np.asarray(k, dtype=np.uint64)
        x = (a + k * da) & mask
        y = (b + k * db) & mask
        if signed:
            x = x.astype(np.uint32).view(np.int32)
            y = y.astype(np.uint32).view(np.int32)
        r = fn(x, y)
        return ~r if negated else r

    n = len(a)
    if cmp in ("EQ", "NE"):
        # the compare flips where x == y: (a - b) + k (da - db) = 0 mod 2^32
        diff = (b - a) & mask
        step = (da - db) & mask
        k = np.zeros(n, dtype=np.int64)
        now = taken(np.zeros(n, dtype=np.uint64))
        for i in range(n):
            if not now[i]:
                continue
            sol = _congruence(int(step[i]), int(diff[i]))
            if sol is None:
                return None
            k[i] = sol if not taken(np.full(n, sol, dtype=np.uint64))[i] else -1
        if (k < 0).any():
            return None
        return k
    lo = np.zeros(n, dtype=np.int64) - 1  # taken at every k <= lo
    hi = np.full(n, -1, dtype=np.int64)
    if (~taken(np.zeros(n, dtype=np.uint64))).any():
        first = ~taken(np.zeros(n, dtype=np.uint64))
        hi = np.where(first, 0, hi)
    for _ in range(200):
        todo = (hi < 0) | (hi - lo > 1)
        if not todo.any():
            return hi
        k = np.where(hi < 0, np.maximum(2 * lo + 1, 1), (lo + hi) // 2)
        if (k[todo] >= 1 << 32).any():
            return None
        t = taken(np.where(todo, k, 0).astype(np.uint64))
        lo = np.where(todo & t, k, lo)
        hi = np.where(todo & ~t, k, hi)
    return None


def _congruence(step: int, diff: int, bits: int = 32) -> int | None:
    """The least k >= 0 with k * step = diff (mod 2^bits), or None."""
    mod = 1 << bits
    if step == 0:
        return 0 if diff == 0 else None
    g = step & -step  # the power of two dividing step
    if diff % g:
        return None
    m = mod // g
    return (diff // g) * pow(step // g, -1, m) % m


def _periodic(stack: np.ndarray, p: int, lanes: np.ndarray) -> np.ndarray:
    """Registers whose values over the warm-up (``stack``: arrivals x regs x lanes) advance by the same step every
    ``p`` iterations, on every lane of ``lanes``."""
    a = stack.shape[0]
    ok = np.ones(stack.shape[1], dtype=bool)
    for k in range(2 * p, a):
        same = (stack[k] - stack[k - p]) == (stack[k - p] - stack[k - 2 * p])
        ok &= (same | ~lanes[None, :]).all(axis=1)
    return ok


def _loop_exits(program: list[Decoded], index_of: dict, head: int, back: int) -> set[int]:
    """Where lanes leave the loop [head, back]: past its back edge, or a branch from inside it to outside (calls to
    subroutines return into the loop and are not exits)."""
    out = {back + 1}
    for d in program[head:back + 1]:
        if d.mnemonic in ("BRA", "JMP") and _target(d) is not None:
            t = index_of.get(_target(d))
            if t is not None and not head <= t <= back:
                out.add(t)
    return out


def _words_taint(taints: np.ndarray, off: np.ndarray, width: int) -> int:
    """The taint of the 4-byte words ``width`` bytes from each of ``off`` cover."""
    if not len(off):
        return 0
    words = (off[:, None] + np.arange(0, max(width, 4), 4)) // 4
    return int(np.bitwise_or.reduce(taints[np.clip(words, 0, len(taints) - 1)].reshape(-1)))


def _target(d: Decoded) -> int | None:
    t = next((o for o in d.ops if isinstance(o, Target)), None)
    return None if t is None else t.addr


def _max_reg(d: Decoded) -> int:
    top = 0
    for o in d.ops:
        regs = [o] if isinstance(o, Reg) else [r for r in (getattr(o, "reg", None), getattr(o, "ureg", None))
                                              if isinstance(r, Reg)]
        for r in regs:
            if not r.uniform and not r.zero:
                top = max(top, r.idx + 8)  # vector loads and MMA fragments write up to 8 registers from the first
    return min(top, 255)


def _add_in_lane_order(keys: np.ndarray, src: np.ndarray, rd_many, probing: bool
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """32-bit integer atomic adds of the lanes (``src``: (lanes, 4) bytes) to the words at ``keys``, in lane order:
    what the per-lane loop computes, in one pass (``probing``: nothing is written, so every lane reads the word as it
    was). Returns (the old word each lane reads, as bytes; the first lane of
    each distinct word; that word's final value, as bytes). ``rd_many(lanes)``: the words' values before, as bytes."""
    order = np.argsort(keys, kind="stable")  # by word, lane order kept within a word
    ks = keys[order]
    starts = np.ones(len(ks), dtype=bool)
    starts[1:] = ks[1:] != ks[:-1]
    group = np.cumsum(starts) - 1
    firsts = order[starts]
    base = np.ascontiguousarray(rd_many(firsts)).view(np.uint32).reshape(-1).astype(np.uint64)
    add = np.ascontiguousarray(src[order]).view(np.uint32).reshape(-1).astype(np.uint64)
    total = np.cumsum(add)  # exact: fewer than 2^32 lanes of at most 2^32 - 1 each
    before = total - add
    at_start = before[starts]
    seen = base[group] if probing else (base[group] + before - at_start[group]) & 0xFFFFFFFF
    olds = np.empty((len(keys), 4), dtype=np.uint8)
    olds[order] = seen.astype(np.uint32).view(np.uint8).reshape(-1, 4)
    ends = np.ones(len(ks), dtype=bool)
    ends[:-1] = starts[1:]
    finals = ((base + total[ends] - at_start) & 0xFFFFFFFF).astype(np.uint32).view(np.uint8).reshape(-1, 4)
    return olds, firsts, finals


def _atomic_apply(op: str, typ: str, old: np.ndarray, src: np.ndarray, cmp, width: int) -> np.ndarray:
    if width == 8:
        o = old.view(np.uint64)[0]
        s = src.view(np.uint64)[0]
        if typ == "F64":
            of, sf = old.view(np.float64)[0], src.view(np.float64)[0]
            r = {"ADD": of + sf, "MIN": min(of, sf), "MAX": max(of, sf), "EXCH": sf}[op]
            return np.array([r], dtype=np.float64).view(np.uint8)
        r = {"ADD": (int(o) + int(s)) & (2 ** 64 - 1), "MIN": min(o, s), "MAX": max(o, s), "AND": o & s, "OR": o | s,
             "XOR": o ^ s, "EXCH": s, "CAS": s if cmp is not None and o == cmp.view(np.uint64)[0] else o}[op]
        return np.array([r], dtype=np.uint64).view(np.uint8)
    o = int(old.view(np.uint32)[0])
    s = int(src.view(np.uint32)[0])
    if typ == "F32":
        of, sf = float(old.view(np.float32)[0]), float(src.view(np.float32)[0])
        r = {"ADD": of + sf, "MIN": min(of, sf), "MAX": max(of, sf), "EXCH": sf}[op]
        return np.array([r], dtype=np.float32).view(np.uint8)
    if typ == "S32" and op in ("MIN", "MAX"):
        oi, si = np.int32(o), np.int32(s)
        r = int(np.uint32(np.int32(min(oi, si) if op == "MIN" else max(oi, si))))
    else:
        r = {"ADD": o + s, "MIN": min(o, s), "MAX": max(o, s), "AND": o & s, "OR": o | s, "XOR": o ^ s, "EXCH": s,
             "INC": 0 if o >= s else o + 1, "DEC": s if o == 0 or o > s else o - 1, "POPC": o + 1,
             "CAS": s if cmp is not None and o == int(cmp.view(np.uint32)[0]) else o}[op]
    return np.array([r & 0xFFFFFFFF], dtype=np.uint32).view(np.uint8)
