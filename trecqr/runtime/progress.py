"""Where libraries send what they have to say while they work: progress bars and info lines.

A library never writes to the terminal itself; it calls :func:`progress`, :func:`progress_bar`
or :func:`info`, and the installed :class:`Reporter` decides. The default, for the command line
and for Python callers alike, is today's visible behaviour (:class:`StderrReporter`): tqdm bars
on stderr when it is a terminal (and tqdm is installed), info lines on stderr. A Python caller
can silence it or capture the lines::

    from trecqr.runtime import progress

    with progress.silenced():
        build_index(...)          # no bars, no lines
    with progress.captured() as lines:
        build_index(...)          # lines: the info lines, in order; no bars

Layer 0: imports nothing of trecqr.
"""

from __future__ import annotations

import contextlib
import sys


class _NoBar:
    """A bar that counts and shows nothing."""

    n = 0

    def update(self, n: int = 1) -> None:
        self.n += n

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Reporter:
    """Says nothing: no bars, no lines. Subclasses show or keep them."""

    def info(self, line: str) -> None:
        """One line of information (no newline)."""

    def progress(self, iterable, **kw):
        """iterable, advanced by a bar (kw: tqdm's desc, unit, total, mininterval...)."""
        return iterable

    def progress_bar(self, **kw):
        """A bar to advance by hand (``bar.update(n)``; a context manager)."""
        return _NoBar()


class StderrReporter(Reporter):
    """Info lines on stderr; tqdm bars, silent when stderr is not a terminal (tqdm's own
    ``disable=None``), and none at all without tqdm."""

    def info(self, line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    def progress(self, iterable, **kw):
        try:
            from tqdm import tqdm  # lazy (tests/test_imports.py): optional, and only for bars
        except ImportError:
            return iterable
        kw.setdefault("disable", None)  # None: off when the output is not a terminal
        return tqdm(iterable, **kw)

    def progress_bar(self, **kw):
        try:
            from tqdm import tqdm  # lazy (tests/test_imports.py): optional, and only for bars
        except ImportError:
            return _NoBar()
        kw.setdefault("disable", None)
        return tqdm(**kw)


class CapturingReporter(Reporter):
    """Keeps the info lines in :attr:`lines`; no bars."""

    def __init__(self):
        self.lines: list[str] = []

    def info(self, line: str) -> None:
        self.lines.append(line)


_current: Reporter = StderrReporter()


def current() -> Reporter:
    return _current


def install(reporter: Reporter) -> Reporter:
    """Make reporter the process's reporter; returns the one it replaces."""
    global _current
    old, _current = _current, reporter
    return old


@contextlib.contextmanager
def using(reporter: Reporter):
    """Within: reporter is the reporter (the one before comes back after)."""
    old = install(reporter)
    try:
        yield reporter
    finally:
        install(old)


def silenced():
    """Within: no bars and no info lines."""
    return using(Reporter())


@contextlib.contextmanager
def captured():
    """Within: info lines are kept in the list yielded (no bars)."""
    with using(CapturingReporter()) as rep:
        yield rep.lines


def info(line: str) -> None:
    _current.info(line)


def progress(iterable, show: bool = True, **kw):
    """iterable with a bar when show (the caller's --quiet off), else iterable itself."""
    return _current.progress(iterable, **kw) if show else iterable


def progress_bar(show: bool = True, **kw):
    """A bar to advance by hand when show, else one that shows nothing."""
    return _current.progress_bar(**kw) if show else _NoBar()
