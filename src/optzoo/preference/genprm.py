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

:class:`StepClassifierPRM` is the brief's discriminative baseline: a per-step classifier that
sees the problem and the steps up to the one it scores, never the rest of the trajectory.

Any causal LM with its own tokenizer can be the GenPRM (e.g. a user's local Hugging Face
folder, :func:`optzoo.llm.load_causal_lm`): ``GOOD`` and ``BAD`` must each be one token, and
the verdicts of a critique must encode to exactly those tokens.  :func:`add_verdict_tokens`
adds them to a subword tokenizer that lacks them (and resizes the model's embeddings); the
critique's separator (a space for a word-level tokenizer, none for added tokens, which a
subword tokenizer would otherwise split from a separate space token) is found at construction.

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

__all__ = ["GOOD", "BAD", "JUDGE", "GenPRM", "StepClassifierPRM", "add_verdict_tokens",
           "judge_prompt", "verdict_text"]

JUDGE, GOOD, BAD = "JUDGE", "GOOD", "BAD"


def judge_prompt(prompt: str, trajectory: str) -> str:
    """What the GenPRM reads: the problem, the trajectory and ``JUDGE``."""
    return f"{prompt} {trajectory} {JUDGE}".replace("  ", " ")


def verdict_text(labels: Sequence[bool], sep: str = " ") -> str:
    """The critique the GenPRM is trained to write for step labels (verdicts joined by
    ``sep``)."""
    return sep.join(GOOD if v else BAD for v in labels)


def _single_token(tokenizer, word: str) -> int | None:
    """The id of ``word`` when the tokenizer encodes it alone as exactly one token."""
    ids = tokenizer(word, add_special_tokens=False).input_ids
    return ids[0] if len(ids) == 1 and ids[0] != tokenizer.unk_token_id else None


def _separator(tokenizer, good: int, bad: int) -> str | None:
    """The verdict separator with which ``GOOD BAD GOOD`` encodes to exactly three tokens."""
    for sep in (" ", ""):
        if tokenizer(sep.join([GOOD, BAD, GOOD]), add_special_tokens=False).input_ids == [
                good, bad, good]:
            return sep
    return None


def add_verdict_tokens(model, tokenizer) -> int:
    """Make ``GOOD``, ``BAD`` and ``JUDGE`` single tokens of ``tokenizer`` (``add_tokens``, in
    place) and resize ``model``'s embeddings to match; returns how many tokens were added (0
    when all three already encode as one token each, e.g.
    :func:`~optzoo.preference.or_problems.or_tokenizer`)."""
    ids = [_single_token(tokenizer, w) for w in (GOOD, BAD, JUDGE)]
    if None not in ids and _separator(tokenizer, *ids[:2]) is not None:
        return 0
    added = tokenizer.add_tokens([GOOD, BAD, JUDGE])
    model.resize_token_embeddings(len(tokenizer))
    return int(added)


def _n_steps(trajectory: str) -> int:
    try:
        return len(split_steps(trajectory))
    except ValueError:
        return 0


class _StepJudge:
    """What both step judges share: batched :meth:`judge` over ``_judge``, :meth:`score`, and
    the check that ``labels`` has one label per step."""

    @torch.no_grad()
    def judge(self, prompts: Sequence[str], trajectories: Sequence[str], *,
              batch_size: int = 256) -> list[list[bool]]:
        """Step verdicts (True = ``GOOD``), one per step of each trajectory."""
        if len(prompts) != len(trajectories):
            raise ValueError(f"trajectories: expected {len(prompts)} (one per prompt), got "
                             f"{len(trajectories)}")
        out: list[list[bool]] = []
        for s in range(0, len(prompts), batch_size):
            out += self._judge(prompts[s:s + batch_size], trajectories[s:s + batch_size])
        return out

    def score(self, prompts: Sequence[str], trajectories: Sequence[str]) -> list[float]:
        """r(τ): the fraction of steps judged ``GOOD`` (0 for an empty trajectory)."""
        return [sum(v) / len(v) if v else 0.0 for v in self.judge(prompts, trajectories)]

    @staticmethod
    def _check_labels(prompts, trajectories, labels) -> None:
        if not (len(prompts) == len(trajectories) == len(labels)):
            raise ValueError("prompts, trajectories, labels: expected equally many")
        for t, lab in zip(trajectories, labels, strict=True):
            if len(lab) != _n_steps(t):
                raise ValueError(f"labels: expected one label per step ({_n_steps(t)}) of "
                                 f"{t!r}, got {len(lab)}")


