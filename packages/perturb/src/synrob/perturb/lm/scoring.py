"""Sentence log-probability under a language model: the one home of LM sentence scoring.

Two scores, one per kind of :class:`~synrob.perturb.lm.loaded.LoadedLM`:

* **causal** (:func:`causal_logprobs`): each text is tokenised without special tokens and
  prefixed with the model's BOS token (EOS when it has none, as the coCO perturber does), so
  every token of the text is predicted; the score is the sum of
  ``log P(token_t | BOS, token_1..token_{t-1})`` in nats.
* **masked** (:func:`masked_pll`): pseudo-log-likelihood (Salazar et al. 2020, "Masked Language
  Model Scoring"): the text is tokenised with the model's special tokens (``[CLS] ... [SEP]``),
  each non-special token is masked in turn and ``log P(token | all other tokens)`` is summed.

Both return, per text, the summed log-probability (nats) and the number of scored tokens.
Texts are sorted by length and cut into batches of at most ``max_tokens`` padded tokens (rows x
longest) and, when given, ``max_rows`` rows; padding is on the right with an attention mask.
torch is imported inside the functions: importing this module is free.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from ..errors import ResourceError
from .loaded import start_token_id

__all__ = ["causal_logprobs", "causal_sequence_logprobs", "masked_pll", "sentence_logprobs",
           "length_batches", "Around"]


def length_batches(lengths: Sequence[int], max_tokens: int, max_rows: int | None = None
                   ) -> list[list[int]]:
    """Indices sorted by length, cut so that rows x longest <= ``max_tokens`` (a single longer
    item is a batch of its own) and, when ``max_rows`` is given, rows <= ``max_rows``."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    batches: list[list[int]] = []
    part: list[int] = []
    for i in order:
        if part and ((len(part) + 1) * lengths[i] > max_tokens
                     or (max_rows is not None and len(part) >= max_rows)):
            batches.append(part)
            part = []
        part.append(i)
    if part:
        batches.append(part)
    return batches


def _pad(seqs: Sequence[Sequence[int]], pad: int, device: str) -> tuple[Any, Any]:
    """Right-padded ``input_ids`` and ``attention_mask``, both (rows, longest), on ``device``."""
    import torch

    longest = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), longest), pad, dtype=torch.long)
    mask = torch.zeros((len(seqs), longest), dtype=torch.long)
    for r, s in enumerate(seqs):
        ids[r, : len(s)] = torch.tensor(s, dtype=torch.long)
        mask[r, : len(s)] = 1
    return ids.to(device), mask.to(device)


def _per_pass(lm: Any, max_tokens: int) -> int:
    """``max_tokens``, capped by the LM's own limit where it has one
    (:meth:`~synrob.perturb.lm.loaded.LoadedLM.tokens_per_pass`: device-mapped models)."""
    cap = getattr(lm, "tokens_per_pass", None)
    return max_tokens if cap is None else int(cap(max_tokens))


def _pad_id(tokenizer: Any) -> int:
    return tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0


def causal_logprobs(lm: Any, texts: Sequence[str], *, max_tokens: int = 512,
                    max_rows: int | None = None) -> tuple[list[float], list[int]]:
    """Summed log-probability (nats) of each text given BOS, and its number of tokens.

    ``lm`` is a causal :class:`~synrob.perturb.lm.loaded.LoadedLM`. Raises :class:`ResourceError` when
    the tokenizer has neither a BOS nor an EOS token.
    """
    tok = lm.tokenizer
    start = start_token_id(tok)
    if start is None:
        raise ResourceError(f"model {lm.spec!r}: the tokenizer has neither BOS nor EOS token")
    ids_list = tok(list(texts), add_special_tokens=False)["input_ids"]
    seqs = [[start, *ids] for ids in ids_list]
    logprob = causal_sequence_logprobs(lm, seqs, max_tokens=max_tokens, max_rows=max_rows)
    return logprob, [len(s) - 1 for s in seqs]


#: ``around(rows, (batch, width))``: a context manager entered around one forward pass of
#: :func:`causal_sequence_logprobs`, ``rows`` the sequences of its rows in order.
Around = Callable[[list[int], tuple[int, int]], AbstractContextManager[Any]]


