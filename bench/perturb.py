"""Perturbation throughput on EWT dev, side by side with nlpaug; streaming memory of `perturb`.

Prints ``name: value`` lines:

* ``<kind>_sents_per_s`` for every registered perturber: CoNLL-U read -> perturb -> CoNLL-U
  written (to memory) through :func:`synrob.perturb.pipeline.perturb_formatted`, one process;
  ``<kind>_setup_s`` is the one-off resource loading done before timing;
* ``nlpaug_synonym_wordnet_sents_per_s``, ``nlpaug_random_word_swap_sents_per_s``,
  ``nlpaug_random_char_swap_sents_per_s`` on the same sentences as text, and
  ``copos_vs_nlpaug_synonym`` (ratio; target >= 1);
* the fair comparison of one substitution per sentence: nlpaug's ``SynonymAug`` with
  ``aug_max=1`` (``nlpaug_synonym_one_word_sents_per_s``) beside coPOS at its default budget 1,
  ``copos_vs_nlpaug_synonym_one_word`` (sentences/s ratio; target >= 1), and the time per
  substituted word of each (``copos_ms_per_substituted_word``,
  ``nlpaug_synonym_ms_per_substituted_word``, ``nlpaug_synonym_one_word_ms_per_substituted_word``;
  a word counts as substituted for nlpaug when a difflib alignment of its own tokens of input
  and output replaces it, and for coPOS when ``# synrob.changed`` lists it) with
  ``copos_vs_nlpaug_per_word`` and ``copos_vs_nlpaug_one_word_per_word`` (nlpaug time per word
  over coPOS's; target >= 1 for both);
* the matched per-word comparison with nlpaug's defaults, which substitute about 30 % of each
  sentence's words: coPOS at the smallest budget that substitutes at least as many words per
  sentence (``copos_matched_budget``, ``copos_matched_words_per_sentence`` beside
  ``nlpaug_synonym_words_per_sentence``), ``copos_matched_ms_per_substituted_word`` and
  ``copos_vs_nlpaug_per_word_matched`` (nlpaug's defaults' time per word over coPOS's);
* ``coco_sents_per_s`` with the default prefix-shared rescoring and
  ``coco_full_rescoring_sents_per_s`` with ``rescoring=full`` on the same first
  ``--coco-sentences`` sentences and the same loaded model, ``coco_prefix_speedup`` (their
  ratio; target >= 2), ``coco_prefix_same_output`` (whether both wrote identical CoNLL-U but for the
  ``# synrob.params`` line that names the rescoring),
  the tokens each ran (``coco_prefix_tokens``, ``coco_full_rescoring_tokens``);
  ``coco_tokens_per_s`` (model tokens run per second, prefix mode) and ``coco_ratio_vs_raw``
  (that rate divided by the rate of plain batched forward passes of the same model on the
  same shapes, without a cache; target >= 0.8);
* ``shuffle_peak_rss_train_mb`` / ``shuffle_peak_rss_dev_mb``: peak RSS of
  ``synrob perturb --kind shuffle`` on EWT train vs dev (streaming: about equal).

Bench-time setup (not a package dependency)::

    .venv/bin/pip install nlpaug==1.1.11

nlpaug's SynonymAug calls ``nltk.pos_tag``, whose tagger data cannot be downloaded offline: the
first run trains NLTK's own ``PerceptronTagger`` on EWT train (FORM, XPOS) and saves it as
``<synrob cache>/nltk_data/taggers/averaged_perceptron_tagger_eng/`` (on ``nltk.data.path``),
so nlpaug's own code path and cost are kept. Kinds or peers that are not available are skipped
with a line saying why.

Run: ``.venv/bin/python bench/perturb.py [--ewt DIR] [--kinds copos,...] [--coco-sentences N]
[--skip-rss]`` (``--coco-sentences 0`` skips coCO).
"""

from __future__ import annotations

import argparse
import io
import itertools
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_EWT = ROOT.parent / "shared" / "data" / "ud" / "en_ewt"


def emit(name: str, value: float | str) -> None:
    if isinstance(value, float):
        value = f"{value:.4g}" if abs(value) < 100 else f"{value:.0f}"
    print(f"{name}: {value}", flush=True)


def skip(name: str, reason: str) -> None:
    print(f"{name}: skipped ({reason})", flush=True)


