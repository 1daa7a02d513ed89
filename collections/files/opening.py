"""Opening the files tcdb reads and writes: one place says, in one line, what is wrong with a path.

Input: a missing path, a directory, a socket or a file without read permission is refused before
reading; gzip, bz2 and xz are read transparently (told apart by their magic bytes, not their
names), other compressed formats are named and refused; decompression is streamed and bounded
(`TCDB_MAX_EXPANDED_BYTES`, `TCDB_MAX_EXPANSION_RATIO`, and per line `TCDB_MAX_LINE_BYTES`), so a
decompression bomb is refused with one line instead of filling memory. A pipe (FIFO) is read as
a file where a file is read once (documents), and refused where it is read more than once.

Output: `--out` is checked before any work (its folder exists, it is not a directory, it can be
written) and written to a temporary file in the same folder that is renamed over it, so a full
disk or a failed write leaves nothing behind; devices and pipes (`/dev/stdout`) are written
directly. Every failure is a `FieldError` of the option, with the reason the system gave.
"""

from __future__ import annotations

import bz2
import contextlib
import errno
import gzip
import io
import lzma
import os
import stat
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from tcdb.errors import FieldError, InputError

_HEAD = 16  # bytes read to recognise a format
_CHUNK = 16 << 20  # what a whole-file read takes from a decompressor at a time
_RATIO_FLOOR = 64 << 20  # bytes expanded before the expansion ratio is held against a file

READ = ("gzip", "bz2", "xz")


def compression_of(head: bytes) -> str | None:
    """The compression format whose magic bytes start `head`, or None for plain data."""
    if head[:2] == b"\x1f\x8b":
        return "gzip"
    if (head[:3] == b"BZh" and head[3:4] in b"123456789" and len(head) >= 4
            and head[4:10] in (b"1AY&SY", b"\x17rE8P\x90")):
        return "bz2"
    if head[:6] == b"\xfd7zXZ\x00":
        return "xz"
    for magic, name in _UNREAD:
        if head.startswith(magic):
            return name
    return None


_UNREAD = (
    (b"\x28\xb5\x2f\xfd", "zstd"),
    (b"PK\x03\x04", "zip"), (b"PK\x05\x06", "zip"), (b"PK\x07\x08", "zip"),
    (b"7z\xbc\xaf\x27\x1c", "7z"),
    (b"Rar!\x1a\x07", "rar"),
    (b"\x04\x22\x4d\x18", "lz4"),
    (b"LZIP", "lzip"),
    (b"\x89LZO\x00\r\n\x1a\n", "lzop"),
    (b"\x1f\x9d", "compress (.Z)"),
    (b"\x5d\x00\x00", "lzma"),
)


def _reason(exc: OSError) -> str:
    """What the system says, in the lower case of the rest of a message."""
    text = exc.strerror or str(exc)
    return text[:1].lower() + text[1:]


def check_input(path: Path | str, *, pipe: bool = True) -> Path:
    """The path, if it is something tcdb can read: a regular file, or (with `pipe`) a pipe or a
    character device such as /dev/stdin. Otherwise an `InputError` naming the path and why."""
    path = Path(path)
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        raise InputError(path, None, "no such file") from None
    except OSError as exc:
        raise InputError(path, None, _reason(exc)) from None
    if stat.S_ISDIR(mode):
        raise InputError(path, None, "is a directory, not a file")
    if stat.S_ISFIFO(mode) or stat.S_ISCHR(mode):
        if not pipe:
            raise InputError(path, None, "is a pipe or a device, which can be read only once, "
                             "and tcdb reads this file more than once (to check or checksum "
                             "it, then to store it): save it to a file first")
    elif not stat.S_ISREG(mode):
        raise InputError(path, None, "not a regular file (a socket or block device)")
    if not os.access(path, os.R_OK):
        raise InputError(path, None, "permission denied")
    return path


class InputStream(io.BufferedReader):
    """A buffered binary stream of an input file's content (decompressed), whose lines are
    bounded: `readline` and iteration refuse a line longer than `TCDB_MAX_LINE_BYTES` with the
    file and line, so a file without newlines cannot be read into memory whole."""

    def __init__(self, raw: io.RawIOBase, path: Path, *, max_line: int) -> None:
        super().__init__(raw, buffer_size=1 << 20)
        self.path = path
        self.max_line = max_line
        self.lines_read = 0

    def readline(self, size: int | None = -1) -> bytes:
        if size is not None and size >= 0:
            return super().readline(size)
        line = super().readline(self.max_line + 1)
        if len(line) > self.max_line and not line.endswith(b"\n"):
            raise InputError(self.path, self.lines_read + 1,
                             f"line longer than {self.max_line:,} bytes (TCDB_MAX_LINE_BYTES)")
        self.lines_read += 1
        return line

    def __next__(self) -> bytes:
        line = self.readline()
        if not line:
            raise StopIteration
        return line

    def __iter__(self) -> InputStream:
        return self


