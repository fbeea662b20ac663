"""A user's inputs and outputs, safely: files read as regular files of bounded size (never a FIFO, a device or a
folder), shapes parsed one way, outputs written whole or not at all.

Every file gpusim reads on a user's say-so (``--config``, ``--measurements``, ``--kernels``, ``--shapes``, a
``.cu`` for ``gpusim sass``, the sweep cache's entries) goes through :func:`read_text` / :func:`read_bytes` (or
:func:`check_regular_file` when Python itself imports it): opened without blocking, checked with ``fstat`` to be a
regular file, and read up to a limit (:data:`MAX_INPUT_BYTES`), so a FIFO cannot hang the run and ``/dev/zero``
cannot exhaust memory. Every file gpusim writes (``-o``, ``--report``, ``--figure``, ``--skeleton``) is checked
before the work (:func:`check_writable`) and written to a temporary file beside it that replaces it only once
complete (:func:`atomic_output`): a full disk or an interrupt leaves the old file, never half a new one. Errors
are one line naming the file with ``repr`` quoting.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import tempfile
from collections.abc import Iterator

MAX_INPUT_BYTES = 64 << 20  # the largest config, measurement or kernel file gpusim reads (committed ones: < 1 MiB)


def quote(path: str | os.PathLike) -> str:
    """A path as error messages show it: ``repr``-quoted, so a newline in a name stays on one line."""
    return repr(os.fspath(path))


def _kind(mode: int) -> str:
    """What a file that is not a regular file is, for the error message."""
    if stat.S_ISDIR(mode):
        return "is a folder"
    if stat.S_ISFIFO(mode):
        return "is a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "is a device"
    if stat.S_ISSOCK(mode):
        return "is a socket"
    return "is a special file"


def check_regular_file(path: str | os.PathLike, what: str, error: type[Exception],
                       limit: int = MAX_INPUT_BYTES) -> None:
    """Raise ``error`` (one line) unless ``path`` is an existing regular file of at most ``limit`` bytes."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise error(f"{quote(path)}: no such {what}") from None
    except (OSError, ValueError) as e:
        raise error(f"{quote(path)}: cannot read the {what}: {getattr(e, 'strerror', None) or e}") from None
    _check_stat(path, st, what, error, limit)


def _check_stat(path, st: os.stat_result, what: str, error: type[Exception], limit: int) -> None:
    if not stat.S_ISREG(st.st_mode):
        raise error(f"{quote(path)}: {_kind(st.st_mode)}, not a {what} (a regular file)")
    if st.st_size > limit:
        raise error(f"{quote(path)}: {st.st_size:,} bytes is too large for a {what} (at most {limit:,})")


def read_bytes(path: str | os.PathLike, what: str, error: type[Exception], limit: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes; anything else raises ``error`` (one line)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # a FIFO opens without waiting
    except FileNotFoundError:
        raise error(f"{quote(path)}: no such {what}") from None
    except (OSError, ValueError) as e:
        raise error(f"{quote(path)}: cannot read the {what}: {getattr(e, 'strerror', None) or e}") from None
    try:
        _check_stat(path, os.fstat(fd), what, error, limit)
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as e:
        raise error(f"{quote(path)}: cannot read the {what}: {e.strerror or e}") from None
    finally:
        os.close(fd)
    if size > limit:  # grew while we read it
        raise error(f"{quote(path)}: too large for a {what} (at most {limit:,} bytes)")
    return b"".join(chunks)


def read_text(path: str | os.PathLike, what: str, error: type[Exception], limit: int = MAX_INPUT_BYTES) -> str:
    """A regular file of at most ``limit`` bytes decoded as UTF-8; anything else raises ``error`` (one line)."""
    data = read_bytes(path, what, error, limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise error(f"{quote(path)}: not UTF-8 text (byte {e.start} is {data[e.start:e.start + 1]!r}), so not a "
                    f"{what}") from None


# ---- shapes ---------------------------------------------------------------------------------------------------

MAX_DIMENSION = (1 << 63) - 1  # a shape's dimension must fit the 64-bit integers the model and its tables use
_DIM = re.compile(r"[+-]?[0-9]+")


def parse_shape(text: str, where: str, error: type[Exception]) -> tuple[int, ...]:
    """``"4096,4096,4096"`` -> ``(4096, 4096, 4096)``: the one reading of a shape, for every command. Anything else
    (``4096x4096``, a blank or non-ASCII item, a fraction, a dimension beyond 64 bits) raises ``error``; whether the
    kernel takes this many positive dimensions is the kernel's check."""
    items = [x.strip() for x in text.split(",")] if isinstance(text, str) else [""]
    if not all(_DIM.fullmatch(x) and x.isascii() for x in items) or any(len(x) > 40 for x in items):
        raise error(f"{where} {text!r}: expected comma-separated integers such as 4096,4096,4096")
    dims = tuple(int(x) for x in items)
    for d in dims:
        if abs(d) > MAX_DIMENSION:
            raise error(f"{where} {text!r}: dimension {d} is beyond 2^63 (no GPU holds such a tensor)")
    return dims


# ---- outputs ---------------------------------------------------------------------------------------------------

def check_writable(path: str | os.PathLike, flag: str, error: type[Exception]) -> None:
    """Refuse, before any work, an output path gpusim could not write: empty, a folder, in a folder that does not
    exist or that we may not write to. (A full disk is found when writing; :func:`atomic_output` keeps it whole.)"""
    text = os.fspath(path)
    if not text.strip():
        raise error(f"{flag} {text!r}: cannot write: an empty path names no file")
    if os.path.isdir(text):
        raise error(f"{flag} {quote(text)}: cannot write: is a folder")
    if os.path.exists(text) and not os.path.isfile(text):
        return  # a device or a FIFO (/dev/stdout, /dev/full): written in place, its errors reported then
    folder = os.path.dirname(text) or "."
    if not os.path.isdir(folder):
        raise error(f"{flag} {quote(text)}: cannot write: no such folder {quote(folder)}")
    try:
        fd, probe = tempfile.mkstemp(dir=folder, prefix=".gpusim-probe-")
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise error(f"{flag} {quote(text)}: cannot write in {quote(folder)}: {e.strerror or e}") from None


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike) -> Iterator[str]:
    """Yields the path to write instead of ``path``: a temporary file beside it (with the same extension, which
    writers read the format from) that replaces ``path`` when the block ends without an exception, and is removed
    otherwise. A device or a FIFO at ``path`` is written directly."""
    text = os.fspath(path)
    if os.path.exists(text) and not os.path.isfile(text):
        yield text
        return
    folder, name = os.path.split(text)
    stem, ext = os.path.splitext(name)
    fd, tmp = tempfile.mkstemp(dir=folder or ".", prefix=f".{stem}.", suffix=f".tmp{ext}")
    os.close(fd)
    try:
        yield tmp
        try:
            mode = stat.S_IMODE(os.stat(text).st_mode)
        except OSError:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(tmp, mode)  # mkstemp makes it private; the output gets the mode a plain open() would give it
        os.replace(tmp, text)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
