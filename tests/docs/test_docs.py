"""The README and docs/*.md are a contract: every fenced ``bash`` and ``python`` block runs here and
must print the numbers it shows.

Conventions for writing examples (docs/README.md repeats them for writers):

* **Which blocks run.** Every fenced block whose language is ``bash`` or ``python`` in README.md
  and docs/*.md. A block that cannot run here is preceded (last non-blank line before its fence)
  by ``<!-- docs-test: skip REASON -->``; :data:`SKIPPED` lists every such block with its reason
  and :func:`test_skipped_blocks_are_the_listed_ones` fails when a skip is added, removed or
  reworded without updating that list. Other languages (``text``, plain fences) never run.
* **Where they run.** All blocks of one Markdown file run in order, in one fresh temporary folder
  holding a copy of ``fixtures/`` (so ``fixtures/...`` paths work and every output file lands in
  the temporary folder, never in the repository); a later block may use what an earlier one wrote.
  The environment variable ``TRECQR_DATA`` names the shared data folder (../shared/data, as the
  tests find it): write ``$TRECQR_DATA/cast2021/...`` in bash and
  ``os.environ["TRECQR_DATA"]`` in Python. Nothing else is set: no network, stderr is not a
  terminal (so no progress bars).
* **bash blocks** run with ``bash -e`` and stderr merged into stdout (``PYTHONUNBUFFERED=1``,
  so they interleave as written). Lines starting with ``#   `` (hash, three spaces) right after a
  command are its expected output; they are matched against what that command printed (stdout and
  stderr). Do not put them inside a loop or a ``\\``-continued command. A block of language
  ``text`` or a plain fence that follows a bash block (only blank lines between) is the expected
  output of the whole bash block.
* **python blocks** of one file share one namespace and run in-process (cwd = the temporary
  folder). A top-level expression statement that ends with a comment, ``x.aggregate()  # {...}``,
  is checked: the comment is the expected ``repr`` of the value. A ``text``/plain block that
  follows a python block is its expected stdout. Any other comment is just a comment.
* **Matching.** Expected lines are matched in order against output lines; output lines not shown
  are allowed (show only what matters). Whitespace runs count as one space, ``...`` matches
  anything within a line, and a line that is only ``...`` is decoration. Everything else must be
  identical, so every number shown must be printed exactly so. In Python values a decimal number
  shown with d places matches a value that prints so at d places (``0.4713`` matches
  ``0.47128...``), and ``"`` and ``'`` are the same.

A failure names the file, the block's line and the expected line that found no output line, with
the output. The collector is this file (no third-party tool: the examples are mostly shell
commands, which sybil, phmdoctest and pytest-examples do not run).
"""

from __future__ import annotations

import ast
import contextlib
import io
import os
import re
import shutil
import subprocess
import sys
import tokenize
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import trecqr_forks
from conftest import DATA, ROOT

SKIP_RE = re.compile(r"^<!--\s*docs-test:\s*skip\s+(.*?)\s*-->\s*$")
FENCE_RE = re.compile(r"^(```+|~~~+)\s*([\w+-]*)\s*$")
EXPECT_PREFIX = "#   "
MARK = "@@trecqr-docs-test-step@@"

# Every block that does not run here, (file, reason): keep in step with the Markdown sources.
SKIPPED = [
    ("README.md", "installs packages and runs the whole test suite; CI runs both (bash .ci/run)"),
    ("docs/cqr.md", "starts a JVM and loads torch (about 2 minutes on the shared test machine); "
                    "tests/retrieval/test_retrieval_lucene.py and "
                    "tests/retrieval/test_retrieval_dense.py run both "
                    "backends on the demo collections and pin their numbers"),
    ("docs/fidelity.md", "needs checkouts of pytrec_eval, trec_eval and ir_measures"),
    ("docs/install.md", "builds a wheel and installs it with its dependencies in a fresh venv "
                        "(about 4 minutes); its last run is shown below"),
    ("docs/performance.md", "generates 10 GB of runs and takes about half an hour"),
]


