"""A tiny random Llama causal LM with a byte-level BPE tokenizer trained on EWT text (words split
into several subwords), saved with ``save_pretrained``: the model the layer-only, device-map and
quantization tests load in every way and compare."""

from __future__ import annotations

import itertools
from pathlib import Path


def ewt_texts(path: Path, n: int) -> list[str]:
    """The ``# text`` of the first ``n`` sentences of a CoNLL-U file."""
    from synrob.perturb.corpus import read_conllu

    return [s.text for s in itertools.islice(read_conllu(path), n)]


def build_llama(dest: Path, texts: list[str], *, blocks: int = 6, hidden: int = 64,
                ffn: int = 128, vocab: int = 600, seed: int = 0) -> Path:
    """Save a ``LlamaForCausalLM`` of ``blocks`` blocks (GQA: 4 heads, 2 KV heads; final RMS
    norm; untied head) and its tokenizer (BOS ``<s>``) into ``dest``."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from tokenizers import trainers as tr
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(texts, tr.BpeTrainer(
        vocab_size=vocab, special_tokens=["<s>", "</s>", "<pad>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    hf_tok = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>",
                                     pad_token="<pad>", model_max_length=512)
    config = LlamaConfig(vocab_size=tok.get_vocab_size(), hidden_size=hidden,
                         intermediate_size=ffn, num_hidden_layers=blocks, num_attention_heads=4,
                         num_key_value_heads=2, max_position_embeddings=512, bos_token_id=0,
                         eos_token_id=1, pad_token_id=2, tie_word_embeddings=False)
    torch.manual_seed(seed)
    LlamaForCausalLM(config).save_pretrained(dest)
    hf_tok.save_pretrained(dest)
    return dest
