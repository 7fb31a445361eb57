"""The OR modelling language, the problem generator and solver verification (StepORLM).

References: hand-solved LPs/MILPs (vertex enumeration by hand), ``scipy.optimize.linprog`` on
the same matrices built independently of the compiler, and brute-force enumeration of the
integer points of small MILPs."""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from optzoo.preference.or_modelling import (
    ModelError,
    parse_model,
    solve_model,
    split_steps,
    verify,
)
from optzoo.preference.or_problems import (
    VOCAB,
    generate,
    or_tokenizer,
    perturbed_correct,
    process_correct,
    sample_problems,
    step_labels,
)

KNOWN = "VARS x1 x2 ; OBJ max 3 x1 + 5 x2 ; C 2 x1 + 1 x2 <= 10 ; C 1 x1 + 3 x2 <= 12 ; SOLVE"


def test_known_lp_optimum():
    # vertices (0,0), (5,0), (0,4), (3.6, 2.8): the last gives 3·3.6 + 5·2.8 = 24.8
    sol = solve_model(parse_model(KNOWN))
    assert sol.status == "optimal"
    assert sol.objective == pytest.approx(24.8, rel=1e-9)
    assert sol.x["x1"] == pytest.approx(3.6) and sol.x["x2"] == pytest.approx(2.8)
    assert verify(KNOWN, 24.8).correct and not verify(KNOWN, 24.0).correct


def test_known_milp_optimum_by_enumeration():
    text = KNOWN.replace("SOLVE", "INT x1 x2 ; SOLVE")
    best = max(3 * a + 5 * b for a, b in itertools.product(range(6), range(5))
               if 2 * a + b <= 10 and a + 3 * b <= 12)
    assert best == 24
    assert solve_model(parse_model(text)).objective == pytest.approx(best)
    assert verify(text, 24).correct


def test_min_with_equality_and_negative_rhs():
    # min x + 2y s.t. x - y = -2 (y = x + 2), x + y >= 4 → x = 1, y = 3, value 7
    text = "VARS x y ; OBJ min x + 2 y ; C x - y = -2 ; C x + y >= 4 ; SOLVE"
    assert solve_model(parse_model(text)).objective == pytest.approx(7.0)


def test_statuses_infeasible_unbounded():
    assert verify("VARS x ; OBJ max x ; C x >= 5 ; C x <= 4 ; SOLVE", 1).status == "infeasible"
    assert verify("VARS x ; OBJ max x ; SOLVE", 1).status == "unbounded"
    assert not verify("VARS x ; OBJ max x ; SOLVE", 1).correct


@pytest.mark.parametrize("text, fragment", [
    ("", "empty"),
    ("OBJ max x ; SOLVE", "first step must declare"),
    ("VARS x ; VARS y ; OBJ max x ; SOLVE", "VARS appears twice"),
    ("VARS x ; OBJ max y ; SOLVE", "'y' is not declared"),
    ("VARS x ; OBJ max x ; OBJ min x ; SOLVE", "second objective"),
    ("VARS x ; OBJ max x ; C x <= 5", "end with SOLVE"),
    ("VARS x ; SOLVE ; OBJ max x", "SOLVE must be the last"),
    ("VARS x ; SOLVE", "no objective"),
    ("VARS x ; OBJ best x ; SOLVE", "'max' or 'min'"),
    ("VARS x ; OBJ max 3 ; SOLVE", "constant term"),
    ("VARS x ; OBJ max x + ; SOLVE", "expected a term"),
    ("VARS x ; OBJ max x x ; SOLVE", "expected '+', '-'"),
    ("VARS x ; OBJ max x ; C x <= ; SOLVE", "right-hand side"),
    ("VARS x ; OBJ max x ; C x <= nan ; SOLVE", "right-hand side"),
    ("VARS x ; OBJ max x ; C x <= 1e9 ; SOLVE", "right-hand side"),
    ("VARS x ; OBJ max x ; C x 5 ; SOLVE", "expected '+', '-' or a comparison"),
    ("VARS x ; OBJ max x ; C x <= 5 ; INT ; SOLVE", "at least one variable"),
    ("VARS x ; OBJ max x ; INT y ; SOLVE", "'y' is not declared"),
    ("VARS x x ; OBJ max x ; SOLVE", "listed twice"),
    ("VARS X ; OBJ max X ; SOLVE", "variable names"),
    ("vars x ; OBJ max x ; SOLVE", "unknown statement 'vars'"),
    ("VARS x ; OBJ max x ; SOLVE now", "no arguments"),
    ("VARS x ; OBJ max x ; C x @ 5 ; SOLVE", "comparison"),
])
def test_malformed_models_raise_clear_errors(text, fragment):
    with pytest.raises(ModelError, match=re.escape(fragment)):
        parse_model(text)
    out = verify(text, 1.0)  # verification never raises on a bad text
    assert out.status == "parse_error" and not out.correct and fragment.split("'")[0] in out.error


def test_error_names_the_step():
    with pytest.raises(ModelError, match=r"step 3 \(C\)") as exc:
        parse_model("VARS x ; OBJ max x ; C x <= ; SOLVE")
    assert exc.value.step == 3 and isinstance(exc.value, ValueError)


