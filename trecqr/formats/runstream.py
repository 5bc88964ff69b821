"""A run file read piece by piece, each piece whole topics, in bounded memory.

:func:`topic_pieces` yields :class:`~trecqr.formats.run.Run` objects of about ``piece_bytes``
of text each, in file order, cut between two topics:

* a plain file is cut into byte ranges at topic boundaries and each range is read by the C
  scanner (64-bit offsets: any file size, any number of lines);
* a compressed file (gzip, bzip2, xz, zstd, known by its first bytes) is decompressed as a
  stream (gzip and zstd by Arrow's codecs, bzip2 and xz by Python's), each piece written to a
  temporary file and scanned there.

A file whose topics are interleaved has a topic in more than one piece: the caller sees it
(:class:`Interleaved`) and reads :func:`partitioned_pieces` instead, which spills the run to
``buckets`` temporary files by a hash of the topic (one pass, bounded buffers; every topic
whole in one file) and yields each file as a piece. The pieces' union is the run, line for
line, so scoring them one by one and joining the per-topic values is exact.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import queue
import shutil
import tempfile
import threading

from trecqr.runtime.deferred import pa
from trecqr.errors import InputError
from trecqr.formats.textio import refuse_bom
from trecqr.formats import _scan
from trecqr.formats.run import scan_file

PIECE_BYTES = 96 << 20  # run text per piece: ~30-60 bytes of memory per line of it, scored
_WINDOW = 64 << 10
_MAGIC = {b"\x1f\x8b": "gzip", b"BZh": "bz2", b"\xfd7zXZ\x00": "xz",
          b"\x28\xb5\x2f\xfd": "zstd"}


class Interleaved(Exception):
    """A topic's lines are not consecutive: the run needs partitioned_pieces."""


class NeedsWholeFile(Exception):
    """A piece the scanner cannot read (bad line, non-ASCII text, ...): the whole-file readers
    report it (with its line number) or read it."""


def compression(path) -> str | None:
    """gzip, bz2, xz or zstd from the file's first bytes; None for a plain file."""
    with open(path, "rb") as fh:
        return compression_of(fh.read(6))


def compression_of(head: bytes) -> str | None:
    """:func:`compression` of a file whose first bytes are ``head``."""
    for magic, kind in _MAGIC.items():
        if head.startswith(magic):
            return kind
    return None


def _topic(line: bytes, comments: bool):
    """The topic of a data line, None for a blank (or, with comments, '#') line."""
    fields = line.split(None, 1)
    if not fields or (comments and fields[0].startswith(b"#")):
        return None
    return fields[0]


def _boundary(fh, target: int, size: int, comments: bool) -> int:
    """The offset of the first line at or after target whose topic differs from that of the
    data line before it (size when none does before the end)."""
    pos = target
    fh.seek(pos)
    head = fh.read(_WINDOW)
    nl = head.find(b"\n")
    if nl < 0:
        return size
    pos += nl + 1
    prev = None
    carry = head[nl + 1:]
    while True:
        lines = carry.split(b"\n")
        carry = lines.pop()  # incomplete last line
        for line in lines:
            t = _topic(line, comments)
            if t is not None:
                if prev is not None and t != prev:
                    return pos
                prev = t
            pos += len(line) + 1
        more = fh.read(_WINDOW)
        if not more:
            return size
        carry += more


def _ranges(path, piece_bytes: int, comments: bool):
    size = os.path.getsize(path)
    start = 0
    with open(path, "rb") as fh:
        while start < size:
            stop = size if size - start <= piece_bytes * 3 // 2 else \
                _boundary(fh, start + piece_bytes, size, comments)
            yield start, stop
            start = stop


def _scanned(path, comments, judged, float32, span=None):
    run = scan_file(path, comments, judged, float32, span)
    if run is None:
        raise NeedsWholeFile(path)
    return run


def open_stream(path, kind: str):
    """A binary stream of the decompressed file."""
    if kind in ("gzip", "zstd"):
        if pa.Codec.is_available(kind):
            return pa.input_stream(os.fspath(path), compression=kind, buffer_size=8 << 20)
        if kind == "gzip":
            return gzip.open(path, "rb")
        raise InputError(os.fspath(path), None, "zstd-compressed, and this pyarrow has no zstd")
    if kind == "bz2":
        return bz2.open(path, "rb")
    return lzma.open(path, "rb")


def _split_tail(chunk, comments: bool, end: int | None = None) -> int:
    """Where the last topic of chunk[:end] starts (0: it is all one topic)."""
    end = len(chunk) if end is None else end
    last = None
    while end > 0:
        start = chunk.rfind(b"\n", 0, end - 1) + 1
        t = _topic(chunk[start:end], comments)
        if t is not None:
            if last is not None and t != last:
                return end
            last = t
        end = start
    return 0


def _blocks(path, kind: str, size: int):
    """Blocks of at most size bytes of the decompressed file."""
    stream = open_stream(path, kind)
    try:
        while data := stream.read(size):
            yield data
    finally:
        stream.close()


def _read_ahead(path, kind: str, size: int):
    """Blocks of decompressed data, decompressed in a thread one block ahead of the caller
    (the codecs release the GIL: decompressing overlaps with scanning and scoring)."""
    try:
        yield from read_ahead(_blocks(path, kind, size))
    except (OSError, EOFError, lzma.LZMAError, ValueError) as exc:
        if isinstance(exc, InputError):
            raise
        raise InputError(os.fspath(path), None,
                         f"corrupt or truncated {kind} data ({exc})") from None


