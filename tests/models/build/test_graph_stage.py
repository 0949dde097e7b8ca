"""The graph stage's choice of parts (`models/build/graph_stage.py`): a part is kept
where it adds GAIN dev UAS and loses no LAS, both parts only where the pair beats
the better one, and a part set on or off is never tried."""
from __future__ import annotations

from models.build.graph_stage import AUTO_RANK, GAIN, Parts, select

BASE, GLOBAL, TENSOR = Parts(), Parts(global_features=True), Parts(tensor_rank=AUTO_RANK)
BOTH = Parts(AUTO_RANK, True)


def chooser(scores: dict):
    tried = []

    def train_one(parts):
        tried.append(parts)
        return scores[parts]
    return train_one, tried


def test_a_part_is_kept_only_where_it_adds_the_gain_and_costs_no_las():
    train_one, tried = chooser({BASE: (80.0, 70.0), GLOBAL: (80.0 + GAIN, 70.0),
                                TENSOR: (80.0 + GAIN - 0.01, 71.0)})
    kept, record = select(train_one, None, None)
    assert kept == GLOBAL and tried == [BASE, GLOBAL, TENSOR]        # no pair: one passed
    assert record == {"third order": [80.0, 70.0], "third order+global": [80.3, 70.0],
                      "third order+tensor 50": [80.29, 71.0]}
    train_one, _ = chooser({BASE: (80.0, 70.0), GLOBAL: (81.0, 69.9), TENSOR: (79.0, 70.0)})
    assert select(train_one, None, None)[0] == BASE                  # LAS lost: not kept


def test_both_parts_are_trained_together_only_where_each_passed():
    scores = {BASE: (80.0, 70.0), GLOBAL: (81.0, 70.5), TENSOR: (80.5, 70.2),
              BOTH: (81.2, 70.1)}
    train_one, tried = chooser(scores)
    assert select(train_one, None, None)[0] == BOTH and tried[-1] == BOTH
    scores[BOTH] = (80.9, 71.0)                                      # below the better one
    train_one, _ = chooser(scores)
    assert select(train_one, None, None)[0] == GLOBAL


def test_parts_set_by_flags_are_not_tried():
    train_one, tried = chooser({BASE: (80.0, 70.0)})
    assert select(train_one, 0, False) == (BASE, {"third order": [80.0, 70.0]})
    assert tried == [BASE]
    on = Parts(8, True)
    train_one, tried = chooser({on: (80.0, 70.0)})
    assert select(train_one, 8, True)[0] == on and tried == [on]
    train_one, tried = chooser({TENSOR: (80.0, 70.0), BOTH: (80.1, 70.0)})
    assert select(train_one, AUTO_RANK, None)[0] == TENSOR            # +0.1: not kept
    assert tried == [TENSOR, BOTH]