class _Prefixed(io.RawIOBase):
    """A raw stream whose first bytes were read already (to see a pipe's magic bytes)."""

    def __init__(self, head: bytes, raw: io.RawIOBase) -> None:
        self.head = head
        self.raw = raw

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        if self.head:
            n = min(len(buffer), len(self.head))
            buffer[:n] = self.head[:n]
            self.head = self.head[n:]
            return n
        return self.raw.readinto(buffer) or 0

    def close(self) -> None:
        self.raw.close()
        super().close()


class _Counting(io.RawIOBase):
    """A raw stream that counts the (compressed) bytes read through it."""

    def __init__(self, raw: io.RawIOBase | io.BufferedIOBase) -> None:
        self.raw = raw
        self.count = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        n = self.raw.readinto(buffer) or 0
        self.count += n
        return n

    def close(self) -> None:
        self.raw.close()
        super().close()


class _Bounded(io.RawIOBase):
    """A decompressor's output, refused once it expands past what one file may expand to."""

    def __init__(self, stream: io.BufferedIOBase, packed: _Counting, path: Path, kind: str,
                 limits: tuple[int, int]) -> None:
        self.stream = stream
        self.packed = packed
        self.path = path
        self.kind = kind
        self.max_bytes, self.max_ratio = limits
        self.count = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        try:
            n = self.stream.readinto(buffer)
        except lzma.LZMAError as exc:  # the other decompressors raise OSError or EOFError
            raise OSError(f"corrupt xz data: {exc}") from None
        self.count += n
        if self.count > self.max_bytes:
            raise InputError(self.path, None, f"{self.kind} data expanding past "
                             f"{self.max_bytes:,} bytes (TCDB_MAX_EXPANDED_BYTES): refused as a "
                             "possible decompression bomb")
        if self.count > _RATIO_FLOOR and self.count > self.max_ratio * max(self.packed.count, 1):
            raise InputError(self.path, None, f"{self.kind} data expanding more than "
                             f"{self.max_ratio} times ({self.packed.count:,} bytes to over "
                             f"{self.count:,}; TCDB_MAX_EXPANSION_RATIO): refused as a possible "
                             "decompression bomb")
        return n

    def close(self) -> None:
        self.stream.close()
        self.packed.close()
        super().close()


def _limits() -> tuple[int, int, int]:
    """(bytes one file may expand to, expansion ratio, bytes one line may hold)."""
    from tcdb.settings import get_settings

    s = get_settings()  # a bad value is one line naming its variable
    return s.max_expanded_bytes, s.max_expansion_ratio, s.max_line_bytes


_DECOMPRESSORS: dict[str, Callable[[io.BufferedReader], io.BufferedIOBase]] = {
    "gzip": lambda f: gzip.GzipFile(fileobj=f, mode="rb"),
    "bz2": lambda f: bz2.BZ2File(f, "rb"),
    "xz": lambda f: lzma.LZMAFile(f, "rb"),  # noqa: SIM115
}


def _content(path: Path, raw: io.RawIOBase | io.BytesIO, head: bytes) -> InputStream:
    """The stream of a file's content from its raw stream (positioned at its start)."""
    max_bytes, ratio, max_line = _limits()
    kind = compression_of(head)
    if kind is None:
        return InputStream(raw, path, max_line=max_line)  # type: ignore[arg-type]
    if kind not in READ:
        raw.close()
        raise InputError(path, None, f"compressed as {kind}, which tcdb does not read; "
                         "decompress it first")
    packed = _Counting(raw)
    stream = _DECOMPRESSORS[kind](io.BufferedReader(packed))
    return InputStream(_Bounded(stream, packed, path, kind, (max_bytes, ratio)), path,
                       max_line=max_line)


def open_input(path: Path | str) -> InputStream:
    """Open an input file for binary reading of its content: checked (`check_input`), and
    decompressed when its magic bytes say gzip, bz2 or xz, streamed and bounded."""
    path = check_input(path)
    try:
        raw = io.FileIO(path, "r")
    except OSError as exc:
        raise InputError(path, None, _reason(exc)) from None
    try:
        head = _read_head(raw)
        if raw.seekable():
            raw.seek(0)
            return _content(path, raw, head)
        return _content(path, _Prefixed(head, raw), head)
    except BaseException:
        raw.close()
        raise


def _read_head(raw: io.RawIOBase) -> bytes:
    head = b""
    while len(head) < _HEAD and (more := raw.read(_HEAD - len(head))):
        head += more
    return head


