"""Datasets: the conversational datasets' published files read into TREC topics, runs and qrels.

Each reader turns a dataset's own shape into what the rest of trecqr reads, with canonical
``{conv}_{turn}`` ids (:mod:`.turn_ids`), so that ``trecqr eval`` scores them as any TREC files:

* :mod:`.topics`: topic files (TREC ``<top>``, TSV, JSONL), read and written; :mod:`.records`:
  the JSONL record reader every JSONL input goes through; :mod:`.fields`: the fields options
  name, checked before any work;
* :mod:`.topiocqa`, :mod:`.qrecc`, :mod:`.cast`, :mod:`.ikat`: each dataset's topics, qrels and
  runs; :mod:`.irds`: any ir_datasets dataset's queries and qrels; :mod:`.dataset_topics`: a
  dataset's query field as topics in one call; :mod:`.collapse`: passage runs to document runs;
* :mod:`.rewrites`: model rewrites as topics, one or several candidates per turn;
* :mod:`.sessions`: session query logs to next-query instances and their TREC files.

Floor 7 (``tests/test_layers.py``): below the protocols and workflows that read these files.
"""
