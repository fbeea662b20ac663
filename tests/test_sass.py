"""The SASS parser (gpusim/sass.py) on committed ``cuobjdump`` output, and one end-to-end run of the toolkit."""

from __future__ import annotations

import os

import pytest

from gpusim import sass
from tests.conftest import REPO

DATA = REPO / "tests" / "data" / "sass"


def _func(file: str, name: str) -> sass.Function:
    funcs = sass.parse_sass((DATA / file).read_text())
    return next(f for f in funcs if f.name == name)


def test_transpose_counts_by_class():
    f = _func("transpose.sass", "transpose_shared")
    counts, pred = sass.classify(f.insts)
    assert (counts["LDG"], counts["STS"], counts["BAR"], counts["LDS"], counts["STG"]) == (4, 4, 1, 4, 4)
    assert sum(pred.values()) == 0  # no bounds check in the CUDA: nothing predicated
    assert sass.loops(f) == []  # the 4-row loop is unrolled; the trailing BRA-to-itself is not a loop


def test_reduction_predicated_steps():
    f = _func("reduce_shared.sass", "reduce_shared")
    counts, pred = sass.classify(f.insts)
    assert counts["BAR"] == 9 and counts["FADD"] == 8 and pred["FADD"] == 8
    assert (counts["LDS"], pred["LDS"]) == (17, 16)


def test_backward_branch_is_a_loop():
    f = _func("saxpy_loop.sass", "saxpy_loop")
    (body,) = sass.loops(f)
    counts, pred = sass.classify(body.insts)
    assert (body.start, body.end) == (0xE0, 0x160)
    assert (counts["LDG"], counts["FFMA"], counts["STG"], counts["BRA"], pred["BRA"]) == (2, 1, 1, 1, 1)


def test_resource_usage_and_ptxas():
    usage = sass.parse_res_usage((DATA / "reduce_shared.res").read_text())
    assert usage == {"_Z13reduce_sharedPKfPf": (12, 2048)}  # cuobjdump counts the 1 KB system reserve
    text = ("ptxas info    : Compiling entry function '_Z1kv' for 'sm_90a'\n"
            "ptxas info    : Used 40 registers, used 1 barriers, 4224 bytes smem, 356 bytes cmem[0]\n")
    assert sass.parse_ptxas(text) == {"_Z1kv": (40, 4224)}


def test_demangle_and_summary():
    assert sass.demangle("_Z15transpose_naivePKfPfi") == "transpose_naive"
    assert sass.demangle("my_extern_c") == "my_extern_c"
    funcs = sass.parse_sass((DATA / "saxpy_loop.sass").read_text())
    text = sass.summarize(funcs)
    assert "loop 1 [0x00e0..0x0160] (9 instructions): LDG 2, STG 1, FFMA 1" in text
    with pytest.raises(sass.SassError, match="no kernel named 'nope'"):
        sass.summarize(funcs, "nope")


def _toolkit() -> bool:
    try:
        sass.find_tool("nvcc")
        sass.find_tool("cuobjdump")
    except sass.SassError:
        return False
    return True


@pytest.mark.skipif(not _toolkit() and not os.environ.get("GPUSIM_REQUIRE_CUDA"),
                    reason="nvcc or cuobjdump absent (CI installs them and sets GPUSIM_REQUIRE_CUDA=1)")
def test_guide_kernels_match_their_sass():
    """The toolkit end to end: the guide's IR agrees with the SASS of its CUDA (no mismatch warning)."""
    from gpusim import loader
    from gpusim.ir import REGISTRY
    from gpusim.registry import build_kernel

    loader.load([str(REPO / "examples")])
    for name in ("example_transpose_naive", "example_transpose_shared", "example_reduce_shared"):
        kd = REGISTRY[name]
        assert sass.compare(build_kernel(name, (4096,)), kd.source) == []
    import dataclasses

    k = build_kernel("example_transpose_naive", (4096,))
    wrong = dataclasses.replace(k, launch=dataclasses.replace(k.launch, regs_per_thread=40))
    (line,) = sass.compare(wrong, REGISTRY["example_transpose_naive"].source)
    assert line.endswith("the IR launches 40 registers per thread, ptxas allocates 16")
    funcs = sass.compile_and_dump(REPO / "examples" / "transpose.cu", defines=("PAD=1",))
    padded = next(f for f in funcs if f.name == "transpose_shared")
    assert padded.smem_bytes == 32 * 33 * 4


