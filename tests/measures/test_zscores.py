"""-Z: z-score files (trec_eval's get_zscores.c) and the conversion (convert_zscores.c).

Expected numbers were produced by trec_eval 10.0 and 9.0.8 binaries built from the reference
sources with full-precision output; they are exact.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from conftest import TE
from trecqr.api.evaluation import score_trec
from trecqr.errors import InputError
from trecqr.rankings.options import Options
from trecqr.engine.zscores import MISSING_ZSCORE_VALUE, read_zscores
from trecqr.measures._libm import c_atof

# 301 lists map twice (the binary search lands on the first) and no ndcg: ndcg sorts after
# every measure of 301, so trec_eval probes one past the end, finds 302's first entry (ndcg)
# and uses it. num_ret has stddev 0 with a mean the value is not. 999 guards the last topic.
ZFILE = """301 map 0.1 0.2
301 map 0.3 0.0
301 P_5 0.4 0.0
302 ndcg 0.5 0.25
302 num_ret 1000 0
303 P_5 0.2 0.1
303 ndcg 0x1p-1 0.5
999 zzz 0 1
"""

# trec_eval -q -Z ZFILE -m map -m P.5 -m ndcg -m num_ret qrels.test results.test (both versions)
EXPECTED = {
    "num_ret": ([-1000000.0] * 3, -3000000.0),
    "map": ([-0.33787327598126371, -1000000.0, -1000000.0], -666666.77929109195),
    "P_5": ([-1000000.0, -1000000.0, -2.0], -666667.33333333337),
    "ndcg": ([-1.3664276516045355, 0.64674751497914773, -0.22750185528592937],
             -0.31572733063710573),
}


@pytest.fixture
def zfile(tmp_path):
    path = tmp_path / "zscores"
    path.write_text(ZFILE)
    return path


@pytest.mark.parametrize("compat", ["9.0.8", "10.0"])
def test_conversion_matches_trec_eval(zfile, compat):
    ev = score_trec(TE / "qrels.test", TE / "results.test", ["map", "P.5", "ndcg", "num_ret"],
                    Options(compat=compat), zscores=read_zscores(zfile))
    assert ev.zscored
    got = {c.name: (c.values.tolist(), float(c.summary)) for c in ev.columns
           if c.name in EXPECTED}
    assert got == EXPECTED
    assert ("302", "map") in ev.missing_zscores and ("303", "num_ret") in ev.missing_zscores
    assert ("302", "ndcg") not in ev.missing_zscores


def test_topic_missing_from_file_gets_missing_value_everywhere(tmp_path):
    path = tmp_path / "z"
    path.write_text("301 map 0 1\n302 map 0 1\n")
    ev = score_trec(TE / "qrels.test", TE / "results.test", ["map", "num_q", "num_rel"],
                    zscores=read_zscores(path))
    assert ev.column("map").values[2] == MISSING_ZSCORE_VALUE
    raw = score_trec(TE / "qrels.test", TE / "results.test", ["map"]).column("map").values
    assert ev.column("map").values[:2].tolist() == raw[:2].tolist()  # (v - 0) / 1
    assert ev.column("num_rel").values.tolist() == [MISSING_ZSCORE_VALUE] * 3
    assert ev.column("num_q").summary == 3  # a count, not converted


def test_stddev_zero_rules(tmp_path):
    ev = score_trec(TE / "qrels.test", TE / "results.test", ["num_rel"])
    num_rel = ev.column("num_rel").values.tolist()
    path = tmp_path / "z"
    path.write_text(f"301 num_rel {num_rel[0]} 0\n302 num_rel {num_rel[1] + 1} 0\n"
                    f"303 num_rel {num_rel[2]} 2\n")
    z = score_trec(TE / "qrels.test", TE / "results.test", ["num_rel"],
                   zscores=read_zscores(path)).column("num_rel")
    assert z.values.tolist() == [0.0, MISSING_ZSCORE_VALUE, 0.0]
    assert z.summary == MISSING_ZSCORE_VALUE  # counts are summed, z-scores too


def test_summary_rows_under_Z(cli):
    """Counts print as %6.4f behind Z; num_q stays the count; gm_map is the geometric mean
    of MISSING values (exp(-1e6) = 0) because the file has no gm_map lines."""
    result = cli(["eval", "--quiet", "-m", "all_trec", "-Z", "zscores_file", "qrels.test",
                  "results.test"], cwd=TE)
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "runid                 \tall\tSTANDARD" in lines
    assert "Znum_q                 \tall\t3.0000" in lines
    assert "Znum_ret               \tall\t-6.3332" in lines
    assert "Zgm_map                \tall\t0.0000" in lines


@pytest.mark.parametrize("text,line", [
    ("301 map 0 1\n301 P_5 0 1 extra\n", 2),
    ("301 map 0 1\n\n301 P_5 0 1\n", 2),
    ("301 map 0\n", 1),
    ("301 map 0 1\n302 P_5 0 1\n   \n", 3),
])
def test_malformed_lines_are_located(tmp_path, text, line):
    path = tmp_path / "z"
    path.write_text(text)
    with pytest.raises(InputError) as err:
        read_zscores(path)
    assert err.value.line == line
    assert err.value.source == str(path)


def test_malformed_file_on_the_command_line(cli, tmp_path):
    path = tmp_path / "z"
    path.write_text("301 map 0 1\n302 map 0\n")
    result = cli(["eval", "-Z", str(path), TE / "qrels.test", TE / "results.test"])
    assert result.exit_code == 2
    assert f"{path}:2:" in result.stderr


def test_last_line_without_newline_and_crlf(tmp_path):
    path = tmp_path / "z"
    path.write_bytes(b"301 map 0.5 2\r\n  302\tmap 1 4")
    z = read_zscores(path)
    assert z.lookup("301", "map").mean == 0.5
    assert z.lookup("302", "map").stddev == 4.0
    assert z.lookup("303", "map") is None


@pytest.mark.parametrize("text,value", [
    ("0.25", 0.25), ("1e3x", 1000.0), ("abc", 0.0), ("0x1p-1", 0.5), ("-inf", -math.inf),
    (".5", 0.5), ("+7.", 7.0), ("0x.8", 0.5), ("", 0.0),
])
def test_c_atof(text, value):
    assert c_atof(text) == value


def test_c_atof_nan():
    assert np.isnan(c_atof("nan"))
