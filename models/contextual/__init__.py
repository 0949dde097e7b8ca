"""Contextual word representations from a pretrained multilingual encoder.

The encoder's weights come from an installed package (`source.py`), never from the
network; its file is read in numpy (`e5_file.py`), its subwords are aligned to the
treebank's words (`subwords.py`) and the first layers of the transformer run on the
CPU (`encoder.py`). The neural analyser reads each word's layer states, pooled over
its subwords (`features.py`), beside its character, word and affix inputs.
"""
