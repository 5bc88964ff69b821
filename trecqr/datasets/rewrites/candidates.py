"""Several candidate rewrites per turn: read as candidates 1..n, counted, and the policies that
say what to do with them.

Candidates come from a rewrite field holding a list (LLM4CS writes ``predicted_rewrite`` lists
of 5 sampled rewrites, the first the most probable), or from several rewrite fields named in
order (InfoCQR's rewrite-then-edit file: ``GPT_rewrite`` then ``Editor_rewrite``). Candidate i
of every turn makes one topics set. A turn keeps its usable candidates: when its candidate i is
absent, null, empty or unreadable, set i gives it the turn's first usable candidate (counted;
the combined policies leave such stand-ins out), and only a turn without any usable candidate
is handled by the missing-rewrite policy (LLM4CS' sampled files have the odd empty sample).

:class:`CandidateStats` says what a paper needs to know of them: how many turns have how many
candidates, and how many candidates are identical (compared as written, after stripping white
space), since 5 sampled rewrites are often one rewrite 5 times, and what the candidates were written
as (strings, empty strings, nulls, chat-completion objects...).

Policies (``--candidates``), parsed by :func:`parse_policy`:

``first``          candidate 1 alone (LLM4CS' MaxProb; what a single-rewrite reader takes),
``each``           every candidate on its own (one run or topics file each),
``fuse[:METHOD]``  one run per candidate, fused with :func:`trecqr.fuse` (RRF by default),
``mean``, ``sc``   LLM4CS' dense aggregations: the mean of the candidates' embeddings, and the
                   candidate nearest that mean (self-consistency),
``oracle``         per turn the best candidate by the first measure, chosen with the gold
                   labels: an upper bound, never a system.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from trecqr.errors import UsageError
from trecqr.fusion.methods import method as fusion_method
from trecqr.datasets.rewrites.files import KIND_NAMES, parse_rewrites
from trecqr.datasets.rewrites.topics import candidate_rewrites, check_policy
from trecqr.datasets.records import json_records
from trecqr.datasets.topics import read_text_file

POLICIES = ("first", "each", "fuse", "mean", "sc", "oracle")
RESPONSE_FIELDS = ("predicted_response", "response", "generated_response")  # LLM4CS' RTR/RAR
SEARCH_POLICIES = ("fuse", "mean", "sc", "oracle")  # need an index (and oracle the qrels)


@dataclass(frozen=True)
class Policy:
    """A parsed ``--candidates`` value: its name, and the fusion method of ``fuse``."""

    name: str
    method: str | None = None

    @property
    def label(self) -> str:
        """How rows and files are named: first, each, fuse-rrf, mean, sc, oracle."""
        return f"fuse-{self.method}" if self.name == "fuse" else self.name


def parse_policy(spec: str) -> Policy:
    """``first``, ``each``, ``fuse``, ``fuse:METHOD`` (any trecqr.fuse method or ranx name),
    ``mean``, ``sc`` or ``oracle``; anything else is a UsageError naming the choices."""
    name, sep, arg = str(spec).partition(":")
    name = name.strip().lower()
    if name not in POLICIES:
        raise UsageError(f"unknown candidates policy {spec!r}: use first, each, fuse[:METHOD], "
                         "mean, sc or oracle")
    if name != "fuse":
        if sep:
            raise UsageError(f"candidates policy {name} takes no argument (got {spec!r})")
        return Policy(name)
    if sep and not arg.strip():
        raise UsageError(f"candidates policy {spec!r}: name the fusion method after 'fuse:'")
    try:
        m = fusion_method(arg.strip() or "rrf")
    except ValueError as exc:
        raise UsageError(f"--candidates {spec}: {exc}") from None
    needs = [q for q in m.params if q not in m.defaults] + list(m.trained)
    if needs:
        raise UsageError(f"--candidates {spec}: {m.name} needs {', '.join(needs)}; fuse the "
                         "kept runs (--runs-dir) with trecqr fuse instead")
    return Policy("fuse", m.name)


@dataclass
class CandidateStats:
    """How many candidates the turns have and how many of them are distinct."""

    source: str
    fields: str | None
    per_turn: Counter    # number of (non-empty) candidates -> turns
    distinct: Counter    # distinct candidates within the turn -> turns
    n: int               # the most candidates any turn has
    kinds: Counter = field(default_factory=Counter)  # what the candidates were written as
    stand_ins: int = 0   # unusable candidates of turns that have usable ones

    def kinds_text(self) -> str:
        """"2394 strings, 1 empty string": what the candidates were written as."""
        order = {k: i for i, k in enumerate(KIND_NAMES)}
        parts = [f"{v} {k}{'s' if v != 1 and k != 'absent' else ''}"
                 for k, v in sorted(self.kinds.items(), key=lambda kv: order.get(kv[0], 99))]
        return ", ".join(parts)

    @property
    def turns(self) -> int:
        return sum(self.per_turn.values())

    def summary(self) -> str:
        if self.n <= 1:
            return f"{self.source}: one candidate per turn ({self.kinds_text()})"
        candidates = sum(k * v for k, v in self.per_turn.items())
        distinct = sum(k * v for k, v in self.distinct.items())
        where = f" ({self.fields.replace(',', ', ')})" if self.fields else ""
        if len(self.per_turn) == 1:
            head = f"{self.turns} turns x {self.n} candidates{where}"
        else:
            shape = ", ".join(f"{v} with {k}" for k, v in sorted(self.per_turn.items(),
                                                                 reverse=True))
            head = f"{self.turns} turns, up to {self.n} candidates{where}: {shape}"
        same = sum(v for k, v in self.distinct.items() if k == 1)
        spread = ", ".join(f"{v} with {k}" for k, v in sorted(self.distinct.items()))
        kept = (f" ({self.stand_ins} unusable in turns that have usable ones: those turns "
                "keep their others)") if self.stand_ins else ""
        return (f"{self.source}: {head}; {candidates} candidates, {distinct} distinct within "
                f"their turn ({distinct / max(self.turns, 1):.2f} per turn); {same} turns with "
                f"all candidates identical, {self.turns - same} with several distinct "
                f"(distinct per turn: {spread}); written as {self.kinds_text()}{kept}")

    def to_dict(self) -> dict:
        return {"turns": self.turns, "n": self.n, "fields": self.fields,
                "per_turn": {str(k): v for k, v in sorted(self.per_turn.items())},
                "distinct": {str(k): v for k, v in sorted(self.distinct.items())},
                "kinds": dict(self.kinds), "stand_ins": self.stand_ins,
                "summary": self.summary()}


@dataclass
class Candidates:
    """Candidate i (0-based) of every turn as ``sets[i]``, each with its own RewriteReport."""

    sets: list       # [Rewrites], one per candidate
    stats: CandidateStats
    responses: list | None = None  # [Rewrites]: response i of every turn (with_response)


def _stats(parsed) -> CandidateStats:
    per_turn, distinct = Counter(), Counter()
    n = max((len(c) for c in parsed.values), default=0)
    stand_ins = 0
    for cands in parsed.values:
        texts = [c for c in cands if isinstance(c, str) and c]
        per_turn[len(texts)] += 1
        distinct[len(set(texts))] += 1
        if texts:
            stand_ins += n - len(texts)
    return CandidateStats(parsed.name, parsed.rewrite_field, per_turn, distinct, n,
                          Counter(parsed.kinds), stand_ins)


def read_candidates(path, *, format: str | None = None, id_field=None, rewrite_field=None,
                    missing: str = "raw", raw=None, qid_style: str | None = None,
                    human=None, responses: bool = False, response_field=None,
                    options: dict | None = None) -> Candidates:
    """Every candidate of a rewrites file (see :func:`trecqr.datasets.rewrites.topics.read_rewrites`
    for the arguments; rewrite_field: one field, a list field, or several fields). responses:
    also read the generated responses (response_field, default the first of RESPONSE_FIELDS
    in the file), response i beside candidate i; a missing response is empty. options: see
    :func:`trecqr.datasets.rewrites.topics.parse_rewrites`."""
    check_policy(missing)
    parsed = parse_rewrites(path, format=format, id_field=id_field, rewrite_field=rewrite_field,
                            options=options)
    stats = _stats(parsed)
    sets = [candidate_rewrites(parsed, i, missing=missing, raw=raw, qid_style=qid_style,
                               human=human) for i in range(max(stats.n, 1))]
    if not responses:
        return Candidates(sets, stats)
    said = parse_rewrites(path, format=format, id_field=id_field, options=options,
                          rewrite_field=response_field or _response_field(parsed.name, path))
    replies = [candidate_rewrites(said, i, missing="empty", raw=raw, qid_style=qid_style)
               for i in range(len(sets))]
    return Candidates(sets, stats, replies)


def _response_field(name, path) -> str:
    """The file's response field: the first of RESPONSE_FIELDS its first record has."""
    _, text = read_text_file(path)
    for _, rec in json_records(name, text):
        for f in RESPONSE_FIELDS:
            if f in rec:
                return f
        break
    raise UsageError(f"{name}: no response field ({', '.join(RESPONSE_FIELDS)}) for "
                     "--with-response")


