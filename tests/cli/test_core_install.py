"""The core install (``pip install trecqr``, no extra) runs the core commands.

Each command runs in a child Python whose imports of the extras' packages fail, as they do
where those packages are not installed (a meta-path finder raises ModuleNotFoundError for
them before any finder looks on disk): eval, convert, collapse, diff, validate and the
scoring API must give the same output as with every package there, and a command that needs
an extra (plot, gen, index, compare) must say in one line which extra to install, exit 2.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import DATA, ROOT
from trecqr.runtime.extras import EXTRA_OF, missing_extra_line

FX = ROOT / "fixtures/cast2021"
QRELS, RUN, RUN2 = FX / "qrels.txt", FX / "manual_bm25.run", FX / "convdr.run"

# every extra's packages (pandas too: only Result.to_dataframe uses it; scipy: compare's tests)
BLOCKED = sorted(EXTRA_OF)

_BLOCKER = """
import importlib.abc, sys
BLOCKED = set(sys.argv[1].split(","))
class Missing(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, Missing())
"""
_CLI = _BLOCKER + """
sys.argv = ["trecqr"] + sys.argv[2:]
from trecqr.runtime.launch import entry
entry()
"""


def core(args, blocked=BLOCKED, cwd=None):
    """trecqr ARGS in a child process where the blocked packages cannot be imported."""
    env = dict(os.environ)
    env.pop("TRECQR_DEBUG", None)
    return subprocess.run([sys.executable, "-c", _CLI, ",".join(blocked), *map(str, args)],
                          capture_output=True, text=True, env=env, cwd=cwd, timeout=600)


def full(args, cwd=None):
    return core(args, blocked=["no-such-package"], cwd=cwd)


@pytest.mark.parametrize("args", [
    ["eval", "-m", "official", "-m", "ndcg_cut.3", QRELS, RUN],
    ["eval", "-q", "-m", "RR@3", "-m", "nDCG@3", "-m", "R@100", "-m", "ERR@10", QRELS, RUN, RUN2],
    ["eval", "-j", "2", "-m", "map", QRELS, RUN, RUN2],
])
def test_eval_with_the_core_alone(args):
    got, want = core(args), full(args)
    assert got.returncode == 0, got.stderr
    assert (got.stdout, got.stderr) == (want.stdout, want.stderr)
    assert "\tall\t" in got.stdout


def test_convert_collapse_diff_and_validate_with_the_core_alone(tmp_path):
    cases = [
        ["convert", "qrecc", "--qrels", DATA / "qrecc/qrels_test.json", "--qrels-out", "q.qrels"],
        ["convert", "cast", "--topics", DATA / "cast2021/2021_manual_evaluation_topics_v1.0.json",
         "--query-field", "manual", "--topics-out", "t.tsv"],
        ["collapse", RUN, "-o", "-"],
        ["diff", "--qrels", QRELS, "--run", RUN, "--eval-args", "-q -m map",
         tmp_path / "te.txt"],
        ["validate", "ikat", DATA / "ikat/2024_sample_run.json"],
    ]
    (tmp_path / "te.txt").write_text(full(["eval", "-q", "-m", "map", QRELS, RUN]).stdout)
    stderr = []
    for i, args in enumerate(cases):
        a, b = tmp_path / f"core{i}", tmp_path / f"full{i}"
        a.mkdir(), b.mkdir()
        got, want = core(args, cwd=a), full(args, cwd=b)
        assert got.returncode == 0, (args, got.stderr)
        assert (got.stdout, got.stderr) == (want.stdout, want.stderr), args
        assert sorted(os.listdir(a)) == sorted(os.listdir(b))
        for name in os.listdir(a):
            assert (a / name).read_bytes() == (b / name).read_bytes(), (args, name)
        stderr.append(got.stderr)
    assert "10507 (turn, passage) pairs written" in stderr[0]  # the core's convert qrecc


def test_the_scoring_api_with_the_core_alone():
    code = _BLOCKER + f"""
import trecqr
res = trecqr.evaluate({str(QRELS)!r}, {str(RUN)!r}, ["map", "RR@3"])
print({{k: round(v, 4) for k, v in res.aggregate().items()}})
import trecqr as pytrec_eval
ev = pytrec_eval.RelevanceEvaluator({{"q1": {{"d1": 1, "d2": 0}}}}, {{"recip_rank"}})
print(ev.evaluate({{"q1": {{"d1": 0.9, "d2": 1.2}}}}))
try:
    res.to_dataframe()
except ModuleNotFoundError as exc:
    print("no", exc.name)
"""
    out = subprocess.run([sys.executable, "-c", code, ",".join(BLOCKED)], capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["{'map': 0.2047, 'RR@3': 0.6422}",
                                       "{'q1': {'recip_rank': 0.5}}", "no pandas"]


@pytest.mark.parametrize("args,extra", [
    (["plot", "dist", QRELS, RUN, "-m", "map", "-o", "x.png"], "plots"),
    (["gen", DATA / "qrecc/dev-sampled2k_chatgpt_ICL.jsonl",
      DATA / "qrecc/dev-sampled2k_chatgpt_ICL.jsonl", "--pred-field", "GPT_rewrite",
      "--metric", "bleu"], "generative"),
    (["compare", QRELS, RUN, RUN2, "-m", "map"], "stats"),
    (["index", ROOT / "fixtures/cast2021-demo/collection.jsonl", "-o", "idx"], "retrieval"),
])
def test_a_command_without_its_extra_names_it(tmp_path, args, extra):
    res = core(args, cwd=tmp_path)
    assert res.returncode == 2, res.stderr
    assert res.stderr == (f"trecqr {args[0]} needs the {extra} extra: "
                          f"pip install 'trecqr[{extra}]'\n")
    assert os.listdir(tmp_path) == []


def test_the_hint_names_the_extra_of_the_missing_module_only():
    exc = ModuleNotFoundError("No module named 'matplotlib.figure'", name="matplotlib.figure")
    assert missing_extra_line(exc, ["trecqr", "--verbose", "plot", "dist"]) == \
        "trecqr plot needs the plots extra: pip install 'trecqr[plots]'"
    assert missing_extra_line(ModuleNotFoundError("x", name="numpy"), ["trecqr", "eval"]) is None
    assert missing_extra_line(ImportError("cannot import name"), ["trecqr", "eval"]) is None


def test_every_extra_of_the_map_is_in_pyproject():
    import tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    assert set(EXTRA_OF.values()) <= set(extras)
    core_deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    names = {d.split(">")[0].split("=")[0].split("<")[0].strip().lower() for d in core_deps}
    assert names == {"numpy", "pyarrow", "click", "pytrec-eval-terrier", "ir-measures",
                     "ir-datasets"}
    assert set(extras["all"][0].split("[")[1].rstrip("]").split(",")) == \
        set(extras) - {"all", "test"}