def bench_kinds(dev_text: str, n_sents: int, train: Path, workers: int = 2,
                kinds: list[str] | None = None) -> dict[str, float]:
    """Sentences per second of every registered kind (coco apart), CoNLL-U in and out.

    Defaults everywhere, except somo, which takes its bigram counts from EWT train. With
    ``workers > 1`` each kind is also timed with that many worker processes (``synrob perturb
    --workers N``), checking that the output is byte-identical.
    """
    from synrob.perturb.errors import SynrobError
    from synrob.perturb.pipeline import perturb_formatted, read_blocks
    from synrob.perturb.plugins import get_registry

    registry = get_registry()
    rates: dict[str, float] = {}
    for kind in registry.names("perturber"):
        if kind == "coco" or (kinds and kind not in kinds):
            continue
        try:
            params = {"reference": str(train)} if kind == "somo" else {}
            perturber = registry.get("perturber", kind)(**params)
            start = time.perf_counter()
            perturber.ensure_setup()
            emit(f"{kind}_setup_s", time.perf_counter() - start)
            fmt = "conllu" if perturber.writes_conllu else "text"
            elapsed, output, stats = run_perturber(perturber, dev_text)
        except SynrobError as exc:
            skip(f"{kind}_sents_per_s", str(exc))
            continue
        assert stats.sentences == n_sents
        rates[kind] = n_sents / elapsed
        emit(f"{kind}_sents_per_s", rates[kind])
        words = changed_words(output)
        rates[f"{kind}_s_per_word"] = elapsed / max(words, 1)
        emit(f"{kind}_ms_per_substituted_word", 1000 * rates[f"{kind}_s_per_word"])
        emit(f"{kind}_changed_share", stats.changed_records / max(stats.records, 1))
        if workers > 1:  # the same job on all cores (ordered, byte-identical output)
            start = time.perf_counter()
            parallel = "".join(perturb_formatted(perturber, read_blocks(io.StringIO(dev_text)),
                                                 fmt, seed=0, workers=workers))
            emit(f"{kind}_sents_per_s_{workers}workers", n_sents / (time.perf_counter() - start))
            assert parallel == output, f"{kind}: workers changed the output"
    return rates


def run_perturber(perturber: Any, dev_text: str) -> tuple[float, str, Any]:
    """(seconds, output, PipelineStats) of one seeded pass over ``dev_text`` in one process."""
    from synrob.perturb.pipeline import PipelineStats, perturb_formatted, read_blocks

    fmt = "conllu" if perturber.writes_conllu else "text"
    stats = PipelineStats()
    sink = io.StringIO()
    start = time.perf_counter()
    for chunk in perturb_formatted(perturber, read_blocks(io.StringIO(dev_text)), fmt, seed=0,
                                   stats=stats):
        sink.write(chunk)
    return time.perf_counter() - start, sink.getvalue(), stats


def changed_words(conllu: str) -> int:
    """Words listed in the ``# synrob.changed`` comments of a perturb output."""
    prefix = "# synrob.changed = "
    return sum(len([w for w in line[len(prefix):].split(",") if w.strip()])
               for line in conllu.splitlines() if line.startswith(prefix))


def substituted_tokens(a: list[str], b: list[str]) -> int:
    """Tokens of ``a`` replaced or deleted in ``b`` (difflib alignment)."""
    import difflib

    ops = difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes()
    return sum(i2 - i1 for tag, i1, i2, _, _ in ops if tag in ("replace", "delete"))


def ensure_nltk_tagger(train: Path) -> None:
    """Train NLTK's PerceptronTagger on EWT train XPOS once; save it where nltk.pos_tag looks."""
    import nltk
    from nltk.tag.perceptron import PerceptronTagger
    from synrob.perturb.corpus import read_conllu
    from synrob.perturb.io.data import cache_dir

    root = cache_dir() / "nltk_data"
    if str(root) not in nltk.data.path:
        nltk.data.path.insert(0, str(root))
    loc = root / "taggers" / "averaged_perceptron_tagger_eng"
    if loc.is_dir() and any(loc.glob("*.json")):
        return
    loc.parent.mkdir(parents=True, exist_ok=True)
    sents = [[(w.form, w.xpos) for w in s.words()] for s in read_conllu(train)]
    start = time.perf_counter()
    tagger = PerceptronTagger(load=False)
    tagger.train(sents, nr_iter=5)
    tagger.save_to_json(lang="eng", loc=str(loc))
    emit("nltk_tagger_train_s", time.perf_counter() - start)


