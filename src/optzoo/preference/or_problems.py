"""Templated OR word problems with gold models and HiGHS-verified optima, the oracle step
labels and the word-level tokenizer of StepORLM's small-scale reproduction (Zhou, Xu, Lin & Ge,
ICLR 2026, arXiv 2509.22558; brief ``steporlm.md``).

The paper's problems are teacher-written; here a generator composes them from three templates
(the brief's product-mix / diet families and a planning variant), 2–3 decision variables and
2–3 resource or nutrient constraints, integer or continuous:

* ``product_mix`` — maximise profit, one ``<=`` per resource;
* ``diet`` — minimise cost, one ``>=`` per nutrient;
* ``planning`` — product mix plus a minimum production of the first product (``>=``).

A problem carries its text (templated English with numbers, one word per token), the gold
model in :mod:`~optzoo.preference.or_modelling`'s language (the "teacher" demonstration, one
statement per step) and the gold optimum from HiGHS; draws whose gold model is not solved to
optimality with a positive optimum are rejected.

Oracle labels (evaluation and the simulated teacher only — the policy never sees them):
:func:`step_labels` marks each step of a trajectory right or wrong against the gold model (a
``C`` step is right when it equals a gold constraint not yet matched, up to term order;
``SOLVE`` is right only when the model is complete: every gold constraint present and the
integrality declared as in the gold model).  :func:`perturbed_correct` re-solves a model and
the gold one under ``k`` random objective vectors: a model with a wrong constraint that does
not bind at the original optimum ("right answer, flawed model") fails there.

Example:
    >>> from optzoo.preference.or_problems import sample_problems, step_labels
    >>> p = sample_problems(1, seed=0, families=("product_mix",))[0]
    >>> p.family, len(p.steps) >= 4, p.steps[0]
    ('product_mix', True, 'VARS x1 x2 x3')
    >>> from optzoo.preference.or_modelling import verify
    >>> verify(p.solution, p.optimum).correct, all(step_labels(p, p.solution))
    (True, True)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from optzoo.preference.or_modelling import (
    LinearModel,
    ModelError,
    parse_model,
    parse_step,
    solve_model,
    split_steps,
)

__all__ = ["FAMILIES", "PROMPT_END", "ORProblem", "VOCAB", "generate", "or_tokenizer",
           "perturbed_correct", "process_correct", "sample_problems", "step_labels"]

FAMILIES = ("product_mix", "diet", "planning")
PRODUCTS = ("chairs", "tables", "desks", "shelves", "lamps", "beds")
RESOURCES = ("labor", "wood", "steel", "paint", "glue")
FOODS = ("oats", "rice", "beans", "milk", "eggs", "corn")
NUTRIENTS = ("protein", "fiber", "iron", "calcium")
TEMPLATE_WORDS = ("factory", "makes", "and", "profit", "each", "uses", ",", "at", "most", ".",
                  "least", "whole", "units", "only", "maximize", "diet", "mixes", "cost",
                  "gives", "minimize", "of")
DSL_WORDS = ("VARS", "OBJ", "max", "min", "C", "INT", "SOLVE", ";", "+", "-", "<=", ">=", "=",
             "x1", "x2", "x3")
PROMPT_END = "=>"
JUDGE_WORDS = ("JUDGE", "GOOD", "BAD")
MAX_NUMBER = 99
VOCAB = ("<pad>", "<bos>", "<eos>", "<unk>", *TEMPLATE_WORDS, *PRODUCTS, *RESOURCES, *FOODS,
         *NUTRIENTS, *DSL_WORDS, PROMPT_END, *JUDGE_WORDS,
         *(str(i) for i in range(MAX_NUMBER + 1)))


@dataclass(frozen=True)
class ORProblem:
    """One word problem: ``prompt`` (ends with ``=>``), gold ``steps``, gold ``model`` and the
    HiGHS ``optimum``."""

    family: str
    prompt: str
    steps: tuple[str, ...]
    model: LinearModel
    optimum: float

    @property
    def solution(self) -> str:
        """The gold trajectory: the steps joined by ``;``."""
        return " ; ".join(self.steps)


def _expr(coefs: Sequence[int]) -> str:
    return " + ".join(f"{a} x{i + 1}" for i, a in enumerate(coefs))


def _and(xs) -> str:
    return " and ".join(str(x) for x in xs)


def generate(family: str, rng: np.random.Generator, *, max_vars: int = 3,
             max_constraints: int = 3, integer_share: float = 0.5) -> ORProblem | None:
    """One draw of ``family`` (None when the draw is rejected: not optimal, optimum ≤ 0)."""
    if family not in FAMILIES:
        raise ValueError(f"family: expected one of {FAMILIES}, got {family!r}")
    if not (isinstance(max_vars, int) and 2 <= max_vars <= 3):
        raise ValueError(f"max_vars: expected 2 or 3, got {max_vars!r}")
    if not (isinstance(max_constraints, int) and 2 <= max_constraints <= 3):
        raise ValueError(f"max_constraints: expected 2 or 3, got {max_constraints!r}")
    if not 0 <= integer_share <= 1:
        raise ValueError(f"integer_share: expected a number in [0, 1], got {integer_share!r}")
    n = int(rng.integers(2, max_vars + 1))
    m = int(rng.integers(2, max_constraints + 1))
    integer = bool(rng.random() < integer_share)
    c = rng.integers(1, 10, size=n).tolist()
    A = rng.integers(1, 10, size=(m, n)).tolist()
    b = rng.integers(10, 61, size=m).tolist()
    if family == "diet":
        items = [str(x) for x in rng.choice(FOODS, size=n, replace=False)]
        rows = [str(x) for x in rng.choice(NUTRIENTS, size=m, replace=False)]
        text = [f"diet mixes {_and(items)} . cost {_and(c)} each ."]
        text += [f"{r} gives {_and(a)} , at least {bb} ." for r, a, bb in zip(rows, A, b,
                                                                            strict=True)]
        sense, op, goal = "min", ">=", "minimize cost"
    else:
        items = [str(x) for x in rng.choice(PRODUCTS, size=n, replace=False)]
        rows = [str(x) for x in rng.choice(RESOURCES, size=m, replace=False)]
        text = [f"factory makes {_and(items)} . profit {_and(c)} each ."]
        text += [f"{r} uses {_and(a)} , at most {bb} ." for r, a, bb in zip(rows, A, b,
                                                                          strict=True)]
        sense, op, goal = "max", "<=", "maximize profit"
    steps = ["VARS " + " ".join(f"x{i + 1}" for i in range(n)), f"OBJ {sense} {_expr(c)}"]
    steps += [f"C {_expr(a)} {op} {bb}" for a, bb in zip(A, b, strict=True)]
    if family == "planning":
        cap = min(bb // a[0] for a, bb in zip(A, b, strict=True))
        if cap < 2:
            return None
        d = int(rng.integers(1, cap))
        text.append(f"at least {d} of {items[0]} .")
        steps.append(f"C 1 x1 >= {d}")
    if integer:
        text.append("whole units only .")
        steps.append("INT " + " ".join(f"x{i + 1}" for i in range(n)))
    steps.append("SOLVE")
    model = parse_model(" ; ".join(steps))
    sol = solve_model(model)
    if sol.status != "optimal" or not sol.objective > 0:
        return None
    prompt = " ".join([*text, goal, PROMPT_END])
    return ORProblem(family, prompt, tuple(steps), model, float(sol.objective))


def sample_problems(n: int, seed=0, *, families: Sequence[str] = FAMILIES, max_vars: int = 3,
                    max_constraints: int = 3, integer_share: float = 0.5,
                    exclude: Sequence[str] = ()) -> list[ORProblem]:
    """``n`` distinct problems (families in turn), deterministic given ``seed``; prompts in
    ``exclude`` are never returned."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"n: expected an integer >= 0, got {n!r}")
    if not families or any(f not in FAMILIES for f in families):
        raise ValueError(f"families: expected a non-empty subset of {FAMILIES}, got {families!r}")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    seen, out, tries = set(exclude), [], 0
    while len(out) < n:
        tries += 1
        if tries > 100 * n + 1000:
            raise ValueError(f"n: could not draw {n} distinct problems")
        p = generate(families[len(out) % len(families)], rng, max_vars=max_vars,
                     max_constraints=max_constraints, integer_share=integer_share)
        if p is None or p.prompt in seen:
            continue
        seen.add(p.prompt)
        out.append(p)
    return out