def candidate_paths(path: str, n: int) -> list:
    """Where ``--candidates each`` writes candidate 1..n of OUT: ``.c1``, ``.c2``... before
    OUT's extension (rewrites.tsv: rewrites.c1.tsv ...; no extension: OUT.c1 ...)."""
    head, dot, ext = path.rpartition(".")
    if not dot or "/" in ext or not head or head.endswith("/"):
        return [f"{path}.c{i}" for i in range(1, n + 1)]
    return [f"{head}.c{i}.{ext}" for i in range(1, n + 1)]


def convert_candidates(path, out_path, *, policy: str = "first", **read) -> tuple:
    """``convert rewrites``' library function: [(out path, Rewrites)] to write and the
    CandidateStats; ``first`` gives candidate 1 as OUT, ``each`` candidate i as OUT's
    candidate_paths. The other policies need retrieval (trecqr cqr)."""
    p = parse_policy(policy)
    if p.name == "oracle":
        raise UsageError("--candidates oracle chooses with the gold labels: it needs qrels and "
                         "runs (trecqr cqr --candidates oracle)")
    if p.name in SEARCH_POLICIES:
        raise UsageError(f"--candidates {policy} combines runs or embeddings: use trecqr cqr "
                         "(convert rewrites writes first or each)")
    cands = read_candidates(path, **read)
    for s in cands.sets if p.name == "each" else cands.sets[:1]:
        if s.report.records and not len(s.topics):  # refused: nothing is written
            raise UsageError(f"{s.report.summary()}: no turn left to write")
    if p.name == "first" or cands.stats.n <= 1:
        return [(out_path, cands.sets[0])], cands.stats
    return list(zip(candidate_paths(out_path, cands.stats.n), cands.sets)), cands.stats


def first_note(stats: CandidateStats) -> str:
    """What --candidates first says when there were several."""
    return (f"--candidates first: candidate 1 of {stats.n} taken for every turn "
            "(each, fuse, mean, sc or oracle use the others)")


def one_rewrite_note(path, **read) -> str | None:
    """What a command that searches one rewrite per turn (``search --rewrites``) says of a
    file with several candidates per turn, instead of taking the first silently; None when
    each turn has one."""
    stats = _stats(parse_rewrites(path, **read))
    if stats.n <= 1:
        return None
    return (f"{stats.summary()}; candidate 1 searched for every turn (trecqr cqr "
            "--candidates each, fuse, mean, sc or oracle uses the others)")
