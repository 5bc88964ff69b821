"""TREC files in and out: runs, qrels (text, JSON dicts, DataFrames), written atomically."""

from .qrels import Qrels, qrels_from_dict, qrels_from_frame, read_qrels, write_qrels
from .run import Run, read_run, run_from_dict, run_from_frame, write_run

__all__ = ["Qrels", "Run", "read_qrels", "read_run", "qrels_from_dict", "qrels_from_frame",
           "run_from_dict", "run_from_frame", "write_qrels", "write_run"]
