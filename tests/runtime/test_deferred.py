"""pyarrow's deferred handles (trecqr/runtime/deferred.py): a call that never reaches Arrow
does not load it, the importer's ``sys.modules`` is left as it is, and once loaded a handle is
the module. Each check runs in a fresh interpreter and reads ``sys.modules``: nothing is timed.
"""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import ROOT

_DICTS = """
import json, sys
import trecqr
ev = trecqr.RelevanceEvaluator({"q": {"d1": 1, "d2": 0}}, {"map", "ndcg_cut.3", "P", "bpref"})
per_topic = ev.evaluate({"q": {"d1": 0.5, "d2": 0.9}})
means = trecqr.evaluate({"q": {"d1": 1}}, {"q": {"d1": 0.5}}, ["map", "ndcg_cut.3"]).aggregate()
print(json.dumps([per_topic["q"]["map"], means,
                  sorted(m for m in sys.modules if m.split(".")[0] == "pyarrow")]))
"""

_HANDLE = """
import json, sys
from trecqr.runtime.deferred import pa, pc
before = ["pyarrow" in sys.modules, "pyarrow.compute" in sys.modules, repr(pc)]
import pyarrow.compute
mine_untouched = sys.modules["pyarrow.compute"] is pyarrow.compute
unique = pc.unique(pa.array(["b", "a", "b"])).to_pylist()
copied = "unique" in vars(pc) and pc.unique is pyarrow.compute.unique
import pyarrow.parquet  # after the handle's copy: still found, through the module
print(json.dumps([before, mine_untouched, unique, copied, pa.parquet is pyarrow.parquet,
                  repr(pc), hasattr(pa, "no_such_name")]))
"""


def _run(code: str):
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, check=True).stdout
    return json.loads(out)


def test_the_drop_in_and_evaluate_on_dicts_load_no_arrow():
    """pytrec_eval's input goes to the C pass as it is: no Arrow (about 60 ms of a one-call
    script's start-up with pyarrow.compute)."""
    per_topic_map, means, loaded = _run(_DICTS)
    assert per_topic_map == 0.5 and means == {"map": 1.0, "ndcg_cut_3": 1.0}
    assert loaded == []


def test_a_handle_loads_its_module_on_first_use_and_is_it_after():
    before, untouched, unique, copied, submodule, after, missing = _run(_HANDLE)
    assert before == [False, False, "<deferred module 'pyarrow.compute' (not loaded yet)>"]
    assert untouched and unique == ["b", "a"] and copied and submodule and not missing
    assert after == "<deferred module 'pyarrow.compute' (loaded)>"