def step_labels(problem: ORProblem, text: str) -> list[bool]:
    """Oracle label of each step of ``text`` (see the module docstring); a step that does not
    parse is wrong."""
    gold = [parse_step(s) for s in problem.steps]
    gold_cons = [g.canonical() for g in gold if g.kind == "C"]
    gold_other = {g.kind: g.canonical() for g in gold if g.kind != "C"}
    labels, matched, has_int = [], set(), False
    for i, s in enumerate(split_steps(text)):
        try:
            st = parse_step(s, i + 1)
        except ModelError:
            labels.append(False)
            continue
        key = st.canonical()
        if st.kind == "C":
            hit = next((j for j, g in enumerate(gold_cons) if g == key and j not in matched),
                       None)
            if hit is not None:
                matched.add(hit)
            labels.append(hit is not None)
        elif st.kind == "SOLVE":
            labels.append(len(matched) == len(gold_cons) and has_int == ("INT" in gold_other))
        else:
            has_int = has_int or st.kind == "INT"
            labels.append(gold_other.get(st.kind) == key)
    return labels


def process_correct(problem: ORProblem, text: str) -> bool:
    """Every step right per the oracle and the model compiles (the process-correct rate)."""
    labels = step_labels(problem, text)
    if not labels or not all(labels):
        return False
    try:
        parse_model(text)
    except ModelError:
        return False
    return True