MASKED_LOOP = """
\t\tFunction : masked
        /*0000*/                   S2R R0, SR_TID.X ;
        /*0010*/                   SYNCS.PHASECHK.TRANS64.TRYWAIT P1, [UR4], R6 ;
        /*0020*/              @!P1 BRA 0x10 ;
        /*0030*/                   ISETP.LT.AND P1, PT, R18, UR7, PT ;
        /*0040*/              @!P1 BRA 0x80 ;
        /*0050*/                   FSEL R90, R90, -INF , !P6 ;
        /*0060*/                   FSEL R91, R91, -INF , !P6 ;
        /*0070*/                   FSEL R92, R92, -INF , !P6 ;
        /*0080*/                   FMNMX R14, R88, R89, !PT ;
        /*0090*/                   NOP ;
        /*00a0*/              @!P0 BRA 0x10 ;
        /*00b0*/                   EXIT ;
"""


def test_the_taken_path_skips_blocks_behind_forward_branches():
    """fa3's masking block sits behind ``@!P1 BRA`` past it: the common path of the loop skips it, runs the
    polling loop once, and does not count NOPs (6 of the 10 instructions in the body)."""
    (f,) = sass.parse_sass(MASKED_LOOP)
    outer = sass.loops(f)[-1]
    assert (outer.start, outer.end, len(outer.insts)) == (0x10, 0xA0, 10)
    assert [x.addr for x in outer.taken_path()] == [0x10, 0x20, 0x30, 0x40, 0x80, 0xA0]
    assert "(10 instructions; 6 when every forward branch is taken)" in sass.summarize([f])


def test_skeleton_marks_predicated_memory_and_names_every_operation_once():
    """The reduction's guarded shared loads become ``predicated=True`` operations, and no two operations of the
    skeleton share a name (prologue, body and epilogue are numbered together)."""
    import re
    from pathlib import Path

    f = _func("reduce_shared.sass", "reduce_shared")
    text = sass.skeleton(f, Path("reduce_shared.cu"), "my_reduce")
    names = re.findall(r"(?:Mem|Compute)\('([^']+)'", text)
    assert len(names) == len(set(names)) > 10
    assert text.count("'shared', 'ld'") == 17 and text.count("predicated=True") >= 16
    compile(text, "skeleton.py", "exec")


def test_listing_marks_loop_bodies():
    funcs = sass.parse_sass((DATA / "saxpy_loop.sass").read_text())
    text = sass.listing(funcs)
    assert "0x00e0" in text and "<- loop 1 starts" in text and "<- loop 1 branches back" in text
    assert "@!P0 BRA 0xe0" in text.replace("  ", " ")
    with pytest.raises(sass.SassError, match="no kernel named 'nope'"):
        sass.listing(funcs, "nope")


def test_control_code_stalls_are_read_from_the_encoding():
    """Each instruction's stall count is bits 41-44 of its encoding's second word (``0x001fc800...`` is 4 cycles,
    ``0x0005ee00...`` 7); the loop's path sums them, the least time one warp takes to issue an iteration. A dump
    without encodings has none, and the summary says nothing of them."""
    f = _func("saxpy_loop.sass", "saxpy_loop")
    (body,) = sass.loops(f)
    assert [x.stall_cycles for x in body.insts] == [4, 2, 4, 1, 4, 1, 5, 7, 5]
    assert sass.stall_cycles(body.taken_path()) == 33
    assert "control-code stalls on that path: 33 cycles (3.67 per instruction)" in sass.summarize([f])
    (masked,) = sass.parse_sass(MASKED_LOOP)
    assert sass.stall_cycles(masked.insts) is None and "control-code" not in sass.summarize([masked])


def test_stall_means_by_the_bundle_an_instruction_belongs_to():
    """validate/sass_stalls.py's tables: per class, the instructions and their mean stall; ``other`` holds the rest
    but the skipped mnemonics (timed by their own units); an empty class issues one a cycle."""
    f = _func("saxpy_loop.sass", "saxpy_loop")
    (body,) = sass.loops(f)
    means = sass.stall_means(body.taken_path(), {"fp32": ("FFMA",), "sfu": ("MUFU",)}, ("LDG", "STG"))
    assert means == {"fp32": (1, 5.0), "sfu": (0, 1.0), "other": (5, 16 / 5)}  # IMAD 4+2, IADD3 4, ISETP 1, BRA 5
    (masked,) = sass.parse_sass(MASKED_LOOP)
    with pytest.raises(sass.SassError, match="no encoding"):
        sass.stall_means(masked.insts, {})


def test_register_reads_count_register_sources_outside_the_reuse_cache():
    """What the dispatch reads from the register file (validate/micro/run_regread.py: two a cycle): an FFMA's three
    register sources, fewer where an immediate, a constant, RZ or a `.reuse` operand stands in."""
    from gpusim.sass import Inst

    cases = {"R16, R6, R16, R21": 3, "R9, R8, R13.reuse, 1": 1, "R13, R0, 1.0000009536743164062, R9": 2,
             "R1, RZ, R2, R3": 2, "R1, -R2, |R3|, R4": 3, "R1, R2, c[0x0][0x10], R4": 2}
    for operands, reads in cases.items():
        assert Inst(0, "FFMA", operands, False).register_reads == reads, operands
