"""The ``trecqr`` console script: signal handlers first, then the command line.

Importing the command line (click, then numpy and pyarrow for the command) takes a tenth of a
second or more; a Ctrl-C, SIGTERM or SIGHUP in that time would otherwise print a Python
traceback. Until :func:`trecqr.cli.entry` installs the real handlers (which also remove
temporary files), these say the one line a command would say and exit with 128 + the signal:
nothing has been opened or written yet. Only the interpreter's own start-up, before this
module's first line, is outside their reach.
"""

import os

import _signal  # the C module: ``signal`` builds its enums first, which takes a while

_LINES = {}


def _early_exit(signum, frame):  # one write, then _exit
    try:
        os.write(2, _LINES[signum])
    except (OSError, KeyError):
        pass
    os._exit(128 + signum)


def _install() -> None:
    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        s = getattr(_signal, name, None)
        if s is None:
            continue
        _LINES[s] = (b"trecqr: interrupted\n" if name == "SIGINT" else
                     b"trecqr: terminated (%s)\n" % name.encode())
        try:
            if name != "SIGINT" and _signal.getsignal(s) == _signal.SIG_IGN:
                continue  # nohup: an ignored SIGHUP stays ignored
            _signal.signal(s, _early_exit)
        except (OSError, ValueError):
            pass


def entry() -> None:
    """Console script ``trecqr``."""
    _install()
    # lazy: ctypes and resource take 10-40 ms, which would come before the handlers above
    from .memory import fit_process

    fit_process()  # under a memory cap: before numpy and pyarrow reserve their share
    from .cli import entry as run

    run()


if __name__ == "__main__":
    entry()
