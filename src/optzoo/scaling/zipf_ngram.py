"""An unbounded synthetic "language" for the tiny-LM training runs of the quant-robustness
reproduction (Catalan-Tatjer et al., ICLR 2026, train on web text; offline here): a random
order-``n`` Markov language with Zipfian conditionals.

The next token depends on the ``order − 1`` previous ones through a fixed random table:
``p(v | context) ∝ (r_context(v) + 1)^−a`` with ``r_context`` a random permutation of the
vocabulary per context (drawn from ``seed``), ``a`` = ``zipf_exponent``.  A model has to attend
to the previous tokens and memorise ``vocab_size^(order−1)`` conditionals, so its loss keeps
falling over a long run (capacity-limited memorisation, like language modelling) and the
transformer blocks — the weights that get quantized — carry the prediction.  The first
``order − 1`` tokens of a sequence are uniform.

Sequences are drawn from any NumPy generator: training streams fresh samples every step (no
sample is seen twice, as in the paper's sub-epoch pre-training); validation and calibration sets
come from separate generator seeds (the paper calibrates on C4 and evaluates on RefinedWeb).
:meth:`ZipfNGram.entropy_rate` is the Bayes-optimal cross-entropy (the floor of any model).

Example:
    >>> import numpy as np
    >>> from optzoo.scaling.zipf_ngram import ZipfNGram
    >>> lang = ZipfNGram(vocab_size=16, order=3, seq_len=32)
    >>> lang.sample(4, np.random.default_rng(0)).shape
    torch.Size([4, 32])
    >>> 0 < lang.entropy_rate() < float(np.log(16))
    True
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from optzoo.checks import check_int, check_real

__all__ = ["ZipfNGram"]


@dataclass(frozen=True)
class ZipfNGram:
    """A random order-``n`` Markov language with Zipfian conditionals (module docstring).

    Args:
        vocab_size: tokens ``0 … vocab_size − 1``.
        order: n (the next token depends on the previous n − 1).
        seq_len: tokens per sampled sequence.
        zipf_exponent: a of every conditional.
        seed: seed of the table (the language itself).
    """

    vocab_size: int = 64
    order: int = 3
    seq_len: int = 32
    zipf_exponent: float = 1.5
    seed: int = 0

    def __post_init__(self):
        check_int("vocab_size", self.vocab_size, low=2)
        check_int("order", self.order, low=1)
        check_int("seq_len", self.seq_len, low=self.order)
        check_int("seed", self.seed, low=0)
        check_real("zipf_exponent", self.zipf_exponent, low=0.0)
        if self.vocab_size ** (self.order - 1) > 2 ** 20:
            raise ValueError(f"order: vocab_size^(order − 1) = "
                             f"{self.vocab_size ** (self.order - 1)} contexts is too many")

    @functools.cached_property
    def table(self) -> np.ndarray:
        """Conditionals, ``contexts × vocab_size`` (context = base-V number of the previous
        ``order − 1`` tokens, oldest first)."""
        rng = np.random.default_rng([self.seed, 77])
        z = (np.arange(self.vocab_size) + 1.0) ** -self.zipf_exponent
        z /= z.sum()
        contexts = self.vocab_size ** (self.order - 1)
        ranks = np.argsort(rng.random((contexts, self.vocab_size)), axis=1)
        return z[ranks]

    def _context(self, out: np.ndarray, t: int) -> np.ndarray:
        c = np.zeros(out.shape[0], dtype=np.int64)
        for k in range(t - self.order + 1, t):
            c = c * self.vocab_size + out[:, k]
        return c

    def sample(self, n: int, rng: np.random.Generator) -> torch.Tensor:
        """``n`` sequences of ``seq_len`` tokens (a ``n × seq_len`` LongTensor)."""
        return self.sample_each(n, [rng])[0]

    def sample_each(self, n: int, rngs: Sequence[np.random.Generator]) -> list[torch.Tensor]:
        """``[sample(n, rng) for rng in rngs]``, the chains of all generators advanced together
        (one NumPy pass per position instead of one per position and generator: the
        trainer draws a run's batches this way)."""
        check_int("n", n, low=1)
        rngs = list(rngs)
        if not rngs or not all(isinstance(r, np.random.Generator) for r in rngs):
            raise ValueError(f"rng: expected numpy Generators, got "
                             f"{[type(r).__name__ for r in rngs]}")
        k = self.order - 1
        # each generator draws its start tokens, then one uniform per later position
        first = [r.integers(0, self.vocab_size, (n, k)) for r in rngs]
        u = np.concatenate([r.random((n, self.seq_len - k)) for r in rngs])
        cum = self._cumulative
        out = np.empty((n * len(rngs), self.seq_len), dtype=np.int64)
        out[:, :k] = np.concatenate(first)
        for t in range(k, self.seq_len):
            rows = cum[self._context(out, t)]
            out[:, t] = np.minimum((rows < u[:, t - k, None]).sum(1), self.vocab_size - 1)
        return list(torch.from_numpy(out).split(n))

    @functools.cached_property
    def _cumulative(self) -> np.ndarray:
        return np.cumsum(self.table, 1)

    def entropy_rate(self, n: int = 512, seed: int = 12345) -> float:
        """Monte-Carlo estimate (nats / token) of the Bayes-optimal next-token cross-entropy
        over positions 1 … seq_len − 1 (the positions a model is scored on; before position
        ``order − 1`` the token is uniform)."""
        ids = self.sample(n, np.random.default_rng(seed)).numpy()
        total = 0.0
        for t in range(1, self.seq_len):
            if t < self.order - 1:
                total += n * np.log(self.vocab_size)
            else:
                p = self.table[self._context(ids, t), ids[:, t]]
                total += float(-np.log(p).sum())
        return float(total / (n * (self.seq_len - 1)))
