"""``trecqr`` for the docs' bash blocks without each command paying the interpreter's and the
heavy imports' start-up (numpy, pyarrow, scipy.stats: about a second of CPU per command, a
hundred commands in the docs).

A server process (``python trecqr_forks.py SOCKET``, started with the blocks' environment)
imports trecqr's CLI and those libraries once, then forks a child per command. A ``trecqr``
script, first on the blocks' PATH, hands the server its argv, working folder, environment and
its own stdin, stdout and stderr (file descriptors passed over the Unix socket), then exits
with the child's status. The child takes those descriptors as 0, 1 and 2, that folder and
environment, and runs the console script's ``sys.exit(main())`` at the top of its stack, so
it ends as a fresh interpreter does (atexit, flushing, a broken pipe): a fresh process in all
but the modules already imported. Commands run one after another or side by side (a pipe)."""

from __future__ import annotations

import array
import json
import os
import signal
import socket
import stat
import subprocess
import sys
from pathlib import Path

# imported before forking: what most commands import anyway (the rest loads in the child).
# pandas: pyarrow imports it for its first numpy conversion (about half the commands);
# bm25s with numba: index, search, cqr and suggest --sim-ret
PRELOAD = ("numpy", "pyarrow", "pyarrow.compute", "scipy.stats", "pandas", "bm25s",
           "trecqr.runtime.launch", "trecqr.cli", "trecqr.cli.engine_choice",
           "trecqr.api.invocation", "trecqr.report.breakdown")

CLIENT = """#!{python} -S
import array, json, os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect({socket_path!r})
msg = json.dumps({{"argv": sys.argv[1:], "cwd": os.getcwd(), "env": dict(os.environ)}}).encode()
s.sendmsg([len(msg).to_bytes(8, "big") + msg],
          [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [0, 1, 2]))])
status = int(s.makefile("rb").read() or b"-9")
if status < 0:
    os.kill(os.getpid(), -status)
sys.exit(status)
"""


def start(folder: Path, env: dict) -> tuple[subprocess.Popen, dict]:
    """(the server, the environment whose PATH finds the forking ``trecqr`` first)."""
    sock, bin_dir = folder / "trecqr.sock", folder / "bin"
    bin_dir.mkdir()
    client = bin_dir / "trecqr"
    client.write_text(CLIENT.format(python=sys.executable, socket_path=str(sock)))
    client.chmod(client.stat().st_mode | stat.S_IXUSR)
    server = subprocess.Popen([sys.executable, __file__, str(sock)], env=env,
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
    # the server writes one line once its imports are done and the socket is listening; end
    # of file first means it exited (no polling: the read blocks until one or the other)
    ready = server.stdout.readline()
    server.stdout.close()
    if ready != b"ready\n":
        raise RuntimeError(f"the docs' trecqr server exited {server.wait()}")
    return server, dict(env, PATH=str(bin_dir) + os.pathsep + env["PATH"])


def stop(server: subprocess.Popen) -> None:
    server.terminate()
    server.wait(timeout=60)


def _receive(conn: socket.socket) -> tuple[dict, list[int]]:
    head, fds = b"", []
    fd_size = array.array("i").itemsize
    while len(head) < 8:
        data, ancdata, _, _ = conn.recvmsg(8 - len(head), socket.CMSG_LEN(3 * fd_size))
        if not data:
            raise EOFError
        head += data
        for level, kind, payload in ancdata:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds += array.array("i", payload[:len(payload) - len(payload) % fd_size])
    size, body = int.from_bytes(head, "big"), b""
    while len(body) < size:
        data = conn.recv(size - len(body))
        if not data:
            raise EOFError
        body += data
    return json.loads(body), fds


def _become_the_command(request: dict, fds: list[int]) -> None:
    """In the command's child: its descriptors, folder, environment and argv."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    script = os.path.join(os.path.dirname(sys.executable), "trecqr")  # the console script
    sys.argv, sys.path[0] = [script, *request["argv"]], os.path.dirname(script)


def _reap(options: int) -> None:
    """Wait for the finished waiters: waited for, their CPU time (and their commands') counts in
    the server's, and so in the test process's (a SIG_IGN'd SIGCHLD would drop it)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, options)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _reap_and_exit(signum, frame):
    _reap(0)
    os._exit(0)


def serve(socket_path: str) -> None:
    sys.path[0] = os.path.dirname(sys.executable)  # the console script's, not this folder
    for name in PRELOAD:
        try:
            __import__(name)
        except ImportError:  # an extra not installed: the command finds out as it would
            pass
    signal.signal(signal.SIGTERM, _reap_and_exit)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(socket_path + ".tmp")
    listener.listen(8)
    os.rename(socket_path + ".tmp", socket_path)
    ready = os.dup(1)  # the pipe start() reads; the commands' stdout is their own
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.close(null)
    os.write(ready, b"ready\n")
    os.close(ready)
    while True:
        conn, _ = listener.accept()
        request, fds = _receive(conn)
        if os.fork():  # the server: on to the next command
            conn.close()
            for fd in fds:
                os.close(fd)
            _reap(os.WNOHANG)
            continue
        # a waiter: forks the command and tells the client how it ended
        listener.close()
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        child = os.fork()
        if child == 0:
            conn.close()
            _become_the_command(request, fds)
            return  # the command runs at the top of the stack (see the end of this file)
        try:
            for fd in fds:
                os.close(fd)
            _, status = os.waitpid(child, 0)
            conn.sendall(str(os.waitstatus_to_exitcode(status)).encode())
        finally:
            os._exit(0)


if __name__ == "__main__":
    serve(sys.argv[1])
    from trecqr.runtime.launch import entry  # the console script's own lines

    sys.argv[0] = sys.argv[0].removesuffix(".exe")
    sys.exit(entry())
