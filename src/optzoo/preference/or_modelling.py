"""A small modelling language for linear and mixed-integer programs, compiled and solved with
HiGHS — the "solver code" a StepORLM policy writes (Zhou, Xu, Lin & Ge, ICLR 2026,
arXiv 2509.22558; brief ``steporlm.md``, small-scale section).

A model is a sequence of *steps* separated by ``;`` or newlines, one statement each::

    VARS x1 x2                      declare the decision variables (all >= 0), first step
    OBJ max 3 x1 + 5 x2             the objective: max or min of a linear expression
    C 2 x1 + 1 x2 <= 10             a linear constraint: <=, >= or = a number
    INT x1 x2                       integrality of some declared variables (optional)
    SOLVE                           the last step

Grammar (each violation raises :class:`ModelError`, a ``ValueError`` that names the step and
what was expected; nothing is guessed): exactly one ``VARS`` (first) and one ``OBJ``, any
number of ``C``, at most one ``INT``, ``SOLVE`` once and last; a linear expression is
``[-] term {(+|-) term}`` with ``term = [number] [*] name`` (a repeated variable's coefficients
add up); numbers are non-negative decimals (``3``, ``2.5``: no exponents, no ``inf``/``nan``),
a constraint's right-hand side may carry a sign; every name used must be declared.

:func:`solve_model` calls :func:`scipy.optimize.milp` (HiGHS) with a time limit and reports
``optimal`` / ``infeasible`` / ``unbounded`` / ``time_limit`` / ``error``; :func:`verify`
is the outcome check of StepORLM's dual feedback: the text compiles, the solver proves
optimality, and the objective equals the gold optimum to a relative 1e-6.  A malformed model,
an infeasible or unbounded one, or a solver that runs out of time is *incorrect*, never a crash
and never a silent wrong answer.

Example:
    >>> from optzoo.preference.or_modelling import parse_model, solve_model, verify
    >>> text = ("VARS x1 x2 ; OBJ max 3 x1 + 5 x2 ; C 2 x1 + 1 x2 <= 10 ; "
    ...         "C 1 x1 + 3 x2 <= 12 ; SOLVE")
    >>> sol = solve_model(parse_model(text))
    >>> sol.status, round(sol.objective, 6)
    ('optimal', 24.8)
    >>> verify(text, 24.8).correct, verify("VARS x1 ; OBJ max x2 ; SOLVE", 1.0).error
    (True, "step 2 (OBJ): variable 'x2' is not declared in VARS")
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

__all__ = ["KEYWORDS", "Constraint", "LinearModel", "ModelError", "Outcome", "Solution",
           "parse_model", "parse_step", "solve_model", "split_steps", "verify"]

KEYWORDS = ("VARS", "OBJ", "C", "INT", "SOLVE")
SENSES = ("<=", ">=", "=")
_TOKEN = re.compile(r"\d+(?:\.\d+)?|[A-Za-z_][A-Za-z0-9_]*|<=|>=|==|=|[+\-*]|\S")
_NAME = re.compile(r"[a-z][a-z0-9_]*\Z")
_NUMBER = re.compile(r"\d+(?:\.\d+)?\Z")


class ModelError(ValueError):
    """A model text that does not compile; ``step`` is its 1-based step (None: the whole)."""

    def __init__(self, message: str, step: int | None = None, keyword: str | None = None):
        where = "" if step is None else f"step {step}" + (f" ({keyword})" if keyword else "")
        super().__init__(f"{where}: {message}" if where else message)
        self.step = step


@dataclass(frozen=True)
class Constraint:
    """``sum(coef · var) sense rhs`` with coefficients sorted by variable name."""

    coeffs: tuple[tuple[str, float], ...]
    sense: str
    rhs: float


@dataclass(frozen=True)
class Step:
    """One parsed statement: ``kind`` in :data:`KEYWORDS` and its content."""

    kind: str
    names: tuple[str, ...] = ()
    sense: str = ""
    coeffs: tuple[tuple[str, float], ...] = ()
    rhs: float = 0.0

    def canonical(self):
        """A hashable form that ignores the order of names and terms."""
        if self.kind in ("VARS", "INT"):
            return (self.kind, frozenset(self.names))
        if self.kind == "OBJ":
            return (self.kind, self.sense, self.coeffs)
        if self.kind == "C":
            return (self.kind, self.sense, self.coeffs, self.rhs)
        return (self.kind,)


@dataclass(frozen=True)
class LinearModel:
    """``sense`` (max/min) ``objective`` subject to ``constraints``, variables ≥ 0,
    ``integers`` ⊆ ``variables`` integral."""

    variables: tuple[str, ...]
    sense: str
    objective: tuple[tuple[str, float], ...]
    constraints: tuple[Constraint, ...]
    integers: frozenset[str] = frozenset()

    def matrices(self):
        """``(c, A, lb, ub, integrality)`` of ``min/max c·x s.t. lb ≤ A x ≤ ub, x ≥ 0``."""
        idx = {v: i for i, v in enumerate(self.variables)}
        c = np.zeros(len(idx))
        for v, a in self.objective:
            c[idx[v]] += a
        A = np.zeros((len(self.constraints), len(idx)))
        lb = np.full(len(self.constraints), -np.inf)
        ub = np.full(len(self.constraints), np.inf)
        for r, con in enumerate(self.constraints):
            for v, a in con.coeffs:
                A[r, idx[v]] += a
            if con.sense in ("<=", "="):
                ub[r] = con.rhs
            if con.sense in (">=", "="):
                lb[r] = con.rhs
        integrality = np.array([1 if v in self.integers else 0 for v in self.variables])
        return c, A, lb, ub, integrality

    def with_objective(self, objective: dict[str, float]) -> LinearModel:
        """The same feasible set with another objective (same sense)."""
        unknown = set(objective) - set(self.variables)
        if unknown:
            raise ValueError(f"objective: variables {sorted(unknown)} are not in the model")
        return LinearModel(self.variables, self.sense,
                           tuple(sorted((v, float(a)) for v, a in objective.items())),
                           self.constraints, self.integers)

    def to_text(self) -> str:
        """The model as steps of the language (``parse_model(m.to_text()) == m``)."""
        steps = ["VARS " + " ".join(self.variables),
                 f"OBJ {self.sense} {_expr(self.objective)}"]
        steps += [f"C {_expr(c.coeffs)} {c.sense} {_num(c.rhs)}" for c in self.constraints]
        if self.integers:
            steps.append("INT " + " ".join(v for v in self.variables if v in self.integers))
        return " ; ".join([*steps, "SOLVE"])


@dataclass(frozen=True)
class Solution:
    """HiGHS's answer: ``status`` in optimal / infeasible / unbounded / time_limit / error."""

    status: str
    objective: float | None = None
    x: dict[str, float] | None = None
    message: str = ""