class GenPRM(_StepJudge):
    """A causal LM used as a generative step judge (greedy verdicts).

    Args:
        model: a Hugging Face causal LM.
        tokenizer: its tokenizer (EOS and PAD ids), in which ``GOOD`` and ``BAD`` are single
            tokens (see :func:`add_verdict_tokens`).
        max_steps: the most verdicts written (longer trajectories: the rest count as ``BAD``).
    """

    def __init__(self, model, tokenizer, *, max_steps: int = 12):
        ids = [_single_token(tokenizer, w) for w in (GOOD, BAD)]
        sep = None if None in ids else _separator(tokenizer, *ids)
        if sep is None:
            raise ValueError(f"tokenizer: expected {GOOD!r} and {BAD!r} to encode as one token "
                             f"each, also in a sequence of verdicts (add_verdict_tokens adds "
                             f"them)")
        if tokenizer.eos_token_id is None or tokenizer.pad_token_id is None:
            raise ValueError("tokenizer: expected EOS and PAD tokens (see prepare_tokenizer)")
        self.model, self.tokenizer, self.max_steps = model, tokenizer, int(max_steps)
        self.good_id, self.bad_id = ids
        self.sep = sep

    def _judge(self, prompts, trajectories) -> list[list[bool]]:
        n_steps = [_n_steps(t) for t in trajectories]
        if not prompts:
            return []
        from optzoo.preference.steporlm import _pad, _token_ids

        device = next(self.model.parameters()).device
        tok = self.tokenizer
        # the tokenizer's own left padding, without its slow list-to-tensor conversion
        ids, mask = _pad(_token_ids(tok, [judge_prompt(p, t) for p, t in
                                          zip(prompts, trajectories, strict=True)], True),
                         tok.pad_token_id, True)
        ids, mask = ids.to(device), mask.to(device)
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

    def train(self, prompts: Sequence[str], trajectories: Sequence[str],
              labels: Sequence[Sequence[bool]], *, steps: int, batch_size: int = 32,
              lr: float = 1e-3, seed: int = 0) -> list[float]:
        """SFT on critiques: cross-entropy on the verdict tokens (+ EOS) given problem and
        trajectory.  ``labels`` needs one label per step of each trajectory."""
        from optzoo.preference.steporlm import sft

        self._check_labels(prompts, trajectories, labels)
        keep = [i for i, lab in enumerate(labels) if len(lab)]
        if not keep:
            raise ValueError("trajectories: expected at least one non-empty trajectory")
        return sft(self.model, self.tokenizer,
                   [judge_prompt(prompts[i], trajectories[i]) for i in keep],
                   [verdict_text(labels[i], self.sep) for i in keep], steps=steps,
                   batch_size=batch_size, lr=lr, seed=seed)


