"""A Hugging Face causal LM as the RFTHGS operator generator (Zhu, Zhang & Cao, "Refining
Hybrid Genetic Search for CVRP via Reinforcement Learning-Finetuned LLM", ICLR 2026, OpenReview
aITKXFeivk).

The paper's generator is an LLM (Qwen3 in the released scripts) prompted with the full source
of the parent crossover and a list of hard rules; its completion (a short idea plus the full
file in a code block) is compiled and scored. :class:`LMGenerator` plays that role for any
causal LM on disk, writing *Python* operators for :mod:`optzoo.routing.hgs`, and plugs into
:func:`optzoo.routing.rfthgs.train` (``propose`` / ``token_log_probs``). Models are loaded
with ``local_files_only=True``: nothing is downloaded. Sampling defaults are the paper's test-time
ones (T = 1, top-p 0.95, top-k 200). :meth:`LMGenerator.token_log_probs` gives the per-token
log-probs of each completion (padded, with a mask), from which the loop's loss
(:func:`optzoo.routing.rfthgs.verl_policy_loss`) forms one clipped ratio per token, as verl
does, before summing over the completion's tokens and averaging over completions
("seq-mean-token-sum").

The prompt (:func:`build_prompt`) transposes the official one from C++ to Python: role, parent
source, rules (keep ``crossover(parents, data, cost_evaluator, rng)``, only the allowed imports,
no invented methods, mark edits with ``# MODIFY:``), a short API sheet, and the answer format.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import torch

API_SHEET = """\
Usable API (pyvrp):
- ProblemData: centroid() -> (x, y); num_locations; num_clients; num_depots; num_vehicles;
  location(i) -> object with .x, .y; clients() -> list with .delivery; distance_matrix(0)[i, j].
- Solution(data, routes) where routes is a list of lists of client indices; solution.routes();
  Route.visits() -> list of client indices; Route.centroid() -> (x, y).
- rng.randint(n) -> int in [0, n); rng.rand() -> float in [0, 1).
- cost_evaluator.penalised_cost(solution) -> float.
Allowed imports: math, random, itertools, functools, heapq, collections, bisect, numpy, pyvrp."""

PROMPT = """\
You are a Python optimisation engineer improving the crossover operator of a Hybrid Genetic
Search for the capacitated vehicle routing problem. The current operator is:

```python
{parent}
```

Rules:
1. Keep the signature `def crossover(parents, data, cost_evaluator, rng)`; it must return a
   pyvrp Solution built from the two parent solutions.
2. Use only the API below and the allowed imports; do not invent methods; no file, network or
   process access.