def causal_sequence_logprobs(lm: Any, seqs: Sequence[Sequence[int]], *, max_tokens: int = 512,
                             max_rows: int | None = None, around: Around | None = None
                             ) -> list[float]:
    """Summed log-probability (nats) of tokens ``1..`` of each token-id sequence, each given
    the tokens before it (token 0, the start token, is context only), under a causal LM.

    Sequences are batched by :func:`length_batches` and right-padded. ``around``, when given,
    is entered around each batch's forward pass (an intervention that depends on the rows:
    :data:`Around`). One :class:`ResourceError` line for a sequence
    longer than the model's positions.
    """
    import torch

    for i, ids in enumerate(seqs):
        _check_length(lm, i, len(ids))
    pad = _pad_id(lm.tokenizer)
    logprob = [0.0] * len(seqs)
    max_tokens = _per_pass(lm, max_tokens)
    for rows in length_batches([len(s) for s in seqs], max_tokens, max_rows):
        ids, mask = _pad([seqs[i] for i in rows], pad, lm.device)
        ctx = nullcontext() if around is None else around(rows, tuple(ids.shape))
        with torch.inference_mode(), ctx:
            logits = lm.model(input_ids=ids, attention_mask=mask).logits[:, :-1]
            target = ids[:, 1:]
            picked = logits.gather(-1, target.unsqueeze(-1)).squeeze(-1).float()
            # (len, vocab) slabs one row at a time stay in cache
            norm = torch.stack([torch.logsumexp(row.float(), dim=-1) for row in logits])
            totals = ((picked - norm) * mask[:, 1:]).sum(-1).tolist()
        for i, total in zip(rows, totals, strict=True):
            logprob[i] = float(total)
    return logprob


def _pll_jobs(lm: Any, texts: Sequence[str]) -> tuple[list[list[int]], list[tuple[int, int]]]:
    """Each text's ids with special tokens, and one (text, position) job per non-special token."""
    tok = lm.tokenizer
    enc = tok(list(texts), add_special_tokens=True, return_special_tokens_mask=True)
    seqs = [list(ids) for ids in enc["input_ids"]]
    jobs: list[tuple[int, int]] = []
    for i, (ids, special) in enumerate(zip(seqs, enc["special_tokens_mask"], strict=True)):
        _check_length(lm, i, len(ids))
        jobs.extend((i, p) for p, s in enumerate(special) if not s)
    return seqs, jobs


def _check_length(lm: Any, i: int, n_ids: int) -> None:
    """One :class:`ResourceError` line when text ``i`` (0-based) has more tokens than the model
    has positions (``max_position_embeddings``, GPT-2's ``n_positions``), instead of an index
    error deep inside the model."""
    limit = getattr(lm.model.config, "max_position_embeddings", None)
    if isinstance(limit, int) and n_ids > limit:
        raise ResourceError(f"model {lm.spec!r}: text {i + 1} has {n_ids} tokens, more "
                            f"than the model's {limit} positions")


def masked_pll(lm: Any, texts: Sequence[str], *, max_tokens: int = 512,
               max_rows: int | None = None) -> tuple[list[float], list[int]]:
    """Pseudo-log-likelihood (nats) of each text under a masked LM, and its number of tokens.

    One row per (text, token): the text's ids with that token replaced by the mask token; the
    row contributes ``log_softmax(logits at the token)[token]``. Special tokens are context only.
    """
    import torch

    tok = lm.tokenizer
    seqs, jobs = _pll_jobs(lm, texts)
    logprob = [0.0] * len(seqs)
    tokens = [0] * len(seqs)
    max_tokens = _per_pass(lm, max_tokens)
    for rows in length_batches([len(seqs[i]) for i, _ in jobs], max_tokens, max_rows):
        masked = []
        for r in rows:
            i, p = jobs[r]
            masked.append([*seqs[i][:p], tok.mask_token_id, *seqs[i][p + 1:]])
        ids, mask = _pad(masked, _pad_id(tok), lm.device)
        where = torch.tensor([jobs[r][1] for r in rows], device=ids.device)
        target = torch.tensor([seqs[jobs[r][0]][jobs[r][1]] for r in rows], device=ids.device)
        with torch.inference_mode():
            logits = lm.model(input_ids=ids, attention_mask=mask).logits
            at = logits[torch.arange(len(rows), device=ids.device), where].float()
            picked = torch.log_softmax(at, dim=-1).gather(-1, target.unsqueeze(-1)).squeeze(-1)
        for r, value in zip(rows, picked.tolist(), strict=True):
            logprob[jobs[r][0]] += float(value)
            tokens[jobs[r][0]] += 1
    return logprob, tokens


_SCORERS: dict[str, Callable[..., tuple[list[float], list[int]]]] = {
    "causal": causal_logprobs,
    "masked": masked_pll,
}


def sentence_logprobs(lm: Any, texts: Sequence[str], *, max_tokens: int = 512,
                      max_rows: int | None = None) -> tuple[list[float], list[int]]:
    """:func:`causal_logprobs` or :func:`masked_pll`, by ``lm.kind``."""
    return _SCORERS[lm.kind](lm, texts, max_tokens=max_tokens, max_rows=max_rows)
