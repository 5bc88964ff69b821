"""Errors that carry a `file:line:` location.

Every problem with user input becomes an :class:`InputError`; the CLI prints it as one line
``file:line: what is wrong`` and exits with status 2, so a messy run file never produces a
traceback or a partial result.
"""

from __future__ import annotations


class TrecqrError(Exception):
    """Base class of every error trecqr raises on purpose.

    ``cli``: the same error in the command line's words, when its hint names options (Python's
    keyword names in ``str(exc)``, the command line's options there; see :func:`hinted`)."""

    cli: str | None = None


class InputError(TrecqrError, ValueError):
    """Bad input: a file, a line in it (1-based, or None), and what is wrong."""

    def __init__(self, source: str, line: int | None, message: str):
        self.source = source
        self.line = line
        self.message = message
        super().__init__(self.location() + message)

    def __reduce__(self):  # pickled from a worker process to the caller whole
        return (type(self), (self.source, self.line, self.message))

    def location(self) -> str:
        source = self.source if self.source != "" else "''"  # an empty name still shows
        if self.line is None:
            return f"{source}: "
        return f"{source}:{self.line}: "


class NoCommonTopicsError(InputError):
    """No topic of the run is among the qrels' topics. It keeps (some of) both id lists, so
    that the command line can say when they spell the same turns two ways (``QReCC-Test_5_2``
    and ``5_2``) and which option converts them."""

    SAMPLE = 2000  # ids kept per side: enough to find shared turns, small to pickle

    def __init__(self, source: str, line: int | None, message: str, run_ids=(),
                 qrels_ids=()):
        super().__init__(source, line, message)
        self.run_ids = tuple(run_ids)[:self.SAMPLE]
        self.qrels_ids = tuple(qrels_ids)[:self.SAMPLE]

    def __reduce__(self):
        return (type(self), (self.source, self.line, self.message, self.run_ids,
                             self.qrels_ids))


class UsageError(TrecqrError, ValueError):
    """Bad options or measure names (reported as ``trecqr: message``).

    ``cli``, when given, is the same message in the command line's words (``-c`` where Python
    says ``complete=``): hints name the options of the door the user came through, so the
    command line prints ``cli`` and Python shows the message.
    """

    def __init__(self, message: str = "", *, cli: str | None = None):
        super().__init__(message)
        self.cli = cli


def hinted(exc: TrecqrError, python: str, cli: str) -> TrecqrError:
    """exc with a hint that names options appended: ``python`` (keyword names, ``missing='drop'``)
    in ``str(exc)``, ``cli`` (``--missing drop``) in ``exc.cli``, which the command line
    prints; a hint never mixes the two."""
    base = str(exc)
    exc.cli = f"{base}; {cli}"
    exc.args = (f"{base}; {python}",)
    if isinstance(exc, InputError):
        exc.message = f"{exc.message}; {python}"
    return exc
