"""Per-token log-likelihood of texts under a causal LM (``local-structure``'s LM performance).

Each text is tokenised without special tokens and prefixed with the model's BOS token (EOS when
it has none, as :mod:`synrob.perturb.perturbers.coco` does), so every token of the text is
predicted. Per-token averages favour texts that split into many short tokens (a character
shuffle is scored one easy character at a time), so :attr:`LmScores.per_char` is given too.
Texts are sorted by length and batched so that rows x longest <= ``max_tokens``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["LmScores", "score_texts"]


@dataclass(frozen=True)
class LmScores:
    """Summed log-probability (nats), scored tokens and characters of each text."""

    logprob: list[float]
    tokens: list[int]
    chars: list[int]

    @property
    def per_token(self) -> float:
        """Micro-averaged log-likelihood per token: sum of log-probs / sum of tokens."""
        n = sum(self.tokens)
        return sum(self.logprob) / n if n else float("nan")

    @property
    def per_char(self) -> float:
        """Log-likelihood per character: comparable across texts that tokenise differently."""
        n = sum(self.chars)
        return sum(self.logprob) / n if n else float("nan")


def score_texts(texts: Sequence[str], model: str = "smollm2", *, device: str = "cpu",
                max_tokens: int = 512) -> LmScores:
    """Log-probability of each text under the causal LM ``model`` (loaded once per process)."""
    import torch
    from synrob.perturb.errors import ResourceError
    from synrob.perturb.lm import load_lm

    lm = load_lm(model, device=device, kind="causal")
    tok = lm.tokenizer
    start = tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id
    if start is None:
        raise ResourceError(f"model {model!r}: the tokenizer has neither BOS nor EOS token")
    pad = tok.pad_token_id if tok.pad_token_id is not None else 0
    ids_list = tok(list(texts), add_special_tokens=False)["input_ids"]
    seqs = [[start, *ids] for ids in ids_list]
    logprob = [0.0] * len(seqs)
    order = sorted(range(len(seqs)), key=lambda i: len(seqs[i]))
    part: list[int] = []

    def flush(rows: list[int]) -> None:
        longest = max(len(seqs[i]) for i in rows)
        ids = torch.full((len(rows), longest), pad, dtype=torch.long)
        mask = torch.zeros((len(rows), longest), dtype=torch.long)
        for r, i in enumerate(rows):
            ids[r, : len(seqs[i])] = torch.tensor(seqs[i], dtype=torch.long)
            mask[r, : len(seqs[i])] = 1
        ids, mask = ids.to(lm.device), mask.to(lm.device)
        with torch.inference_mode():
            logits = lm.model(input_ids=ids, attention_mask=mask).logits[:, :-1]
            target = ids[:, 1:]
            picked = logits.gather(-1, target.unsqueeze(-1)).squeeze(-1).float()
            # (len, vocab) slabs one row at a time stay in cache
            norm = torch.stack([torch.logsumexp(row.float(), dim=-1) for row in logits])
            totals = ((picked - norm) * mask[:, 1:]).sum(-1).tolist()
        for i, total in zip(rows, totals, strict=True):
            logprob[i] = float(total)

    for i in order:
        if part and (len(part) + 1) * len(seqs[i]) > max_tokens:
            flush(part)
            part = []
        part.append(i)
    if part:
        flush(part)
    return LmScores(logprob, [len(s) - 1 for s in seqs], [len(t) for t in texts])
