"""The engine: the plan (measure names parsed once), ``execute``, streaming, per-topic
evaluation and z-scores."""