class StepClassifierPRM(_StepJudge):
    """The discriminative step-wise PRM baseline (brief: "discriminative step-wise PRM
    (per-step classifier) in place of the GenPRM"): a causal LM used as a binary classifier
    that scores each step *alone*, from the problem and the steps up to that one, never the
    steps after it — the myopic judge the paper contrasts with its generative,
    whole-trajectory GenPRM.  The input is ``<problem> s_1 JUDGE s_2 JUDGE … s_n JUDGE`` (each
    piece tokenised on its own, ``JUDGE`` one token); by causality the hidden state at the
    ``JUDGE`` after step i has seen the problem and steps 1..i only, so one forward scores
    every step (the step-tag layout of discriminative PRMs such as Math-Shepherd's).  The class
    is the sign of ``logit(GOOD) − logit(BAD)`` there; training is the two-way cross-entropy
    over those two logits at every tag.

    Same interface as :class:`GenPRM` (:meth:`judge`, :meth:`score`, :meth:`train`) so the
    loop and the evaluations use it unchanged.
    """

    def __init__(self, model, tokenizer, *, max_steps: int = 12):
        ids = [_single_token(tokenizer, w) for w in (GOOD, BAD, JUDGE)]
        if None in ids:
            raise ValueError(f"tokenizer: expected {GOOD!r}, {BAD!r} and {JUDGE!r} to encode as "
                             f"one token each (add_verdict_tokens adds them)")
        if tokenizer.pad_token_id is None:
            raise ValueError("tokenizer: expected a PAD token (see prepare_tokenizer)")
        self.model, self.tokenizer, self.max_steps = model, tokenizer, int(max_steps)
        self.good_id, self.bad_id, self.tag_id = ids

    def _row(self, prompt: str, trajectory: str) -> tuple[list[int], list[int]]:
        """Token ids of the tagged input and the positions of its tags (one per step)."""
        from optzoo.preference.steporlm import _token_ids

        try:
            steps = split_steps(trajectory)[:self.max_steps]
        except ValueError:
            steps = []
        (ids,) = _token_ids(self.tokenizer, [prompt], True)
        ids, tags = list(ids), []
        for piece in _token_ids(self.tokenizer, steps, False):
            ids += [*piece, self.tag_id]
            tags.append(len(ids) - 1)
        return ids, tags

    def _gaps(self, rows: list[tuple[list[int], list[int]]]) -> torch.Tensor:
        """``logit(GOOD) − logit(BAD)`` at every tag of the rows, row by row."""
        from optzoo.preference.steporlm import _pad

        device = next(self.model.parameters()).device
        ids, mask = _pad([r for r, _ in rows], self.tokenizer.pad_token_id, True)
        ids, mask = ids.to(device), mask.to(device)
        pos = (mask.cumsum(-1) - 1).clamp(min=0)
        hidden = self.model.get_decoder()(input_ids=ids, attention_mask=mask,
                                          position_ids=pos).last_hidden_state
        # the tags this class wrote (not a JUDGE a trajectory may contain), left-padded rows
        width = ids.shape[1]
        at = torch.tensor([[i, width - len(r) + j] for i, (r, tags) in enumerate(rows)
                           for j in tags], dtype=torch.long, device=device)
        # the output head only at the tags (a user's vocabulary can be large)
        logits = self.model.get_output_embeddings()(hidden[at[:, 0], at[:, 1]])
        return (logits[:, self.good_id] - logits[:, self.bad_id]).float()

    def _judge(self, prompts, trajectories) -> list[list[bool]]:
        """Each step's verdict from the problem and the steps up to it."""
        self.model.eval()
        rows = [self._row(p, t) for p, t in zip(prompts, trajectories, strict=True)]
        good = (self._gaps(rows) >= 0).tolist() if any(tags for _, tags in rows) else []
        out, at = [], 0
        for t, (_, tags) in zip(trajectories, rows, strict=True):
            n = len(tags)
            out.append(good[at:at + n] + [False] * max(0, _n_steps(t) - n))
            at += n
        return out

    def train(self, prompts: Sequence[str], trajectories: Sequence[str],
              labels: Sequence[Sequence[bool]], *, steps: int, batch_size: int = 32,
              lr: float = 1e-3, seed: int = 0) -> list[float]:
        """``steps`` AdamW steps of two-way cross-entropy at the tags of ``batch_size``
        trajectories drawn with ``seed`` (the GenPRM's batch: the same labels per step);
        ``labels`` needs one label per step."""
        import numpy as np

        self._check_labels(prompts, trajectories, labels)
        ex = []
        for p, t, lab in zip(prompts, trajectories, labels, strict=True):
            if lab:
                row = self._row(p, t)
                ex.append((row, [float(v) for v in lab[:len(row[1])]]))
        if not ex:
            raise ValueError("trajectories: expected at least one non-empty trajectory")
        rng = np.random.default_rng(seed)
        opt = torch.optim.AdamW(self.model.parameters(), lr=lr, foreach=True)
        self.model.train()
        losses = []
        for _ in range(steps):
            idx = rng.choice(len(ex), size=min(batch_size, len(ex)), replace=False)
            gap = self._gaps([ex[i][0] for i in idx])
            y = torch.tensor([v for i in idx for v in ex[i][1]], device=gap.device)
            # two-way softmax over (GOOD, BAD) = logistic loss on the logit gap
            loss = torch.nn.functional.binary_cross_entropy_with_logits(gap, y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
            opt.step()
            losses.append(float(loss.detach()))
        self.model.eval()
        return losses
