"""The neural analyser: one BiLSTM over characters and words that tags, scores arcs
and labels them (`network.py` infers with numpy, `train.py` trains with JAX)."""
