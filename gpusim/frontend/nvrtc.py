"""Compile CUDA with NVRTC (the runtime compiler CuPy's RawModule and PyTorch's JIT use) to a cubin.

Run as a child process (``python -m gpusim.frontend.nvrtc SOURCE OUT.cubin [OPTIONS]``) so that the caller can bound
its time and memory; :func:`gpusim.frontend.build.compile_cuda` does, with ``compiler="nvrtc"``. The library comes
from NVIDIA's ``nvidia-cuda-nvrtc`` wheel (``pip install 'gpusim[cuda]'``) or the CUDA toolkit.
"""

from __future__ import annotations

import ctypes
import glob
import os
import sys


def find_library() -> str | None:
    candidates = []
    for base in sys.path:
        candidates += sorted(glob.glob(os.path.join(base, "nvidia", "*", "lib", "libnvrtc.so*")))
    candidates += sorted(glob.glob("/usr/local/cuda*/lib64/libnvrtc.so*"), reverse=True)
    return next((c for c in candidates if ".alt." not in c and "builtins" not in c), None)


def version(lib: ctypes.CDLL) -> str:
    major, minor = ctypes.c_int(), ctypes.c_int()
    lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
    return f"{major.value}.{minor.value}"


def compile_to_cubin(source: str, name: str, options: list[str]) -> tuple[bytes, str]:
    path = find_library()
    if path is None:
        raise RuntimeError("libnvrtc not found: 'pip install nvidia-cuda-nvrtc' (or 'pip install gpusim[cuda]')")
    lib = ctypes.CDLL(path)
    prog = ctypes.c_void_p()
    check = _checker(lib)
    check(lib.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), name.encode(), 0, None, None), "create")
    opts = (ctypes.c_char_p * len(options))(*[o.encode() for o in options])
    status = lib.nvrtcCompileProgram(prog, len(options), opts)
    size = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetProgramLog(prog, log)
    text = log.value.decode(errors="replace")
    if status != 0:
        raise RuntimeError(text.strip() or f"nvrtcCompileProgram failed ({status})")
    check(lib.nvrtcGetCUBINSize(prog, ctypes.byref(size)), "cubin size")
    buf = ctypes.create_string_buffer(size.value)
    check(lib.nvrtcGetCUBIN(prog, buf), "cubin")
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
    return buf.raw, text


def _checker(lib):
    lib.nvrtcGetErrorString.restype = ctypes.c_char_p

    def check(status: int, what: str) -> None:
        if status != 0:
            raise RuntimeError(f"nvrtc {what}: {lib.nvrtcGetErrorString(status).decode()}")

    return check


def main(argv: list[str]) -> int:
    src, out, *options = argv
    try:
        with open(src, encoding="utf-8", errors="replace") as f:
            text = f.read()
        cubin, log = compile_to_cubin(text, os.path.basename(src), options)
    except RuntimeError as e:
        lines = str(e).splitlines()  # an sm_90a-only instruction's error ahead of ptxas's advisory warnings: the
        # caller rebuilds for sm_90a on it (gpusim.frontend.build.SM_90A_ONLY)
        first = next((ln for ln in lines if "not supported on .target 'sm_90'" in ln
                      or "should be used on .target 'sm_90a" in ln), None) or next(
            (ln for ln in lines if "error" in ln), lines[0] if str(e).strip() else "failed")
        print(first, file=sys.stderr)
        return 1
    with open(out, "wb") as f:
        f.write(cubin)
    print(log, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