3. Mark every changed line with a `# MODIFY:` comment.
4. Answer with at most two sentences describing your idea, then the full new file in one
   ```python code block.

{api}
"""


def build_prompt(parent_source: str) -> str:
    """The generation prompt for a parent operator's source."""
    if not isinstance(parent_source, str) or not parent_source.strip():
        raise ValueError("parent_source: expected the non-empty source of an operator")
    return PROMPT.format(parent=parent_source.rstrip(), api=API_SHEET)


_BLOCK = re.compile(r"```(?:python|py)?[ \t]*\n(.*?)```", re.DOTALL)


def extract_code(completion: str) -> str | None:
    """The last fenced code block of a completion (None: no code, the reward's compile tier)."""
    blocks = _BLOCK.findall(completion)
    return blocks[-1] if blocks else None


@dataclass
class Completion:
    """One sampled completion: token ids of prompt and completion, and the decoded text."""

    prompt_ids: torch.Tensor
    completion_ids: torch.Tensor
    text: str


class LMGenerator(torch.nn.Module):
    """A causal LM that writes crossovers, for :func:`optzoo.routing.rfthgs.train`.

    Args:
        model: a ``transformers`` causal LM (``AutoModelForCausalLM``).
        tokenizer: its tokenizer (needs an EOS token; PAD defaults to EOS).
        max_new_tokens: completion length cap (paper: 8192).
        temperature, top_p, top_k: sampling settings (paper test time: 1.0, 0.95, 200).
        logprob_batch: completions per forward in :meth:`token_log_probs`; None: 8 on CUDA,
            1 elsewhere.  On one CPU thread batching is slower (the 1.15 M-parameter code LM,
            16 completions of 390-1 000 tokens, forward + backward: 1.05 s one at a time,
            1.15 s in pairs, 1.5 s by 4, 2.5 s by 8: the batch's logits no longer fit the
            cache); on a GPU a batch fills the device.  The logits of a batch are
            ``logprob_batch × length × vocabulary`` floats.
    """

    def __init__(self, model, tokenizer, max_new_tokens: int = 2048, temperature: float = 1.0,
                 top_p: float = 0.95, top_k: int = 200, logprob_batch: int | None = None):
        super().__init__()
        if tokenizer.eos_token_id is None:
            raise ValueError("tokenizer: expected an EOS token")
        if max_new_tokens < 1 or not temperature > 0 or not 0 < top_p <= 1 or top_k < 1:
            raise ValueError("max_new_tokens >= 1, temperature > 0, top_p in (0, 1] and "
                             "top_k >= 1 expected")
        if logprob_batch is not None and (not isinstance(logprob_batch, int)
                                          or logprob_batch < 1):
            raise ValueError(f"logprob_batch: expected an int >= 1, got {logprob_batch!r}")
        self.model, self.tokenizer = model, tokenizer
        self.max_new_tokens, self.temperature = int(max_new_tokens), float(temperature)
        self.top_p, self.top_k = float(top_p), int(top_k)
        self.logprob_batch = logprob_batch

    @classmethod
    def from_pretrained(cls, path: str, device: str = "cpu", dtype=None, **kwargs):
        """Load a local model folder (never downloads)."""
        from transformers import AutoModelForCausalLM, AutoTokenizer

        tok = AutoTokenizer.from_pretrained(path, local_files_only=True)
        model = AutoModelForCausalLM.from_pretrained(path, local_files_only=True,
                                                     dtype=dtype).to(device)
        return cls(model, tok, **kwargs)

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    def _encode(self, text: str) -> torch.Tensor:
        tok = self.tokenizer
        if getattr(tok, "chat_template", None):
            ids = tok.apply_chat_template([{"role": "user", "content": text}],
                                          add_generation_prompt=True, return_tensors="pt",
                                          return_dict=False)
            ids = ids if isinstance(ids, torch.Tensor) else torch.tensor([ids])
        else:
            ids = tok(text, return_tensors="pt").input_ids
        return ids[0].to(self.device)

    @torch.no_grad()
    def generate(self, prompt: str, n: int, generator: torch.Generator | None = None
                 ) -> list[Completion]:
        """n sampled completions of ``prompt``."""
        if generator is not None:  # HF sampling draws from the global RNG
            torch.manual_seed(int(torch.randint(2 ** 31, (1,), generator=generator)))
        ids = self._encode(prompt)
        pad = self.tokenizer.pad_token_id
        pad = self.tokenizer.eos_token_id if pad is None else pad
        out = self.model.generate(ids.unsqueeze(0).expand(n, -1),
                                  attention_mask=torch.ones(n, len(ids), dtype=torch.long,
                                                            device=ids.device),
                                  do_sample=True, temperature=self.temperature,
                                  top_p=self.top_p, top_k=self.top_k,
                                  max_new_tokens=self.max_new_tokens, pad_token_id=pad)
        comps = []
        eos = self.tokenizer.eos_token_id
        for row in out:
            c = row[len(ids):]
            stop = (c == eos).nonzero()
            c = c[: int(stop[0]) + 1] if len(stop) else c  # keep EOS: it is a sampled token
            text = self.tokenizer.decode(c, skip_special_tokens=True)
            comps.append(Completion(ids, c, text))
        return comps

    def propose(self, parent, n: int, generator: torch.Generator
                ) -> list[tuple[Completion, str | None]]:
        """The generator protocol of :func:`~optzoo.routing.rfthgs.train`."""
        comps = self.generate(build_prompt(parent.source), n, generator)
        return [(c, extract_code(c.text)) for c in comps]

    def token_log_probs(self, parents: Sequence, children: Sequence[Completion]
                        ) -> tuple[torch.Tensor, torch.Tensor]:
        """The generator protocol of :func:`~optzoo.routing.rfthgs.train`: log π(token |
        prompt, previous tokens) of every completion token, ``(B, T)`` right-padded with 0 to
        the longest completion, and the ``(B, T)`` float mask (1 on completion tokens, the EOS
        included).  Temperature-scaled like :meth:`generate`; its top-p/top-k truncation is
        ignored, as verl does.

        The sequences (prompt + completion) go through the model ``logprob_batch`` at a time,
        right-padded, in order of length so that a batch pads little; right padding leaves
        every real token's position and context as in a lone forward (tested against one
        forward per completion)."""
        if not children:
            raise ValueError("children: expected at least one completion")
        per_forward = self.logprob_batch or (8 if self.device.type == "cuda" else 1)
        seqs = [torch.cat([c.prompt_ids, c.completion_ids]) for c in children]
        order = sorted(range(len(seqs)), key=lambda i: len(seqs[i]))
        chunks = [order[k: k + per_forward] for k in range(0, len(order), per_forward)]
        rows: dict[int, torch.Tensor] = {}
        for chunk in chunks:
            n = max(len(seqs[i]) for i in chunk)
            ids = torch.zeros(len(chunk), n, dtype=torch.long, device=self.device)
            for j, i in enumerate(chunk):
                ids[j, : len(seqs[i])] = seqs[i]
            # no attention mask: under causal attention a real token never sees the pads
            # after it, and the maskless path keeps SDPA's causal kernel
            logits = self.model(input_ids=ids).logits
            for j, i in enumerate(chunk):
                c = children[i]
                lp, lc = len(c.prompt_ids), len(c.completion_ids)
                row = torch.log_softmax(logits[j, lp - 1: lp + lc - 1].float()
                                        / self.temperature, -1)
                rows[i] = row.gather(-1, c.completion_ids.unsqueeze(-1))[:, 0]
        # assembled by stacking, not by in-place writes, so that autograd sees one graph
        ordered = [rows[i] for i in range(len(children))]
        logp = torch.nn.utils.rnn.pad_sequence(ordered, batch_first=True)
        mask = torch.nn.utils.rnn.pad_sequence([torch.ones_like(r) for r in ordered],
                                               batch_first=True)
        return logp, mask

    def sequence_log_probs(self, parents: Sequence, children: Sequence[Completion]
                           ) -> torch.Tensor:
        """Σ over completion tokens of log π(token | prompt, previous tokens), per completion
        (the masked row sums of :meth:`token_log_probs`)."""
        logp, mask = self.token_log_probs(parents, children)
        return (logp * mask).sum(-1)
