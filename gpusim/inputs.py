"""Reading a user's input file safely: a regular file of bounded size, never a FIFO, a device or a folder.

Every file gpusim reads on a user's say-so (``--config``, ``--measurements``, ``--kernels``) goes through
:func:`read_text` (or :func:`check_regular_file` when Python itself imports it): opened without blocking, checked
with ``fstat`` to be a regular file, and read up to :data:`MAX_INPUT_BYTES`, so a FIFO cannot hang the run and
``/dev/zero`` cannot exhaust memory. Errors are one line naming the file with ``repr`` quoting.
"""

from __future__ import annotations

import os
import stat

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