def bench_nlpaug(texts: list[str], train: Path) -> dict[str, float]:
    """Sentences per second of three nlpaug augmenters on the same sentences as text."""
    try:
        import nlpaug.augmenter.char as nac
        import nlpaug.augmenter.word as naw
    except ImportError:
        for name in ("synonym_wordnet", "random_word_swap", "random_char_swap"):
            skip(f"nlpaug_{name}_sents_per_s", "nlpaug not installed: pip install nlpaug==1.1.11")
        return {}
    from synrob.perturb.lexicon.wordnet import get_wordnet

    get_wordnet()  # puts synrob's offline WordNet on nltk.data.path (nlpaug reads it there)
    ensure_nltk_tagger(train)
    augmenters = {
        "synonym_wordnet": naw.SynonymAug(aug_src="wordnet"),
        "synonym_one_word": naw.SynonymAug(aug_src="wordnet", aug_max=1),
        "random_word_swap": naw.RandomWordAug(action="swap"),
        "random_char_swap": nac.RandomCharAug(action="swap"),
    }
    rates: dict[str, float] = {}
    for name, aug in augmenters.items():
        aug.augment(texts[0])  # warm-up: lazy loads (WordNet, tagger)
        start = time.perf_counter()
        outs = [aug.augment(text) for text in texts]
        elapsed = time.perf_counter() - start
        rates[name] = len(texts) / elapsed
        emit(f"nlpaug_{name}_sents_per_s", rates[name])
        if name.startswith("synonym"):
            # compared in nlpaug's own tokens, so its detokenisation is not counted as a change
            words = sum(substituted_tokens(aug.tokenizer(t),
                                           aug.tokenizer(o[0] if isinstance(o, list) else o))
                        for t, o in zip(texts, outs, strict=True))
            rates[f"{name}_s_per_word"] = elapsed / max(words, 1)
            rates[f"{name}_words_per_sentence"] = words / len(texts)
            label = name.replace("synonym_wordnet", "synonym")
            emit(f"nlpaug_{label}_ms_per_substituted_word", 1000 * rates[f"{name}_s_per_word"])
    return rates


def bench_coco(dev_text: str, n: int) -> None:
    from synrob.perturb.errors import SynrobError
    from synrob.perturb.pipeline import perturb_formatted, read_blocks
    from synrob.perturb.plugins import get_registry

    registry = get_registry()
    if "coco" not in registry.names("perturber"):
        skip("coco_tokens_per_s", "perturber 'coco' is not registered")
        return
    try:
        from synrob.perturb.lm.loaded import forward_throughput

        coco = registry.get("perturber", "coco")()
        full = registry.get("perturber", "coco")(rescoring="full")
        start = time.perf_counter()
        coco.ensure_setup()
        emit("coco_setup_s", time.perf_counter() - start)
        full.lm, full.vocab = coco.lm, coco.vocab  # the same loaded model
        full._start_id, full._pad_id, full._ready = coco._start_id, coco._pad_id, True
        blocks = list(itertools.islice(read_blocks(io.StringIO(dev_text)), n))
        start = time.perf_counter()
        out_full = list(perturb_formatted(full, blocks, "conllu", seed=0))
        elapsed_full = time.perf_counter() - start
        start = time.perf_counter()
        out = list(perturb_formatted(coco, blocks, "conllu", seed=0))
        elapsed = time.perf_counter() - start
        raw = forward_throughput(coco.lm, coco.stats["shapes"])
    except (SynrobError, ImportError, AttributeError, KeyError) as exc:
        skip("coco_tokens_per_s", f"{type(exc).__name__}: {exc}")
        return
    tokens = coco.stats["tokens_scored"]
    emit("coco_sents_per_s", len(out) / elapsed)
    emit("coco_full_rescoring_sents_per_s", len(out_full) / elapsed_full)
    emit("coco_prefix_speedup", elapsed_full / elapsed)
    same = [_without_params(a) for a in out] == [_without_params(b) for b in out_full]
    emit("coco_prefix_same_output", str(same).lower())
    emit("coco_tokens_per_s", tokens / elapsed)
    emit("coco_full_rescoring_tokens", float(full.stats["tokens_scored"]))
    emit("coco_prefix_tokens", float(tokens))
    emit("coco_raw_forward_tokens_per_s", raw["tokens_per_second"])
    emit("coco_ratio_vs_raw", (tokens / elapsed) / raw["tokens_per_second"])


def _without_params(conllu: str) -> str:
    """A CoNLL-U record without its ``# synrob.params`` line (which names the rescoring)."""
    return "".join(line for line in conllu.splitlines(keepends=True)
                   if not line.startswith("# synrob.params"))


