"""trec_eval's measure table and nicknames (``measures.c``), for 9.0.8 and 10.0.

Output rows follow this order whatever the order of ``-m`` options.
"""

from __future__ import annotations

_COMMON_HEAD = [
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
    "recip_rank", "iprec_at_recall", "P", "relstring", "recall", "infAP", "gm_bpref",
    "Rprec_mult", "utility", "11pt_avg", "binG", "G",
]
_COMMON_TAIL = [
    "ndcg", "ndcg_rel", "Rndcg", "ndcg_cut", "map_cut", "relative_P", "success", "set_P",
    "set_relative_P", "set_recall", "set_map", "set_F", "num_nonrel_judged_ret",
    "prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret", "prefs_simp",
    "prefs_pair", "prefs_avgjg", "prefs_avgjg_Rnonrel", "prefs_simp_ret", "prefs_pair_ret",
    "prefs_avgjg_ret", "prefs_avgjg_Rnonrel_ret", "prefs_simp_imp", "prefs_pair_imp",
    "prefs_avgjg_imp", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg", "yaap",
]

TABLE = {
    "9.0.8": _COMMON_HEAD + _COMMON_TAIL,
    "10.0": _COMMON_HEAD + ["dcg", "ideal_dcg"] + _COMMON_TAIL + ["rbp", "rbp_resid", "unj"],
}

_OFFICIAL = ["runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec",
             "bpref", "recip_rank", "iprec_at_recall", "P"]
_SET = ["runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P",
        "set_recall", "set_relative_P", "set_map", "set_F"]
_ALL_PREFS = ["runid", "num_q", "prefs_num_prefs_poss", "prefs_num_prefs_ful",
              "prefs_num_prefs_ful_ret", "prefs_simp", "prefs_pair", "prefs_avgjg",
              "prefs_avgjg_Rnonrel", "prefs_simp_ret", "prefs_pair_ret", "prefs_avgjg_ret",
              "prefs_avgjg_Rnonrel_ret", "prefs_simp_imp", "prefs_pair_imp", "prefs_avgjg_imp"]
_PREFS = ["runid", "num_q", "prefs_num_prefs_poss", "prefs_num_prefs_ful",
          "prefs_num_prefs_ful_ret", "prefs_simp", "prefs_pair", "prefs_avgjg"]
_QRELS_JG = ["runid", "num_q", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg"]
_ALL_TREC_908 = [
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
    "recip_rank", "iprec_at_recall", "P", "relstring", "recall", "infAP", "gm_bpref",
    "utility", "11pt_avg", "ndcg", "relative_P", "Rprec_mult", "success", "map_cut",
    "ndcg_cut", "ndcg_rel", "Rndcg", "binG", "G", "set_P", "set_recall", "set_relative_P",
    "set_map", "set_F", "num_nonrel_judged_ret",
]
_ALL_TREC_10 = _ALL_TREC_908[:14] + ["unj", "rbp", "rbp_resid"] + _ALL_TREC_908[14:]

NICKNAMES = {
    "9.0.8": {"official": _OFFICIAL, "set": _SET, "all_trec": _ALL_TREC_908,
              "all_prefs": _ALL_PREFS, "prefs": _PREFS, "qrels_jg": _QRELS_JG},
    "10.0": {"official": _OFFICIAL, "set": _SET, "all_trec": _ALL_TREC_10,
             "all_prefs": _ALL_PREFS, "prefs": _PREFS, "qrels_jg": _QRELS_JG},
}


# Which module of this package registers each measure, so that a command imports only the
# families it asks for (tests/measures/test_measure_table.py checks this against the registry).
FAMILY = {
    "average_precision": ["gm_map", "map", "map_cut"],
    "bpref": ["bpref", "gm_bpref"],
    "counts": ["num_nonrel_judged_ret", "num_q", "num_rel", "num_rel_ret", "num_ret", "runid"],
    "infap": ["infAP"],
    "interpolated": ["11pt_avg", "iprec_at_recall"],
    "judgment_groups": ["P_avgjg", "Rprec_mult_avgjg", "map_avgjg"],
    "ndcg": ["Rndcg", "dcg", "ideal_dcg", "ndcg", "ndcg_cut", "ndcg_rel"],
    "normalized_gain": ["G", "binG"],
    "precision": ["P", "recip_rank"],
    "prefs": ["prefs_avgjg", "prefs_avgjg_Rnonrel", "prefs_avgjg_Rnonrel_ret", "prefs_avgjg_imp",
              "prefs_avgjg_ret", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret",
              "prefs_num_prefs_poss", "prefs_pair", "prefs_pair_imp", "prefs_pair_ret",
              "prefs_simp", "prefs_simp_imp", "prefs_simp_ret"],
    "rbp": ["rbp", "rbp_resid"],
    "recall": ["recall", "relative_P"],
    "relstring": ["relstring"],
    "rprec": ["Rprec", "Rprec_mult"],
    "set_measures": ["set_F", "set_P", "set_map", "set_recall", "set_relative_P"],
    "success": ["success"],
    "unjudged": ["unj"],
    "utility": ["utility"],
    "yaap": ["yaap"],
}
MODULE_OF = {name: module for module, names in FAMILY.items() for name in names}
