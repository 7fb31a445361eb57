"""A character-level tokenizer for the synthetic tasks, built in-process.

:func:`char_tokenizer` returns a ``transformers.PreTrainedTokenizerFast`` (a ``tokenizers``
``WordLevel`` model over single characters), so it saves and loads with
``save_pretrained`` / ``AutoTokenizer.from_pretrained`` like any Hugging Face tokenizer and plugs
into TRL unchanged.  Conventions, those of Llama tokenizers:

- ids 0-3 are ``<pad>``, ``<bos>``, ``<eos>``, ``<unk>``, then one id per alphabet character in
  the alphabet's order (so ids are stable for a given alphabet);
- ``tokenizer(text)`` prepends ``<bos>`` (``add_special_tokens=False`` does not: use it for
  completions);
- padding is on the left (prompts of a batch end at the same column, as generation needs);
- ``decode`` joins characters without spaces; characters outside the alphabet become ``<unk>``.
"""

from __future__ import annotations

ARITHMETIC_ALPHABET = "0123456789+-*/=(),:;"
"""Every character the tasks of :mod:`optzoo.llm` write (digits, operators, separators)."""

SPECIAL_TOKENS = ("<pad>", "<bos>", "<eos>", "<unk>")


def char_tokenizer(alphabet: str = ARITHMETIC_ALPHABET):
    """A character-level ``PreTrainedTokenizerFast`` over ``alphabet`` plus the special tokens.

    Args:
        alphabet: the characters of the vocabulary, each once, in id order (ids start at 4).

    Returns:
        A ``PreTrainedTokenizerFast`` with ``pad_token_id == 0``, ``bos_token_id == 1``,
        ``eos_token_id == 2``, ``unk_token_id == 3`` and ``len(tok) == 4 + len(alphabet)``.

    Example:
        >>> from optzoo.llm import char_tokenizer
        >>> tok = char_tokenizer()
        >>> len(tok), tok.pad_token_id, tok.bos_token_id, tok.eos_token_id
        (24, 0, 1, 2)
        >>> tok("12+3=").input_ids                      # <bos> then one id per character
        [1, 5, 6, 14, 7, 18]
        >>> tok.decode([5, 6, 2], skip_special_tokens=True)
        '12'
    """
    if not isinstance(alphabet, str) or not alphabet:
        raise ValueError(f"alphabet: expected a non-empty string, got {alphabet!r}")
    if len(set(alphabet)) != len(alphabet):
        raise ValueError(f"alphabet: characters must be distinct, got {alphabet!r}")
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    vocab = {t: i for i, t in enumerate((*SPECIAL_TOKENS, *alphabet))}
    backend = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    # every character is its own word: no merges, no whitespace handling
    backend.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    backend.decoder = decoders.Fuse()
    backend.post_processor = processors.TemplateProcessing(
        single="<bos> $A", pair="<bos> $A $B", special_tokens=[("<bos>", vocab["<bos>"])])
    return PreTrainedTokenizerFast(tokenizer_object=backend, pad_token="<pad>",
                                   bos_token="<bos>", eos_token="<eos>", unk_token="<unk>",
                                   padding_side="left")
