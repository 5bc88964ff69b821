"""Rankings in each reference's order: trec_eval's, ir_measures', and the pytrec_eval dicts'
C pass; what the measure kernels read."""
