"""Per-token log-likelihood of texts under a causal LM (``local-structure``'s LM performance).

The scoring itself is :func:`synrob.perturb.lm.scoring.causal_logprobs`: each text is tokenised
without special tokens and prefixed with the model's BOS token (EOS when it has none, as
:mod:`synrob.perturb.perturbers.coco` does), so every token of the text is predicted.
Per-token averages favour texts that split into many short tokens (a character shuffle is
scored one easy character at a time), so :attr:`LmScores.per_char` is given too. Texts are
sorted by length and batched so that rows x longest <= ``max_tokens``.
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
    """Log-probability of each text under the causal LM ``model`` (loaded once per process),
    computed by :func:`synrob.perturb.lm.scoring.causal_logprobs`."""
    from synrob.perturb.lm.loaded import load_lm
    from synrob.perturb.lm.scoring import causal_logprobs

    lm = load_lm(model, device=device, kind="causal")
    logprob, tokens = causal_logprobs(lm, texts, max_tokens=max_tokens)
    return LmScores(logprob, tokens, [len(t) for t in texts])