@dataclass(frozen=True)
class Outcome:
    """The solver-verified outcome of one model text against a gold optimum."""

    correct: bool
    status: str
    objective: float | None = None
    error: str | None = None


def _num(a: float) -> str:
    return str(int(a)) if float(a).is_integer() else repr(float(a))


def _expr(coeffs) -> str:
    parts = []
    for i, (v, a) in enumerate(coeffs):
        sign = "-" if a < 0 else "+"
        term = f"{_num(abs(a))} {v}"
        parts.append((f"- {term}" if sign == "-" else term) if i == 0 else f"{sign} {term}")
    return " ".join(parts) if parts else "0"


def split_steps(text: str) -> list[str]:
    """The non-empty steps of a model text (separators ``;`` and newlines)."""
    if not isinstance(text, str):
        raise ModelError(f"text: expected a string, got {type(text).__name__}")
    return [s.strip() for s in re.split(r"[;\n]", text) if s.strip()]


def _parse_expr(tokens: list[str], pos: int, ctx) -> tuple[dict[str, float], int]:
    """A linear expression from ``tokens[pos:]`` up to a sense token or the end."""
    coeffs: dict[str, float] = {}
    sign, expect_term = 1.0, True
    if pos < len(tokens) and tokens[pos] == "-":
        sign, pos = -1.0, pos + 1
    while pos < len(tokens) and tokens[pos] not in (*SENSES, "=="):
        tok = tokens[pos]
        if not expect_term:
            if tok not in "+-":
                raise ctx(f"expected '+', '-' or a comparison after a term, got {tok!r}")
            sign, expect_term, pos = (1.0 if tok == "+" else -1.0), True, pos + 1
            continue
        coef = 1.0
        if _NUMBER.match(tok):
            coef, pos = float(tok), pos + 1
            if pos < len(tokens) and tokens[pos] == "*":
                pos += 1
            if pos >= len(tokens) or tokens[pos] in (*SENSES, "==", "+", "-"):
                raise ctx(f"constant term {tok} in a linear expression (every term needs a "
                          f"variable; constants belong on the right-hand side)")
            tok = tokens[pos]
        if tok in KEYWORDS or not _NAME.match(tok):
            raise ctx(f"expected a variable name, got {tok!r}")
        coeffs[tok] = coeffs.get(tok, 0.0) + sign * coef
        expect_term, pos = False, pos + 1
    if expect_term:
        raise ctx("expected a term (an expression cannot be empty or end with '+'/'-')")
    return coeffs, pos


