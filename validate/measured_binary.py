"""The binary a measurement ran, kept: how CuPy's RawModule builds a twin on the device, and the cubin it loads.

    python3 validate/measured_binary.py --out $OUT fa2:HEAD_DIM=128,CAUSAL=0 fa2:HEAD_DIM=64,CAUSAL=1 ...   # on the GPU

The measurement scripts build twins with CuPy's RawModule (NVRTC). ncu's source counters for fa2
(validate/measurements/h100/sasscounts-fa2-2026-11-25.json) list a different SASS (1,696 instructions, ``VIADD R1, R1,
0xffffffe8`` at 0x70) from what NVRTC 13.0.88 gives as a cubin here (1,912, ``IADD3 R1, R1, -0x18, RZ``). For each
twin and define set this writes, under OUT/<twin>_<defines>/:

- ``cupy_cache/``: what RawModule stored in its cache (CUPY_CACHE_DIR), the bytes it hands the driver (a cubin, or
  PTX that the driver then compiles itself);
- ``nvrtc.cubin``: NVRTC asked for the device's SASS (-arch=sm_XX), as validate/sass_nvrtc.py does;
- ``nvrtc.ptx`` and ``driver_jit.cubin``: NVRTC asked for PTX (-arch=compute_XX), and the driver's own JIT
  compiler's cubin for it (cuLinkCreate / cuLinkAddData / cuLinkComplete), what a module loaded from PTX runs;
- ``*.sass``: cuobjdump -sass of each cubin, and summary.json (instructions per listing, the first lines).
"""

from __future__ import annotations

import argparse
import ctypes
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "validate"))

from sass_nvrtc import load_source, whole_elf  # noqa: E402


def nvrtc_compile(nvrtc, src: str, opts: list[str], want: str) -> bytes:
    prog = nvrtc.createProgram(src, "twin.cu", [], [])
    try:
        nvrtc.compileProgram(prog, opts)
        return whole_elf(nvrtc.getCUBIN(prog)) if want == "cubin" else nvrtc.getPTX(prog)
    finally:
        nvrtc.destroyProgram(prog)


def driver_jit(ptx: bytes) -> bytes:
    """The driver's JIT compile of PTX to a cubin (a context must be current: CuPy's)."""
    cuda = ctypes.CDLL("libcuda.so.1")
    state = ctypes.c_void_p()
    if cuda.cuLinkCreate_v2(0, None, None, ctypes.byref(state)):
        raise RuntimeError("cuLinkCreate failed")
    data = ptx if ptx.endswith(b"\0") else ptx + b"\0"
    rc = cuda.cuLinkAddData_v2(state, 1, ctypes.c_char_p(data), ctypes.c_size_t(len(data)), b"twin.ptx", 0, None,
                               None)  # CU_JIT_INPUT_PTX = 1
    if rc:
        raise RuntimeError(f"cuLinkAddData failed ({rc})")
    out, size = ctypes.c_void_p(), ctypes.c_size_t()
    if cuda.cuLinkComplete(state, ctypes.byref(out), ctypes.byref(size)):
        raise RuntimeError("cuLinkComplete failed")
    blob = ctypes.string_at(out, size.value)
    cuda.cuLinkDestroy(state)
    return blob


def sass_of(cubin: Path) -> str:
    exe = shutil.which("cuobjdump") or "/usr/local/cuda/bin/cuobjdump"
    p = subprocess.run([exe, "-sass", str(cubin)], capture_output=True, text=True)
    text = p.stdout + p.stderr
    cubin.with_suffix(".sass").write_text(text)
    return text


def summary(text: str) -> dict:
    insts = re.findall(r"/\*([0-9a-f]{4,})\*/\s+([^;]*);", text)
    return {"instructions": len(insts), "first": [i[1].strip() for i in insts[:9]],
            "sha256": hashlib.sha256("\n".join(i[1].strip() for i in insts).encode()).hexdigest()}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("targets", nargs="+", help="twin:NAME=VALUE,...")
    a = ap.parse_args()
    out = Path(a.out)
    import cupy as cp
    from cupy_backends.cuda.libs import nvrtc

    cc = "".join(map(str, cp.cuda.Device().compute_capability))
    report = {"cupy": cp.__version__, "nvrtc": ".".join(map(str, nvrtc.getVersion())),
              "driver": cp.cuda.runtime.driverGetVersion(), "targets": {}}
    for t in a.targets:
        twin, _, defs = t.partition(":")
        defines = [f"-D{d}" for d in defs.split(",") if d]
        tag = twin + "".join("_" + d[2:].replace("=", "") for d in defines)
        d = out / tag
        (d / "cupy_cache").mkdir(parents=True, exist_ok=True)
        src = load_source(REPO / "validate" / "kernels" / f"{twin}.cu")
        entry: dict = {}
        os.environ["CUPY_CACHE_DIR"] = str(d / "cupy_cache")
        try:
            mod = cp.RawModule(code=src, options=("-std=c++17", *defines))
            f = mod.get_function(twin)
            entry["regs"] = int(f.attributes.get("num_regs", 0))
            entry["binary_version"] = int(f.attributes.get("binary_version", 0))
            entry["ptx_version"] = int(f.attributes.get("ptx_version", 0))
        except Exception as e:  # noqa: BLE001
            entry["cupy_error"] = str(e)[:500]
        entry["cupy_cache"] = sorted(p.name for p in (d / "cupy_cache").rglob("*") if p.is_file())
        for p in (d / "cupy_cache").rglob("*"):
            if p.is_file():
                head = p.read_bytes()[:64]
                entry.setdefault("cache_heads", {})[p.name] = head.hex()
        try:
            cub = nvrtc_compile(nvrtc, src, ["-std=c++17", *defines, f"-arch=sm_{cc}"], "cubin")
            (d / "nvrtc.cubin").write_bytes(cub)
            entry["nvrtc_cubin"] = summary(sass_of(d / "nvrtc.cubin"))
        except Exception as e:  # noqa: BLE001
            entry["nvrtc_cubin_error"] = str(e)[:500]
        try:
            ptx = nvrtc_compile(nvrtc, src, ["-std=c++17", *defines, f"-arch=compute_{cc}"], "ptx")
            (d / "nvrtc.ptx").write_bytes(ptx)
            jit = driver_jit(ptx)
            (d / "driver_jit.cubin").write_bytes(jit)
            entry["driver_jit"] = summary(sass_of(d / "driver_jit.cubin"))
        except Exception as e:  # noqa: BLE001
            entry["driver_jit_error"] = str(e)[:500]
        report["targets"][tag] = entry
        print(tag, json.dumps({k: (v if not isinstance(v, dict) else {kk: vv for kk, vv in v.items() if kk != "first"})
                               for k, v in entry.items() if k != "cache_heads"}), flush=True)
    (out / "summary.json").write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