def peak_rss_mb(path: Path) -> float:
    """Peak RSS (MB) of ``synrob perturb --kind shuffle PATH -o /dev/null`` in a fresh process."""
    synrob = Path(sys.executable).with_name("synrob")
    cmd = [str(synrob), "perturb", "--kind", "shuffle", "-o", os.devnull, str(path)]
    probe = (
        "import resource, subprocess, sys\n"
        "rc = subprocess.run(sys.argv[1:], stderr=subprocess.DEVNULL).returncode\n"
        "print(rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    )
    res = subprocess.run([sys.executable, "-c", probe, *cmd], capture_output=True, text=True,
                         check=True)
    rc, kb = res.stdout.split()
    if rc != "0":
        raise RuntimeError(f"{' '.join(cmd)} exited with {rc}")
    return int(kb) / 1024


def compare_nlpaug(rates: dict[str, float], peers: dict[str, float]) -> None:
    """coPOS against nlpaug's SynonymAug: sentences/s, defaults and one word per sentence, and
    time per substituted word (nlpaug's over coPOS's: > 1 means coPOS is faster)."""
    if "copos" not in rates or "synonym_wordnet" not in peers:
        return
    emit("copos_vs_nlpaug_synonym", rates["copos"] / peers["synonym_wordnet"])
    emit("copos_vs_nlpaug_synonym_one_word", rates["copos"] / peers["synonym_one_word"])
    emit("copos_vs_nlpaug_per_word", peers["synonym_wordnet_s_per_word"] / rates["copos_s_per_word"])
    emit("copos_vs_nlpaug_one_word_per_word",
         peers["synonym_one_word_s_per_word"] / rates["copos_s_per_word"])


def compare_nlpaug_matched(dev_text: str, n_sents: int, peers: dict[str, float]) -> None:
    """coPOS at the smallest budget that substitutes at least as many words per sentence as
    nlpaug's defaults (about 30 % of the words), against those defaults, per substituted word."""
    if "synonym_wordnet_words_per_sentence" not in peers:
        return
    from synrob.perturb.plugins import get_registry

    target = peers["synonym_wordnet_words_per_sentence"]
    emit("nlpaug_synonym_words_per_sentence", target)
    for budget in range(2, 11):
        perturber = get_registry().get("perturber", "copos")(budget=budget)
        perturber.ensure_setup()
        elapsed, output, _ = run_perturber(perturber, dev_text)
        per_sentence = changed_words(output) / n_sents
        if per_sentence >= target or budget == 10:
            break
    emit("copos_matched_budget", str(budget))
    emit("copos_matched_words_per_sentence", per_sentence)
    s_per_word = elapsed / max(changed_words(output), 1)
    emit("copos_matched_ms_per_substituted_word", 1000 * s_per_word)
    emit("copos_vs_nlpaug_per_word_matched", peers["synonym_wordnet_s_per_word"] / s_per_word)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ewt", type=Path, default=DEFAULT_EWT, help="EWT directory")
    parser.add_argument("--coco-sentences", type=int, default=32)
    parser.add_argument("--skip-rss", action="store_true")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                        help="also time each kind with this many worker processes")
    parser.add_argument("--skip-nlpaug", action="store_true")
    parser.add_argument("--kinds", default="", help="comma-separated kinds to time (default all)")
    args = parser.parse_args()
    dev = args.ewt / "en_ewt-ud-dev.conllu"
    train = args.ewt / "en_ewt-ud-train.conllu"

    from synrob.perturb.corpus import read_conllu

    dev_text = dev.read_text(encoding="utf-8")
    texts = [s.text for s in read_conllu(dev)]
    emit("dev_sentences", str(len(texts)))
    emit("cpu_count", str(os.cpu_count()))

    kinds = [k for k in args.kinds.split(",") if k]
    rates = bench_kinds(dev_text, len(texts), train, args.workers, kinds)
    if not args.skip_nlpaug:
        peers = bench_nlpaug(texts, train)
        compare_nlpaug(rates, peers)
        compare_nlpaug_matched(dev_text, len(texts), peers)
    if args.coco_sentences > 0:
        bench_coco(dev_text, args.coco_sentences)
    if not args.skip_rss:
        rss_train = peak_rss_mb(train)
        rss_dev = peak_rss_mb(dev)
        emit("shuffle_peak_rss_train_mb", rss_train)
        emit("shuffle_peak_rss_dev_mb", rss_dev)
        emit("shuffle_peak_rss_train_over_dev", rss_train / rss_dev)


if __name__ == "__main__":
    main()
