"""QReCC: qrels, the SCAI-QReCC-21 ground truth, conversations to topics."""