def read_input(path: Path | str, *, pipe: bool = False) -> tuple[bytes, bytes]:
    """(the file's bytes as stored, its content without a UTF-8 BOM) for readers that parse a
    whole file at once: decompressed in chunks and bounded like `open_input`.

    These files (runs, qrels, topics, scores…) are read more than once (a checksum, a format
    sniff, then the parse), so a pipe is refused unless the caller reads it once (`pipe`)."""
    path = check_input(path, pipe=pipe)
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except OSError as exc:
        raise InputError(path, None, _reason(exc)) from None
    kind = compression_of(raw[:_HEAD])
    data = raw
    if kind is not None:
        with _content(path, io.BytesIO(raw), raw[:_HEAD]) as stream:
            chunks = []
            try:
                while chunk := stream.read(_CHUNK):
                    chunks.append(chunk)
            except (OSError, EOFError) as exc:
                raise InputError(path, None, f"not a readable {kind} file: {exc}") from None
            data = b"".join(chunks)
            del chunks
    if data[:3] == b"\xef\xbb\xbf":
        data = data[3:]
    return raw, data


def read_input_text(path: Path | str) -> str:
    """A whole (possibly compressed) UTF-8 text file as str; bad bytes name their line."""
    _raw, data = read_input(path)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise utf8_error(path, data, exc) from None


def utf8_error(path: Path | str, data: bytes, exc: UnicodeDecodeError) -> InputError:
    """The InputError for bad UTF-8 at `exc.start`: which line, which byte of it."""
    line_start = data.rfind(b"\n", 0, exc.start) + 1
    return InputError(path, data.count(b"\n", 0, exc.start) + 1,
                      f"not valid UTF-8 (byte {exc.start - line_start + 1} of the line)")


# --- output -------------------------------------------------------------------------------------


STDOUT_NAMES = ("-", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1")


def is_stdout(path: Path | str | None) -> bool:
    """Whether an output path means this process's standard output: `-`, `/dev/stdout` and its
    aliases, or any name of the very file standard output is (a redirect's target)."""
    if path is None:
        return False
    if str(path) in STDOUT_NAMES:
        return True
    try:
        return os.path.samestat(os.stat(path), os.fstat(1))
    except (OSError, ValueError):
        return False


def check_output(path: Path | str, field: str = "out") -> Path:
    """The path, if a file can be written there; else a `FieldError` of `field` (the option, as
    `--out`) saying why. Called before any work, so a bad `--out` costs nothing. Standard
    output (`-`, `/dev/stdout`) and other devices or pipes are written as they are."""
    path = Path(path)
    if is_stdout(path):
        return path
    if path.exists() and not path.is_dir() and not stat.S_ISREG(path.stat().st_mode):
        if not os.access(path, os.W_OK):
            raise FieldError(field, f"{path}: permission denied")
        return path  # a device or a pipe (/dev/stderr, a fifo): written directly
    target = Path(os.path.realpath(path))
    folder = target.parent
    if target.is_dir():
        raise FieldError(field, f"{path}: is a directory")
    if not folder.exists():
        raise FieldError(field, f"{path}: folder {path.parent} does not exist")
    if not folder.is_dir():
        raise FieldError(field, f"{path}: {path.parent} is not a folder")
    if target.exists() and not os.access(target, os.W_OK):
        raise FieldError(field, f"{path}: permission denied")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise FieldError(field, f"{path}: permission denied (folder {path.parent})")
    return path


def write_output(path: Path | str, payload: bytes, field: str = "out") -> None:
    """Write `payload` to `path` whole or not at all: to a temporary file beside it, renamed
    over it once complete (a device or pipe is written directly). Failures (a full disk, a
    read-only file system) are one `FieldError` of `field`, and leave no file behind."""
    path = check_output(path, field)
    if is_stdout(path) or (path.exists() and not stat.S_ISREG(path.stat().st_mode)):
        try:
            if is_stdout(path):  # through Python's own stream, after what it holds
                sys.stdout.flush()
                sys.stdout.buffer.write(payload)
                sys.stdout.buffer.flush()
            else:
                with open(path, "wb") as out:
                    out.write(payload)
        except OSError as exc:
            nothing = " (nothing written)" if exc.errno == errno.ENOSPC else ""
            raise FieldError(field, f"{path}: {_reason(exc)}{nothing}") from None
        return
    target = Path(os.path.realpath(path))
    mode = target.stat().st_mode & 0o777 if target.exists() else _default_mode()
    temporary: str | None = None
    try:
        fd, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.",
                                         suffix=".partial")
        with os.fdopen(fd, "wb") as out:
            out.write(payload)
        os.chmod(temporary, mode)
        os.replace(temporary, target)
        temporary = None
    except OSError as exc:
        raise FieldError(field, f"{path}: {_reason(exc)} (nothing written)") from None
    finally:
        if temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(temporary)


def _default_mode() -> int:
    """The mode a new file gets (0o666 less the umask), which mkstemp's 0o600 would not."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask
