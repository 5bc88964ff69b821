"""``python -m trecqr`` and ``python -m trecqr.cli`` are the console script: the same output,
exit status and error path (the one-line errors and the signal guards of trecqr.cli.lifecycle),
not click's bare main."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import ROOT

FX = ROOT / "fixtures" / "cast2021"
SCRIPT = [sys.executable, "-c", "import sys; sys.argv[0] = 'trecqr'; "
          "from trecqr.runtime.launch import entry; entry()"]


def _run(prefix, args):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    res = subprocess.run(prefix + [str(a) for a in args], capture_output=True, env=env,
                         cwd=ROOT, timeout=120, stdin=subprocess.DEVNULL)
    return res.returncode, res.stdout, res.stderr


@pytest.mark.parametrize("module", ["trecqr", "trecqr.cli"])
def test_python_m_is_the_console_script(module):
    ok = ["eval", "-m", "map", FX / "qrels.txt", FX / "convdr.run"]
    code, out, err = _run([sys.executable, "-m", module], ok)
    assert (code, out, err) == _run(SCRIPT, ok)
    assert code == 0 and out.startswith(b"map                   \tall\t")
    # errors go through the guards: one line, exit 2 (a device that never ends is refused by
    # the entry before click parses anything; a missing file by the command's error path)
    for bad, line in ((["eval", "-m", "map", "/dev/zero", FX / "convdr.run"],
                       b"/dev/zero: a device that never ends; give a file\n"),
                      (["eval", "-m", "map", FX / "qrels.txt", "/no/such.run"],
                       b"/no/such.run: no such file\n")):
        assert _run([sys.executable, "-m", module], bad) == (2, b"", line)
