"""Sentence log-probabilities (synrob.perturb.lm.scoring) checked by hand on tiny models
(``tiny_lms`` in conftest.py: a word-level GPT-2 and BERT, one token per word)."""

from __future__ import annotations

import pytest
from synrob.perturb.errors import ResourceError
from synrob.perturb.lm.loaded import load_lm
from synrob.perturb.lm.scoring import (
    causal_logprobs,
    length_batches,
    masked_pll,
    sentence_logprobs,
)

TEXTS = ["the cat sat", "a dog ran on the mat .", "cat", "the the the the dog sat on a mat"]


def test_length_batches_budget_and_rows():
    assert length_batches([3, 1, 2], 100) == [[1, 2, 0]]
    assert length_batches([3, 1, 2], 4) == [[1, 2], [0]]  # 2 rows x 2 <= 4, 2 x 3 > 4
    assert length_batches([5, 5, 5], 100, max_rows=2) == [[0, 1], [2]]
    assert length_batches([9], 4) == [[0]]  # a longer item is a batch of its own


def test_causal_total_equals_hand_computation(tiny_lms):
    import torch

    lm = load_lm(str(tiny_lms["causal"]), device="cpu")
    assert lm.kind == "causal"
    logprob, tokens = causal_logprobs(lm, TEXTS)
    for text, got, n in zip(TEXTS, logprob, tokens, strict=True):
        ids = [lm.tokenizer.bos_token_id, *lm.tokenizer(text, add_special_tokens=False)["input_ids"]]
        assert n == len(text.split()) == len(ids) - 1
        with torch.no_grad():
            logits = lm.model(input_ids=torch.tensor([ids])).logits[0]
        lp = torch.log_softmax(logits.double(), dim=-1)
        want = sum(float(lp[t, ids[t + 1]]) for t in range(len(ids) - 1))
        assert got == pytest.approx(want, abs=1e-4)


def test_pll_equals_hand_loop_for_three_tokens(tiny_lms):
    import torch

    lm = load_lm(str(tiny_lms["masked"]), device="cpu")
    assert lm.kind == "masked"
    tok = lm.tokenizer
    ids = tok("the cat sat")["input_ids"]
    assert ids[0] == tok.cls_token_id and ids[-1] == tok.sep_token_id and len(ids) == 5
    want = 0.0
    for p in (1, 2, 3):  # mask each word in turn; [CLS] and [SEP] are context only
        masked = list(ids)
        masked[p] = tok.mask_token_id
        with torch.no_grad():
            logits = lm.model(input_ids=torch.tensor([masked])).logits[0, p]
        want += float(torch.log_softmax(logits.double(), dim=-1)[ids[p]])
    logprob, tokens = masked_pll(lm, ["the cat sat"])
    assert tokens == [3]
    assert logprob[0] == pytest.approx(want, abs=1e-4)


@pytest.mark.parametrize("kind", ["causal", "masked"])
def test_batching_does_not_change_scores(tiny_lms, kind):
    lm = load_lm(str(tiny_lms[kind]), device="cpu")
    big, n_big = sentence_logprobs(lm, TEXTS, max_tokens=10_000)
    one, n_one = sentence_logprobs(lm, TEXTS, max_tokens=10_000, max_rows=1)
    small, _ = sentence_logprobs(lm, TEXTS, max_tokens=12)
    assert n_big == n_one
    assert big == pytest.approx(one, abs=1e-4) and big == pytest.approx(small, abs=1e-4)
    assert all(v < 0 for v in big)


@pytest.mark.parametrize("kind", ["causal", "masked"])
def test_empty_text_scores_zero(tiny_lms, kind):
    lm = load_lm(str(tiny_lms[kind]), device="cpu")
    logprob, tokens = sentence_logprobs(lm, ["", "the cat"])
    assert logprob[0] == 0.0 and tokens == [0, 2]


def test_masked_text_longer_than_the_model_is_one_error(tiny_lms):
    lm = load_lm(str(tiny_lms["masked"]), device="cpu")
    with pytest.raises(ResourceError, match="more than the model's 64 positions"):
        masked_pll(lm, ["the " * 80])


def test_causal_text_longer_than_the_model_is_one_error(tiny_lms):
    lm = load_lm(str(tiny_lms["causal"]), device="cpu")
    with pytest.raises(ResourceError, match="text 2 has 81 tokens, more than the model's 64"):
        sentence_logprobs(lm, ["the cat", "the " * 80])
