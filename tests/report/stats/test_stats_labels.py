"""trecqr.report.stats.labels against scikit-learn and the krippendorff package, on the LLMJudge
benchmark: the human test qrels against the six LLM label sets over the same 4,423
(query, passage) pairs (grades 0-3)."""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score
from sklearn.metrics import confusion_matrix as sklearn_confusion

from conftest import data_path
from trecqr.errors import InputError, UsageError
from trecqr.formats import read_qrels
from trecqr.formats.qrels import Qrels
from trecqr.report.stats import labels

LLM_SETS = ["willia-umbrela1", "h2oloo-zeroshot1", "Olz-gpt4o", "RMITIR-llama70B",
            "NISTRetrieval-instruct0", "TREMA-all"]


def _qrels(name: str) -> Qrels:
    return read_qrels(data_path("llmjudge", f"{name}.qrels"))


def _subset(q: Qrels, keep: np.ndarray) -> Qrels:
    rows = np.flatnonzero(keep)
    return Qrels(q.qid.take(rows), q.docno.take(rows), q.grade[rows], q.source)


@pytest.fixture(scope="module")
def human():
    return _qrels("human-test")


@pytest.mark.parametrize("llm", LLM_SETS)
def test_kappa_alpha_and_confusion_are_the_references(human, llm):
    """Graded and binarized (threshold 1 and 2, as trec_eval's -l): Cohen's kappa plain,
    linear and quadratic equal scikit-learn's cohen_kappa_score, Krippendorff's alpha
    nominal, ordinal and interval equal the krippendorff package, to 1e-12; the confusion
    matrix is scikit-learn's."""
    shared = labels.shared_judgments(human, _qrels(llm))
    assert (len(shared), shared.only_a, shared.only_b) == (4423, 0, 0)
    a, b = shared.a, shared.b
    assert set(np.unique(a)) == {0, 1, 2, 3}
    for x, y in ((a, b), (labels.binarize(a, 1), labels.binarize(b, 1)),
                 (labels.binarize(a, 2), labels.binarize(b, 2))):
        for weights in (None, "linear", "quadratic"):
            assert abs(labels.cohen_kappa(x, y, weights) -
                       cohen_kappa_score(x, y, weights=weights)) < 1e-12
        for level in ("nominal", "ordinal", "interval"):
            ref = krippendorff.alpha(reliability_data=[x, y], level_of_measurement=level)
            assert abs(labels.krippendorff_alpha(x, y, level) - ref) < 1e-12
        got_labels, counts = labels.confusion_matrix(x, y)
        assert np.array_equal(counts, sklearn_confusion(x, y, labels=got_labels))
        assert counts.sum() == 4423


def test_the_label_sets_disagree_in_the_documented_way(human):
    """The data README's fact: about 53% of UMBRELA's and of h2oloo's labels equal the human
    label (the diagonal of the confusion matrix)."""
    for llm in ("willia-umbrela1", "h2oloo-zeroshot1"):
        _, counts = labels.confusion_matrix(*_pair(human, llm))
        assert 0.52 < np.trace(counts) / counts.sum() < 0.54


def _pair(human, llm):
    shared = labels.shared_judgments(human, _qrels(llm))
    return shared.a, shared.b


def test_agreement_is_over_the_shared_judgments_only(human):
    """Drop every third human judgment and every fifth LLM one: the measures are those of
    the pairs both still judge (found by hand here), and the pairs only one judges are
    counted."""
    llm = _qrels("Olz-gpt4o")
    n = len(human)
    a = _subset(human, np.arange(n) % 3 != 0)
    b = _subset(llm, np.arange(n) % 5 != 0)
    shared = labels.shared_judgments(a, b)

    def graded(q):
        return {(t, d): g for t, d, g in zip(q.qid.to_pylist(), q.docno.to_pylist(), q.grade)}

    in_a, in_b = graded(a), graded(b)
    keys = sorted(set(in_a) & set(in_b))
    assert len(keys) < min(len(a), len(b))
    assert len(shared) == len(keys)
    assert shared.only_a == len(a) - len(keys) and shared.only_b == len(b) - len(keys)
    assert list(zip(shared.qid.to_pylist(), shared.docno.to_pylist())) == keys
    ref_a = np.array([in_a[k] for k in keys])
    ref_b = np.array([in_b[k] for k in keys])
    assert np.array_equal(shared.a, ref_a) and np.array_equal(shared.b, ref_b)
    assert abs(labels.cohen_kappa(shared.a, shared.b, "quadratic") -
               cohen_kappa_score(ref_a, ref_b, weights="quadratic")) < 1e-12


def test_weights_count_positions_in_the_labels_given():
    """scikit-learn's rule: with labels=[0, 1, 2, 3] a grade no one used still counts as a
    step; without, the steps are between the labels used."""
    a = np.array([0, 0, 3, 3, 0, 3])
    b = np.array([0, 3, 3, 0, 0, 3])
    full = labels.cohen_kappa(a, b, "linear", labels=[0, 1, 2, 3])
    assert abs(full - cohen_kappa_score(a, b, weights="linear", labels=[0, 1, 2, 3])) < 1e-12
    assert abs(labels.cohen_kappa(a, b, "linear") -
               cohen_kappa_score(a, b, weights="linear")) < 1e-12


def test_a_judgment_given_twice_is_refused(human):
    rows = np.concatenate([np.arange(len(human)), [7]])
    twice = Qrels(human.qid.take(rows), human.docno.take(rows), human.grade[rows], "x.qrels")
    with pytest.raises(InputError, match=rf"x.qrels: row {len(human)}: topic 'q\w+' judges "
                                         r"document 'p\w+' 2 times \(first at row 7\); .* \(keep "
                                         r"one row\)$"):
        labels.shared_judgments(human, twice)


def test_a_judgment_given_twice_in_a_file_names_both_lines(tmp_path, human):
    """A qrels read from a file locates the repeated judgment: the second line, and the first."""
    path = tmp_path / "twice.qrels"
    path.write_text("q1 0 d1 1\nq1 0 d2 0\nq2 0 d1 0\nq1 0 d1 2\n")
    with pytest.raises(InputError, match=r"/twice.qrels:4: topic 'q1' judges document 'd1' 2 "
                                         r"times \(first at line 1\); "):
        labels.shared_judgments(human, read_qrels(str(path)))


def test_bad_arguments_are_refused(human):
    a = np.array([0, 1, 1])
    with pytest.raises(UsageError, match="weights"):
        labels.cohen_kappa(a, a, "cubic")
    with pytest.raises(UsageError, match="level"):
        labels.krippendorff_alpha(a, a, "ratio")
    with pytest.raises(UsageError, match="same length"):
        labels.cohen_kappa(a, a[:2])
    with pytest.raises(UsageError, match="no shared judgments"):
        labels.cohen_kappa(a[:0], a[:0])