def parse_step(step: str, index: int = 1) -> Step:
    """One statement of the language (``index``: its 1-based position, for messages).

    Raises:
        ModelError: the statement does not follow the grammar (see the module docstring).
    """
    tokens = _TOKEN.findall(step)
    if not tokens:
        raise ModelError("empty step", index)
    kw = tokens[0]
    if kw not in KEYWORDS:
        raise ModelError(f"unknown statement {kw!r} (expected one of {', '.join(KEYWORDS)})",
                         index)

    def ctx(msg):
        return ModelError(msg, index, kw)

    rest = tokens[1:]
    if kw in ("VARS", "INT"):
        if not rest:
            raise ctx("expected at least one variable name")
        bad = [t for t in rest if t in KEYWORDS or not _NAME.match(t)]
        if bad:
            raise ctx(f"expected variable names (lowercase letter, then letters, digits or "
                      f"'_'), got {bad[0]!r}")
        if len(set(rest)) != len(rest):
            raise ctx("a variable is listed twice")
        return Step(kw, names=tuple(rest))
    if kw == "SOLVE":
        if rest:
            raise ctx(f"SOLVE takes no arguments, got {' '.join(rest)!r}")
        return Step(kw)
    if kw == "OBJ":
        if not rest or rest[0] not in ("max", "min"):
            raise ctx(f"expected 'max' or 'min' after OBJ, got {rest[0] if rest else 'nothing'!r}")
        coeffs, pos = _parse_expr(rest, 1, ctx)
        if pos != len(rest):
            raise ctx(f"unexpected {rest[pos]!r} in the objective")
        return Step(kw, sense=rest[0], coeffs=tuple(sorted(coeffs.items())))
    coeffs, pos = _parse_expr(rest, 0, ctx)
    if pos >= len(rest):
        raise ctx("expected a comparison '<=', '>=' or '=' and a right-hand side")
    sense = "=" if rest[pos] == "==" else rest[pos]
    tail = rest[pos + 1:]
    rsign = 1.0
    if tail and tail[0] in "+-":
        rsign, tail = (1.0 if tail[0] == "+" else -1.0), tail[1:]
    if len(tail) != 1 or not _NUMBER.match(tail[0]):
        got = " ".join(tail) or "nothing"
        raise ctx(f"expected one number as the right-hand side, got {got!r}")
    return Step(kw, sense=sense, coeffs=tuple(sorted(coeffs.items())), rhs=rsign * float(tail[0]))