def _decompressed_chunks(path, kind: str, piece_bytes: int, comments: bool, whole_topics: bool):
    """Decompressed text in pieces of about piece_bytes, cut after a newline (and, with
    whole_topics, between two topics)."""
    # read in blocks of at most 16 MiB, gathered in one buffer: one piece and a block or two
    # in memory, not several pieces
    blocks = _read_ahead(path, kind, max(1 << 16, min(piece_bytes, 16 << 20)))
    buf = bytearray()
    try:
        for data in blocks:
            buf += data
            del data
            if len(buf) < piece_bytes:
                continue
            cut = buf.rfind(b"\n") + 1
            if cut and whole_topics:
                cut = _split_tail(buf, comments, cut)
            if cut == 0:  # one topic (or one line) so far: read on
                continue
            with memoryview(buf) as view:
                piece = bytes(view[:cut])
            del buf[:cut]
            yield piece
            piece = None
        if buf:
            if not buf.endswith(b"\n"):
                buf += b"\n"
            yield bytes(buf)
    finally:
        blocks.close()


def read_ahead(pieces):
    """The items of the iterator pieces, each made in a thread while the caller works on the
    one before (the scanner releases the GIL: reading piece k+1 overlaps with scoring piece
    k, at the cost of one more piece in memory). Exceptions come out where they would have;
    closing this generator stops the thread and closes pieces."""
    ready: queue.Queue = queue.Queue(maxsize=1)
    stop = threading.Event()
    done = object()

    def produce():
        try:
            for item in pieces:
                ready.put((True, item))
                item = None
                if stop.is_set():
                    break
            ready.put((True, done))
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer, which raises it
            ready.put((False, exc))

    worker = threading.Thread(target=produce, daemon=True, name="trecqr-read-ahead")
    worker.start()
    try:
        while True:
            ok, item = ready.get()
            if not ok:
                raise item
            if item is done:
                return
            yield item
            item = None
    finally:
        stop.set()
        while worker.is_alive():  # let the thread see stop (it may wait on a full queue)
            try:
                ready.get(timeout=0.1)
            except queue.Empty:
                pass
        worker.join()
        closer = getattr(pieces, "close", None)
        if closer is not None:
            closer()


class _PieceFile:
    """Where a decompressed piece is put for the scanner: an in-memory file (memfd, Linux) or
    a temporary file, rewritten for each piece."""

    def __init__(self, tmpdir=None):
        self._tmp = None
        try:
            self.fd = os.memfd_create("trecqr-piece")
            self.path = f"/proc/self/fd/{self.fd}"
            if not os.path.isfile(self.path):
                raise OSError("no /proc")
        except (AttributeError, OSError):
            self._tmp = tempfile.TemporaryDirectory(prefix="trecqr-piece-", dir=tmpdir)
            self.path = os.path.join(self._tmp.name, "piece.txt")
            self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)

    def write(self, data: bytes) -> str:
        os.ftruncate(self.fd, 0)
        view, off = memoryview(data), 0
        while off < len(data):
            off += os.pwrite(self.fd, view[off:], off)
        return self.path

    def close(self):
        os.close(self.fd)
        if self._tmp is not None:
            self._tmp.cleanup()


def topic_pieces(path, *, comments: bool, judged=None, float32=None,
                 piece_bytes: int = PIECE_BYTES, tmpdir=None):
    """Runs of whole topics, in file order (see the module's docstring)."""
    name = os.fspath(path)
    refuse_bom(name)
    kind = compression(name)
    if kind is None:
        for span in _ranges(name, piece_bytes, comments):
            yield _scanned(name, comments, judged, float32, span)
        return
    piece = _PieceFile(tmpdir)
    try:
        for chunk in _decompressed_chunks(name, kind, piece_bytes, comments, True):
            where = piece.write(chunk)
            del chunk
            yield _scanned(where, comments, judged, float32)
    finally:
        piece.close()


def partitioned_pieces(path, *, comments: bool, judged=None, float32=None,
                       piece_bytes: int = PIECE_BYTES, tmpdir=None):
    """Runs of whole topics for a run whose topics are interleaved: the file is spilled to
    temporary files by topic hash, each then read as a piece. The last run yielded carries
    the runid of the file's last data line."""
    name = os.fspath(path)
    refuse_bom(name)
    kind = compression(name)
    size = os.path.getsize(name) * (4 if kind else 1)
    # pieces of interleaved topics are sorted in memory: smaller than a grouped run's
    buckets = max(2, min(512, -(-size // piece_bytes) * 4))
    tmp = tempfile.mkdtemp(prefix="trecqr-spill-", dir=tmpdir)
    try:
        paths = [os.path.join(tmp, f"{i:03d}.txt") for i in range(buckets)]
        fds = [os.open(p, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600) for p in paths]
        last = b""
        try:
            if kind is None:
                res = _scan.split_topics(name, 0, -1, comments, fds)
                if res is None:
                    raise NeedsWholeFile(name)
                last = res[1] or last
            else:
                piece = _PieceFile(tmp)
                try:
                    for chunk in _decompressed_chunks(name, kind, piece_bytes, comments, False):
                        where = piece.write(chunk)
                        del chunk
                        res = _scan.split_topics(where, 0, -1, comments, fds)
                        if res is None:
                            raise NeedsWholeFile(name)
                        last = res[1] or last
                finally:
                    piece.close()
        finally:
            for fd in fds:
                os.close(fd)
        fields = last.split()
        runid = fields[5].decode("utf-8", "replace") if len(fields) >= 6 else None
        for i, p in enumerate(paths):
            if os.path.getsize(p) == 0:
                os.unlink(p)
                continue
            run = _scanned(p, comments, judged, float32)
            if runid is not None:
                run.runid = runid  # trec_eval prints the runid of the file's last line
            yield run
            del run
            os.unlink(p)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
