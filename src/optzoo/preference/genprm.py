"""StepORLM's generative process reward model (GenPRM): a causal LM that reads the problem and
the WHOLE trajectory and then generates one verdict per step (Zhou, Xu, Lin & Ge, ICLR 2026,
arXiv 2509.22558; brief ``steporlm.md``).

Input: ``<problem> <trajectory> JUDGE``; output: ``GOOD``/``BAD`` tokens, one per step of the
trajectory (steps as :func:`~optzoo.preference.or_modelling.split_steps` counts them), each
generated greedily given the whole trajectory and the verdicts already written — the
holistic, generative judgement the paper contrasts with discriminative per-step PRMs.
Decoding is constrained to the two verdict tokens and to exactly one verdict per step.
r(τ) = the fraction of steps judged ``GOOD`` (:meth:`GenPRM.score`).

Reading: the paper's GenPRM reasons in natural language before its verdicts; a tiny
word-level model cannot, so the critique is the verdict sequence alone.

Example:
    >>> from optzoo.preference.genprm import GenPRM, judge_prompt
    >>> from optzoo.preference.or_problems import or_tokenizer
    >>> from optzoo.preference.problems import word_llama
    >>> tok = or_tokenizer()
    >>> prm = GenPRM(word_llama(len(tok), hidden=32, layers=1, max_positions=256, seed=0), tok)
    >>> v = prm.judge(["factory makes chairs =>"], ["VARS x1 ; OBJ max 3 x1 ; SOLVE"])
    >>> len(v[0]), set(v[0]) <= {True, False}          # one verdict per step
    (3, True)
    >>> judge_prompt("p =>", "VARS x1 ; SOLVE")
    'p => VARS x1 ; SOLVE JUDGE'
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from optzoo.preference.or_modelling import split_steps

__all__ = ["GOOD", "BAD", "JUDGE", "GenPRM", "judge_prompt", "verdict_text"]

JUDGE, GOOD, BAD = "JUDGE", "GOOD", "BAD"


def judge_prompt(prompt: str, trajectory: str) -> str:
    """What the GenPRM reads: the problem, the trajectory and ``JUDGE``."""
    return f"{prompt} {trajectory} {JUDGE}".replace("  ", " ")


def verdict_text(labels: Sequence[bool]) -> str:
    """The critique the GenPRM is trained to write for step labels."""
    return " ".join(GOOD if v else BAD for v in labels)


def _n_steps(trajectory: str) -> int:
    try:
        return len(split_steps(trajectory))
    except ValueError:
        return 0


class GenPRM:
    """A causal LM used as a generative step judge.

    Args:
        model: a Hugging Face causal LM whose vocabulary has ``JUDGE``, ``GOOD``, ``BAD``.
        tokenizer: its tokenizer (left padding, EOS and PAD ids).
        max_steps: the most verdicts written (longer trajectories: the rest count as ``BAD``).
    """

    def __init__(self, model, tokenizer, *, max_steps: int = 12):
        ids = tokenizer.convert_tokens_to_ids([GOOD, BAD, JUDGE])
        if tokenizer.unk_token_id in ids or None in ids:
            raise ValueError(f"tokenizer: expected the tokens {GOOD!r}, {BAD!r}, {JUDGE!r} in "
                             f"the vocabulary")
        self.model, self.tokenizer, self.max_steps = model, tokenizer, int(max_steps)
        self.good_id, self.bad_id = ids[0], ids[1]

    @torch.no_grad()
    def judge(self, prompts: Sequence[str], trajectories: Sequence[str], *,
              batch_size: int = 256) -> list[list[bool]]:
        """Greedy step verdicts (True = ``GOOD``), one per step of each trajectory."""
        if len(prompts) != len(trajectories):
            raise ValueError(f"trajectories: expected {len(prompts)} (one per prompt), got "
                             f"{len(trajectories)}")
        out: list[list[bool]] = []
        for s in range(0, len(prompts), batch_size):
            out += self._judge(prompts[s:s + batch_size], trajectories[s:s + batch_size])
        return out

    def _judge(self, prompts, trajectories) -> list[list[bool]]:
        n_steps = [_n_steps(t) for t in trajectories]
        if not prompts:
            return []
        device = next(self.model.parameters()).device
        tok = self.tokenizer
        side = tok.padding_side
        tok.padding_side = "left"
        try:
            enc = tok([judge_prompt(p, t) for p, t in zip(prompts, trajectories, strict=True)],
                      return_tensors="pt", padding=True)
        finally:
            tok.padding_side = side
        ids, mask = enc["input_ids"].to(device), enc["attention_mask"].to(device)
        width = min(max(n_steps), self.max_steps)
        verdicts = torch.zeros(len(prompts), width, dtype=torch.bool)
        self.model.eval()
        from transformers import DynamicCache

        cache = DynamicCache(config=self.model.config)
        pos = (mask.cumsum(-1) - 1).clamp(min=0)
        out = self.model(input_ids=ids, attention_mask=mask, position_ids=pos,
                         past_key_values=cache, use_cache=True, logits_to_keep=1)
        next_pos = pos[:, -1:] + 1
        for t in range(width):
            logits = out.logits[:, -1].float()
            good = logits[:, self.good_id] >= logits[:, self.bad_id]
            verdicts[:, t] = good.cpu()
            if t == width - 1:
                break
            tok_ids = torch.where(good, self.good_id, self.bad_id)[:, None]
            mask = torch.cat([mask, torch.ones_like(tok_ids)], 1)
            out = self.model(input_ids=tok_ids, attention_mask=mask, position_ids=next_pos,
                             past_key_values=out.past_key_values, use_cache=True)
            next_pos = next_pos + 1
        return [verdicts[i, :min(n, width)].tolist() + [False] * max(0, n - width)
                for i, n in enumerate(n_steps)]

    def score(self, prompts: Sequence[str], trajectories: Sequence[str]) -> list[float]:
        """r(τ): the fraction of steps judged ``GOOD`` (0 for an empty trajectory)."""
        return [sum(v) / len(v) if v else 0.0 for v in self.judge(prompts, trajectories)]

    def train(self, prompts: Sequence[str], trajectories: Sequence[str],
              labels: Sequence[Sequence[bool]], *, steps: int, batch_size: int = 32,
              lr: float = 1e-3, seed: int = 0) -> list[float]:
        """SFT on critiques: cross-entropy on the verdict tokens (+ EOS) given problem and
        trajectory.  ``labels`` needs one label per step of each trajectory."""
        from optzoo.preference.steporlm import sft

        if not (len(prompts) == len(trajectories) == len(labels)):
            raise ValueError("prompts, trajectories, labels: expected equally many")
        for t, lab in zip(trajectories, labels, strict=True):
            if len(lab) != _n_steps(t):
                raise ValueError(f"labels: expected one label per step ({_n_steps(t)}) of "
                                 f"{t!r}, got {len(lab)}")
        keep = [i for i, lab in enumerate(labels) if len(lab)]
        if not keep:
            raise ValueError("trajectories: expected at least one non-empty trajectory")
        return sft(self.model, self.tokenizer,
                   [judge_prompt(prompts[i], trajectories[i]) for i in keep],
                   [verdict_text(labels[i]) for i in keep], steps=steps,
                   batch_size=batch_size, lr=lr, seed=seed)