def test_bad_arguments():
    with pytest.raises(ValueError, match="gold_objective"):
        verify(KNOWN, float("nan"))
    with pytest.raises(ValueError, match="time_limit"):
        solve_model(parse_model(KNOWN), time_limit=0)
    with pytest.raises(ValueError, match="model"):
        solve_model("VARS x")
    with pytest.raises(ModelError, match="text"):
        split_steps(None)


def test_repeated_variable_coefficients_add_and_newlines_separate():
    m = parse_model("VARS x\nOBJ max 2 * x - x\nC x + x <= 6\nSOLVE")
    assert m.objective == (("x", 1.0),) and m.constraints[0].coeffs == (("x", 2.0),)
    assert solve_model(m).objective == pytest.approx(3.0)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000))
def test_generated_gold_models_match_linprog_and_round_trip(seed):
    """The compiler's matrices against an independent construction from the generator's
    numbers (LP relaxation via linprog ≥ MILP optimum; equal when continuous)."""
    p = sample_problems(1, seed=seed)[0]
    assert parse_model(p.model.to_text()) == p.model
    assert verify(p.solution, p.optimum).correct
    n = len(p.model.variables)
    c = np.zeros(n)
    for v, a in p.model.objective:
        c[int(v[1:]) - 1] = a
    A_ub, b_ub = [], []
    for con in p.model.constraints:
        row = np.zeros(n)
        for v, a in con.coeffs:
            row[int(v[1:]) - 1] = a
        sgn = 1 if con.sense == "<=" else -1
        A_ub.append(sgn * row)
        b_ub.append(sgn * con.rhs)
    sign = -1 if p.model.sense == "max" else 1
    lp = linprog(sign * c, A_ub=np.array(A_ub), b_ub=b_ub, bounds=[(0, None)] * n)
    relaxed = sign * lp.fun
    if p.model.integers:
        assert (relaxed >= p.optimum - 1e-7) if sign < 0 else (relaxed <= p.optimum + 1e-7)
    else:
        assert relaxed == pytest.approx(p.optimum, rel=1e-7)


def test_generator_families_and_determinism():
    a = sample_problems(9, seed=3)
    b = sample_problems(9, seed=3)
    assert [p.prompt for p in a] == [p.prompt for p in b]
    assert {p.family for p in a} == {"product_mix", "diet", "planning"}
    assert len({p.prompt for p in a}) == 9 and all(p.prompt.endswith("=>") for p in a)
    assert any(p.model.integers for p in a) and any(not p.model.integers for p in a)
    held = sample_problems(5, seed=4, exclude=[p.prompt for p in a])
    assert not {p.prompt for p in held} & {p.prompt for p in a}
    with pytest.raises(ValueError, match="family"):
        generate("knapsack", np.random.default_rng(0))
    with pytest.raises(ValueError, match="families"):
        sample_problems(1, families=("knapsack",))


def test_step_labels_and_process_correct():
    p = next(q for q in sample_problems(20, seed=5, families=("product_mix",))
             if len(q.model.constraints) >= 2)
    steps = list(p.steps)
    assert step_labels(p, p.solution) == [True] * len(steps)
    # a wrong coefficient in the first constraint: that step wrong, SOLVE wrong (incomplete)
    wrong = steps.copy()
    wrong[2] = wrong[2].replace("<=", "+ 1 x1 <=", 1)
    labels = step_labels(p, " ; ".join(wrong))
    assert labels[2] is False and labels[-1] is False and labels[0] and labels[1]
    # a missing constraint: no step wrong but SOLVE (the model is incomplete)
    missing = steps[:2] + steps[3:]
    assert step_labels(p, " ; ".join(missing))[-1] is False
    assert not process_correct(p, " ; ".join(missing))
    # reordered constraints are still right
    swapped = steps.copy()
    swapped[2], swapped[3] = swapped[3], swapped[2]
    assert all(step_labels(p, " ; ".join(swapped))) and process_correct(p, " ; ".join(swapped))
    assert step_labels(p, "garbage ; SOLVE")[0] is False


def test_right_answer_flawed_model_fails_perturbation():
    """A wrong constraint that does not bind at the optimum: the outcome is right, the
    perturbed check (other objectives) and the oracle catch it."""
    # optimum 24.8 at (3.6, 2.8); the added constraint x1 <= 4.5 is slack there
    gold_text = KNOWN
    flawed = KNOWN.replace("SOLVE", "C 1 x1 <= 4.5 ; SOLVE")
    assert verify(flawed, 24.8).correct
    from optzoo.preference.or_problems import ORProblem

    prob = ORProblem("product_mix", "p =>", tuple(split_steps(gold_text)),
                     parse_model(gold_text), 24.8)
    assert perturbed_correct(prob, gold_text, k=5)
    # the objective 10 x1 + 1 x2 (a unit direction) moves the optimum to x1 = 5 > 4.5
    assert not perturbed_correct(prob, flawed, k=0)
    assert not process_correct(prob, flawed)
    assert not perturbed_correct(prob, "not a model")


def test_tokenizer_round_trip_on_generated_text():
    tok = or_tokenizer()
    assert len(tok) == len(VOCAB) and tok.pad_token_id == 0 and tok.eos_token_id == 2
    for p in sample_problems(6, seed=7):
        for text in (p.prompt, p.solution):
            ids = tok(text, add_special_tokens=False).input_ids
            assert tok.unk_token_id not in ids
            assert tok.decode(ids) == text
