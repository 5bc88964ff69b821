"""CAsT 2019's manual rewrites: they are not in the topic file but in a separate TSV.

The 2019 evaluation topics (``evaluation_topics_v1.0.json``) carry only ``number`` and
``raw_utterance``; the organisers published the manually resolved utterances beside them as
``evaluation_topics_annotated_resolved_v1.0.tsv`` (``qid<TAB>rewrite``).
:func:`add_resolved` reads that file into the turns' ``manual`` query field, so
``trecqr convert cast --resolved FILE --query-field manual`` gives the manual rewrites as 2020
and 2021 files give theirs.
"""

from __future__ import annotations

import os

from trecqr.errors import InputError
from trecqr.datasets.topics import read_topics


def add_resolved(topics, path) -> int:
    """Set every turn's ``manual`` query to its resolved utterance in PATH (TSV); the number of
    turns set. Every turn must have one, and every line must be a turn of the topics."""
    name = os.fspath(path)
    resolved = read_topics(name, "tsv")
    by_qid = dict(zip(resolved.qids, resolved.queries))
    known = {t.qid for t in topics.turns}
    extra = [q for q in resolved.qids if q not in known]
    if extra:
        raise InputError(name, None, f"{len(extra)} resolved utterances are not turns of "
                                     f"{topics.source} (e.g. {extra[0]!r})")
    absent = [t.qid for t in topics.turns if t.qid not in by_qid]
    if absent:
        raise InputError(name, None, f"{len(absent)} turns of {topics.source} have no resolved "
                                     f"utterance (e.g. {absent[0]!r})")
    for t in topics.turns:
        t.queries["manual"] = by_qid[t.qid]
    topics.fields.add("manual")
    return len(topics.turns)
