"""Fuzz campaign: every command and every option of trecqr, as a hostile user would run them.

Usage (from the project root; ../shared/data must be present):

    nice python3 benchmarks/fuzz.py --cases 4000 --seed 1 --jobs 2 --report fuzz-report.json

Each case takes a valid command of one of the commands that ``trecqr --help`` lists (and each
``convert``, ``plot`` and ``validate`` subcommand), built on real files of ../shared/data and
fixtures/ cut to a few hundred lines, and changes one or two things:

- a file: flipped or inserted bytes (NUL, 0xff), deleted / duplicated / swapped / shuffled
  lines, a field dropped, added or replaced by an odd value, a number replaced (huge, NaN, inf,
  negative, hex), re-encoded (UTF-16, Latin-1, a BOM, CRLF), truncated, compressed (gzip,
  truncated gzip, bzip2, xz, zstd), emptied, replaced by a folder, a missing file or a symlink
  loop; JSON files also get lone surrogates (``"\\ud800"``), deep nesting and huge numbers;
  index folders lose or damage a file;
- an option: any option of the command (read from its click definition; the one the command
  has had least often so far, so that every option gets cases), with a valid choice or an odd
  value: numbers (-1, 0, 2**31, 2**63, 1e309, nan, ...), text (empty, ``,,``, ``a,b,c``, an
  unclosed quote, ``$x^$``, 10,000 characters, odd measure names), a real file of another
  kind, an output path in the case folder or an odd one;
- the environment: stdout closed or /dev/full, a non-UTF-8 file name, the input through stdin
  or a FIFO (with and without a writer), /dev/zero or /dev/urandom as an input, ``-o`` into a
  missing folder, SIGINT / SIGTERM / SIGHUP at a random moment.

A case is *clean* when the command exits 0, or 2 with at most one stderr line (click's usage
errors aside), or (for the environment cases that call for it) 1 or 128+signal with at most one
line; with no traceback, no "internal error", nothing left behind (no output of a failed
command, no ``.trecqr-*`` temporary anywhere, nothing in the case's TMPDIR, nothing under
``~/.ir_datasets``), within the time limit, and not exit 0 with an empty output (stdout and
every file written blank) from inputs that were not emptied. The table counts these per
command; --report writes the summary (cases on fuse, report, measures and the turn-policy,
protocol and group options; options no case held) and every unclean case (command line, what
was changed, stderr) as JSON, to replay it. The code is the package benchmarks/fuzzing/.
"""

from __future__ import annotations

import sys

from fuzzing.cli import main

if __name__ == "__main__":
    sys.exit(main())