def perturbed_correct(problem: ORProblem, text: str, *, k: int = 3, seed: int = 0,
                      rel_tol: float = 1e-6, solve=solve_model) -> bool:
    """The model of ``text`` attains the gold optimum under the original objective, under one
    objective per variable that favours it (coefficient 10 on it, 1 on the others) and under
    ``k`` random objectives (coefficients 1–9), the same objectives for both models.

    ``solve(model) -> Solution`` is the solver (default :func:`solve_model`; a memoised one
    saves the repeated gold solves of a reproduction)."""
    try:
        model = parse_model(text)
    except ModelError:
        return False
    if set(model.variables) != set(problem.model.variables) or model.sense != problem.model.sense:
        return False
    rng = np.random.default_rng([seed, len(problem.prompt)])
    names = problem.model.variables
    objectives = [dict(problem.model.objective)]
    objectives += [{v: 10.0 if v == u else 1.0 for v in names} for u in names]
    objectives += [{v: float(rng.integers(1, 10)) for v in problem.model.variables}
                   for _ in range(k)]
    for obj in objectives:
        mine, gold = solve(model.with_objective(obj)), solve(problem.model.with_objective(obj))
        if mine.status != "optimal" or gold.status != "optimal":
            return False
        if not np.isclose(mine.objective, gold.objective, rtol=rel_tol, atol=1e-6):
            return False
    return True


def or_tokenizer():
    """A word-level ``PreTrainedTokenizerFast`` over :data:`VOCAB` (whitespace-separated words;
    ids 0–3 ``<pad>``, ``<bos>``, ``<eos>``, ``<unk>``; ``<bos>`` prepended; left padding),
    the Llama conventions of :func:`optzoo.llm.char_tokenizer`.

    Example:
        >>> from optzoo.preference.or_problems import or_tokenizer
        >>> tok = or_tokenizer()
        >>> ids = tok("VARS x1 x2 ; SOLVE", add_special_tokens=False).input_ids
        >>> tok.decode(ids)
        'VARS x1 x2 ; SOLVE'
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    vocab = {t: i for i, t in enumerate(VOCAB)}
    backend = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    backend.decoder = decoders.WordPiece(prefix="##", cleanup=False)
    backend.post_processor = processors.TemplateProcessing(
        single="<bos> $A", pair="<bos> $A $B", special_tokens=[("<bos>", vocab["<bos>"])])
    return PreTrainedTokenizerFast(tokenizer_object=backend, pad_token="<pad>",
                                   bos_token="<bos>", eos_token="<eos>", unk_token="<unk>",
                                   padding_side="left")