def parse_model(text: str) -> LinearModel:
    """Compile a model text into a :class:`LinearModel`.

    Raises:
        ModelError: the text does not follow the grammar; the message names the step.

    Example:
        >>> from optzoo.preference.or_modelling import parse_model
        >>> m = parse_model("VARS x y\\nOBJ min 2 x + 3 y\\nC x + y >= 4\\nINT y\\nSOLVE")
        >>> m.sense, m.objective, sorted(m.integers)
        ('min', (('x', 2.0), ('y', 3.0)), ['y'])
    """
    steps = split_steps(text)
    if not steps:
        raise ModelError("text: the model is empty (expected VARS ... ; OBJ ... ; SOLVE)")
    parsed = [parse_step(s, i + 1) for i, s in enumerate(steps)]
    if parsed[0].kind != "VARS":
        raise ModelError("the first step must declare the variables with VARS", 1,
                         parsed[0].kind)
    variables = parsed[0].names
    declared = set(variables)
    obj, cons, ints = None, [], None
    for i, st in enumerate(parsed[1:], start=2):
        if st.kind == "VARS":
            raise ModelError("VARS appears twice (declare every variable in the first step)", i,
                             "VARS")
        if st.kind == "SOLVE" and i != len(parsed):
            raise ModelError("SOLVE must be the last step", i, "SOLVE")
        names = st.names if st.kind == "INT" else tuple(v for v, _ in st.coeffs)
        undeclared = [v for v in names if v not in declared]
        if undeclared:
            raise ModelError(f"variable {undeclared[0]!r} is not declared in VARS", i, st.kind)
        if st.kind == "OBJ":
            if obj is not None:
                raise ModelError("a second objective (OBJ appears twice)", i, "OBJ")
            obj = st
        elif st.kind == "C":
            cons.append(Constraint(st.coeffs, st.sense, st.rhs))
        elif st.kind == "INT":
            if ints is not None:
                raise ModelError("INT appears twice", i, "INT")
            ints = frozenset(st.names)
    if parsed[-1].kind != "SOLVE":
        raise ModelError("the model must end with SOLVE", len(parsed), parsed[-1].kind)
    if obj is None:
        raise ModelError("no objective (expected an OBJ step)")
    return LinearModel(variables, obj.sense, obj.coeffs, tuple(cons), ints or frozenset())


def solve_model(model: LinearModel, *, time_limit: float = 2.0) -> Solution:
    """Solve with HiGHS (:func:`scipy.optimize.milp`), variables ≥ 0, within ``time_limit`` s.

    Example:
        >>> from optzoo.preference.or_modelling import parse_model, solve_model
        >>> solve_model(parse_model("VARS x ; OBJ max x ; SOLVE")).status
        'unbounded'
    """
    from scipy.optimize import Bounds, LinearConstraint, milp

    if not isinstance(model, LinearModel):
        raise ValueError(f"model: expected a LinearModel, got {type(model).__name__}")
    if not (isinstance(time_limit, int | float) and time_limit > 0):
        raise ValueError(f"time_limit: expected a positive number of seconds, got {time_limit!r}")
    c, A, lb, ub, integrality = model.matrices()
    sign = -1.0 if model.sense == "max" else 1.0
    constraints = [LinearConstraint(A, lb, ub)] if len(A) else []
    try:
        res = milp(sign * c, constraints=constraints, integrality=integrality,
                   bounds=Bounds(0, np.inf), options={"time_limit": float(time_limit)})
    except Exception as exc:  # noqa: BLE001 - a solver failure is an outcome, reported
        return Solution("error", message=f"{type(exc).__name__}: {exc}")
    if res.status == 0 and res.x is not None:
        return Solution("optimal", float(sign * res.fun),
                        {v: float(x) for v, x in zip(model.variables, res.x, strict=True)},
                        res.message)
    status = {1: "time_limit", 2: "infeasible", 3: "unbounded"}.get(res.status, "error")
    return Solution(status, message=str(res.message))


def verify(text: str, gold_objective: float, *, rel_tol: float = 1e-6, abs_tol: float = 1e-6,
           time_limit: float = 2.0) -> Outcome:
    """StepORLM's outcome check: compile ``text``, solve, compare with ``gold_objective``.

    Never raises on a bad model text: a parse error gives ``Outcome(False, "parse_error",
    error=message)``; infeasible, unbounded, time-limited or failed solves are incorrect.

    Raises:
        ValueError: ``gold_objective`` is not a finite number.
    """
    if not (isinstance(gold_objective, int | float) and math.isfinite(gold_objective)):
        raise ValueError(f"gold_objective: expected a finite number, got {gold_objective!r}")
    try:
        model = parse_model(text)
    except ModelError as exc:
        return Outcome(False, "parse_error", error=str(exc))
    sol = solve_model(model, time_limit=time_limit)
    if sol.status != "optimal":
        return Outcome(False, sol.status, error=sol.message or sol.status)
    ok = math.isclose(sol.objective, float(gold_objective), rel_tol=rel_tol, abs_tol=abs_tol)
    return Outcome(ok, "optimal", sol.objective)