@dataclass
class Block:
    path: Path
    line: int          # 1-based line of the opening fence
    lang: str
    text: str
    skip: str | None = None
    expected_output: list[str] = field(default_factory=list)  # from a following text block

    @property
    def where(self) -> str:
        return f"{_rel(self.path)}:{self.line}"


def _rel(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def doc_files() -> list[Path]:
    return [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))


def parse_blocks(path: Path) -> list[Block]:
    """Fenced blocks of a Markdown file, with skip markers and following output blocks attached."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    i, last_nonblank, after_block = 0, "", None
    while i < len(lines):
        m = FENCE_RE.match(lines[i].strip())
        if not m:
            if lines[i].strip():
                last_nonblank, after_block = lines[i].strip(), None
            i += 1
            continue
        fence, lang = m.group(1), m.group(2).lower()
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence):
            j += 1
        body = "\n".join(lines[i + 1:j])
        skip = SKIP_RE.match(last_nonblank)
        if lang in ("", "text") and after_block is not None:
            after_block.expected_output = body.splitlines()
            after_block = None
        else:
            block = Block(path, i + 1, lang, body, skip.group(1) if skip else None)
            blocks.append(block)
            after_block = block if lang in ("bash", "python") else None
        last_nonblank = lines[j].strip() if j < len(lines) else ""
        i = j + 1
    return blocks


def runnable(blocks):
    return [b for b in blocks if b.lang in ("bash", "python")]


# ---------------------------------------------------------------------------- matching
def _norm(text: str) -> str:
    return " ".join(text.split())


def _line_regex(expected: str, numbers: bool) -> re.Pattern:
    parts = []
    for k, piece in enumerate(_norm(expected).split("...")):
        if k:
            parts.append(".*")
        if numbers:  # a decimal number becomes a group, checked by rounding afterwards
            for n, chunk in enumerate(re.split(r"(-?\d+\.\d+)", piece)):
                parts.append(r"(-?\d+(?:\.\d+)?(?:e[-+]?\d+)?)" if n % 2 else re.escape(chunk))
        else:
            parts.append(re.escape(piece))
    return re.compile("".join(parts))


def line_matches(expected: str, actual: str, numbers: bool = False) -> bool:
    if numbers:
        expected, actual = expected.replace('"', "'"), actual.replace('"', "'")
    m = _line_regex(expected, numbers).fullmatch(_norm(actual))
    if not m or not numbers:
        return bool(m)
    shown = re.findall(r"-?\d+\.\d+", _norm(expected).replace('"', "'"))
    for want, got in zip(shown, m.groups()):
        places = len(want.split(".")[1])
        if f"{float(got):.{places}f}" != want:
            return False
    return True


def unmatched(expected: list[str], output: str, numbers: bool = False) -> str | None:
    """The first expected line (in order) that no remaining output line matches, or None."""
    out = output.splitlines()
    k = 0
    for line in expected:
        if not line.strip() or line.strip() == "...":
            continue
        while k < len(out) and not line_matches(line, out[k], numbers):
            k += 1
        if k == len(out):
            return line
        k += 1
    return None


# ---------------------------------------------------------------------------- running
def bash_steps(text: str) -> tuple[str, list[list[str]]]:
    """The script to run (a marker echoed after each command that shows its output) and the
    expected lines of each step."""
    script, expected, current = [], [], None
    for line in text.splitlines():
        if line.startswith(EXPECT_PREFIX) or line.rstrip() == EXPECT_PREFIX.rstrip():
            if current is None:
                current = []
                expected.append(current)
                script.append(f"echo {MARK}")
            current.append(line[len(EXPECT_PREFIX):])
            continue
        current = None
        script.append(line)
    return "\n".join(script) + "\n", expected


def doc_env() -> dict:
    env = dict(os.environ)
    env["TRECQR_DATA"] = str(DATA)
    env["PYTHONUNBUFFERED"] = "1"
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    env.pop("COLUMNS", None)
    return env


def run_bash(block: Block, cwd: Path, env: dict | None = None) -> list[str]:
    script, steps = bash_steps(block.text)
    proc = subprocess.run(["bash", "-e", "-c", "exec 2>&1\n" + script], cwd=cwd,
                          env=doc_env() if env is None else env,
                          stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True,
                          timeout=600)
    output = proc.stdout
    problems = []
    if proc.returncode != 0:
        problems.append(f"{block.where}: bash block exited {proc.returncode}:\n{output}")
    segments = output.split(MARK + "\n")
    for n, want in enumerate(steps):
        got = segments[n] if n < len(segments) else ""
        miss = unmatched(want, got)
        if miss is not None:
            problems.append(f"{block.where}: step {n + 1}: expected line not printed: {miss!r}\n"
                            f"--- printed:\n{got}")
    if block.expected_output:
        miss = unmatched(block.expected_output, output.replace(MARK + "\n", ""))
        if miss is not None:
            problems.append(f"{block.where}: expected output line not printed: {miss!r}\n"
                            f"--- printed:\n{output}")
    return problems


class _Checker:
    def __init__(self, block: Block):
        self.block, self.problems = block, []

    def __call__(self, value, expected: str, line: int):
        if unmatched([expected], repr(value), numbers=True) is not None:
            self.problems.append(f"{_rel(self.block.path)}:{self.block.line + line}: "
                                 f"expected {expected!r}, got {value!r}")
        return value


def _expected_comments(source: str) -> dict[int, str]:
    comments = {}
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            comments[tok.start[0]] = tok.string[1:].strip()
    return comments


def python_program(source: str):
    """The block's statements, each top-level expression with a trailing comment wrapped in a
    check of its repr against the comment."""
    tree = ast.parse(source)
    comments = _expected_comments(source)
    lines = source.splitlines()
    body = []
    for stmt in tree.body:
        end = stmt.end_lineno
        code_tail = lines[end - 1][stmt.end_col_offset:] if stmt.end_lineno else ""
        if (isinstance(stmt, ast.Expr) and end in comments and code_tail.strip().startswith("#")):
            call = ast.Call(func=ast.Name("__docs_check__", ast.Load()),
                            args=[stmt.value, ast.Constant(comments[end]), ast.Constant(end)],
                            keywords=[])
            stmt = ast.Expr(call)
        body.append(stmt)
    module = ast.Module(body=body, type_ignores=[])
    return compile(ast.fix_missing_locations(module), "<docs>", "exec")


def run_python(block: Block, cwd: Path, namespace: dict) -> list[str]:
    checker = _Checker(block)
    namespace["__docs_check__"] = checker
    out = io.StringIO()
    old = os.getcwd()
    try:
        os.chdir(cwd)
        with contextlib.redirect_stdout(out):
            exec(python_program(block.text), namespace)
    except Exception as exc:  # noqa: BLE001 - reported with the block's location
        checker.problems.append(f"{block.where}: python block raised {type(exc).__name__}: {exc}")
    finally:
        os.chdir(old)
    if block.expected_output:
        miss = unmatched(block.expected_output, out.getvalue())
        if miss is not None:
            checker.problems.append(f"{block.where}: expected output line not printed: {miss!r}\n"
                                    f"--- printed:\n{out.getvalue()}")
    return checker.problems


def run_file(path: Path, workdir: Path, env: dict | None = None) -> list[str]:
    shutil.copytree(ROOT / "fixtures", workdir / "fixtures")
    namespace: dict = {"__name__": "__docs__"}
    problems = []
    for block in runnable(parse_blocks(path)):
        if block.skip:
            continue
        if block.lang == "bash":
            problems += run_bash(block, workdir, env)
        else:
            problems += run_python(block, workdir, namespace)
    return problems


# ---------------------------------------------------------------------------- tests
@pytest.fixture(scope="module")
def forking_env(tmp_path_factory):
    """doc_env() with a ``trecqr`` first on PATH that forks each command from a process that
    imported the CLI once (trecqr_forks.py); test_a_changed_number_fails runs the real one."""
    server, env = trecqr_forks.start(tmp_path_factory.mktemp("trecqr-forks"), doc_env())
    yield env
    trecqr_forks.stop(server)


@pytest.mark.parametrize("path", doc_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_examples_print_what_they_show(path, tmp_path, monkeypatch, forking_env):
    monkeypatch.setenv("TRECQR_DATA", str(DATA))
    problems = run_file(path, tmp_path, forking_env)
    assert not problems, "\n\n".join(problems)


def test_skipped_blocks_are_the_listed_ones():
    skipped = [(str(b.path.relative_to(ROOT)), b.skip)
               for p in doc_files() for b in runnable(parse_blocks(p)) if b.skip]
    print(f"{len(skipped)} documentation blocks skipped:")
    for where, why in skipped:
        print(f"  {where}: {why}")
    assert skipped == SKIPPED
    assert all(why for _, why in skipped)


def test_every_runnable_block_checks_something():
    """A block that runs but shows no output is allowed, yet the docs as a whole must pin numbers:
    at least one expected line per file that has runnable blocks."""
    for path in doc_files():
        blocks = [b for b in runnable(parse_blocks(path)) if not b.skip]
        if not blocks:
            continue
        shown = sum(len(bash_steps(b.text)[1]) + bool(b.expected_output)
                    + (b.lang == "python" and "  # " in b.text) for b in blocks)
        assert shown, f"{path.name}: no block shows any output to check"


SETUP = ('python3 -m pip install -e . && trecqr eval -m official -m ndcg_cut.3 '
         'fixtures/cast2021/qrels.txt fixtures/cast2021/manual_bm25.run\n'
         'python3 -m pip install "torch==2.13.0" -e ".[test]" && python3 -m pytest')


def test_readme_is_short_and_starts_with_the_setup_commands():
    readme = ROOT / "README.md"
    assert readme.stat().st_size <= 8192
    first = parse_blocks(readme)[0]
    assert first.lang == "bash" and first.text == SETUP
    before = readme.read_text(encoding="utf-8").splitlines()[:first.line - 1]
    assert [line for line in before if line.strip()][0] == "# trecqr"  # only the title before
    assert all(line.startswith(("# trecqr", "<!--")) for line in before if line.strip())


def test_cli_reference_is_current():
    """docs/cli.md is generated from the commands (python3 docs/make_cli.py > docs/cli.md)."""
    # in a fresh process, as a user runs it: click caches each command's help option on first
    # use, so commands invoked earlier in this process could change what the help shows
    made = subprocess.run([sys.executable, str(ROOT / "docs" / "make_cli.py")], capture_output=True,
                          text=True, cwd=ROOT, timeout=120, env=dict(os.environ, COLUMNS="200"))
    assert made.returncode == 0, made.stderr
    current = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert current == made.stdout, ("docs/cli.md is out of date: run "
                                    "python3 docs/make_cli.py > docs/cli.md")


# ---------------------------------------------------------------------------- the matcher itself
def test_matcher_rules():
    assert line_matches("map all 0.1785", "map                   \tall\t0.1785")
    assert not line_matches("map all 0.1785", "map all 0.1786")
    assert not line_matches("map all 0.1785", "map all 0.17850")  # exact text in shell output
    assert line_matches("collapse: 23900 passages ... dropped",
                        "collapse: 23900 passages -> x dropped")
    assert unmatched(["a 1", "...", "c 3"], "a 1\nb 2\nc 3\n") is None
    assert unmatched(["c 3", "a 1"], "a 1\nb 2\nc 3\n") == "a 1"  # order counts
    # python values: decimals shown are compared at their places, quotes are one
    assert line_matches("{'raw': 0.4713, ...}", repr({"raw": 0.47128, "x": 1}), numbers=True)
    assert not line_matches("{'raw': 0.4713}", repr({"raw": 0.4716}), numbers=True)
    assert line_matches('{"raw": 0.47...}', repr({"raw": 0.4716}), numbers=True)


def test_a_changed_number_fails(tmp_path):
    doc = tmp_path / "doc.md"
    (tmp_path / "fixtures").mkdir()
    good = ("```bash\ntrecqr eval -m map fixtures/cast2021/qrels.txt "
            "fixtures/cast2021/manual_bm25.run\n"
            "#   map all {}\n```\n")
    real = ROOT / "fixtures"
    for value, ok in (("0.2047", True), ("0.2048", False)):
        doc.write_text(good.format(value))
        blocks = parse_blocks(doc)
        work = tmp_path / f"w{value}"
        shutil.copytree(real, work / "fixtures")
        assert (run_bash(blocks[0], work) == []) is ok
