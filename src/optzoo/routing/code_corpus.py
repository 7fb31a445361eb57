"""The pretraining corpus of RFTHGS's code-writing model: Python crossover operators as text.

RFTHGS (Zhu, Zhang & Cao, ICLR 2026, OpenReview aITKXFeivk) fine-tunes an LLM that already
writes code.  No weights can be downloaded here, so :mod:`optzoo.routing.code_lm` pretrains a
small causal LM from scratch on this corpus first.  Each document is the paper's generation
prompt (:func:`optzoo.routing.lm_generator.build_prompt` on the parent operator's source) and a
completion in the paper's answer format: one or two sentences of idea, then the whole file in a
fenced ``python`` block.  Two kinds of operators make the completions:

* the programs of the grammar :mod:`optzoo.routing.crossover_dsl` (768 designs × the defect
  switches), with each defect switch on with probability ``defect_rate`` — so the pretrained
  model writes some operators that fail to compile or fail at run time, as an untuned LLM does;
* the verified Python port of PyVRP's SREX (:func:`optzoo.routing.operators.python_srex`) as a
  self-contained module, :func:`srex_source` — the expert operator.

Half of the prompts show the SREX port as the parent, as the paper's first prompts do; the child
is then a fresh grammar program (or the port itself).  The other half show a grammar program and
the child is an edit of it (:func:`mutate`: one or two design slots changed, the defect switches
redrawn), with the changes named in the idea — RFTHGS's operator cache re-samples parents, so
the model must read the parent it is given.

Augmentations (each behaviour-preserving, checked by the tests on real HGS parents with the same
random stream): consistent renaming of the operator's own identifiers (never the entry point
``crossover`` or its four parameters, never imported or built-in names), shuffling the order of
the module-level helper functions, equivalent idioms (``range(n)`` ↔ ``range(0, n)``,
``x += k`` ↔ ``x = x + k`` for integer literals, ``a if c else b`` ↔ ``b if not c else a``),
and comment lines from a small bank; with probability ``modify_rate`` the lines that differ
from the parent are marked ``# MODIFY:`` as the prompt's rule 3 asks.  Augmented text goes
through ``ast.unparse`` (PEP 8-like, docstrings and annotations dropped); a share of documents
keeps the grammar's own rendering.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import random as _random
from collections.abc import Mapping
from dataclasses import dataclass

from optzoo.routing import crossover_dsl as dsl
from optzoo.routing.lm_generator import build_prompt

ENTRY = "crossover"
ENTRY_ARGS = ("parents", "data", "cost_evaluator", "rng")

_NAME_POOL = (
    "routes", "route", "visits", "clients", "client", "moved", "window", "start", "stop",
    "idx", "pos", "best", "cost", "order", "chosen", "kept", "lost", "rest", "child", "other",
    "load", "cap", "cent", "angle", "dist", "near", "pick", "seg", "tmp", "acc", "count",
    "left", "right", "head", "tail", "pool", "slot", "cand", "score", "gain",
)
_COMMENTS = (
    "# choose the routes that move between the parents",
    "# keep the child feasible for the fleet",
    "# routes are compared by their centroids",
    "# clients left out are inserted by the local search",
    "# build the offspring solution",
    "# sort by polar angle around the depot centroid",
    "# penalised cost decides between the two children",
    "# merge the lightest routes when there are too many",
    "# window of consecutive routes",
    "# demand of each client",
)


@dataclass(frozen=True)
class Document:
    """One training document: the prompt (context only), the completion (the target text),
    the operator's source inside it, what made it (``"grammar"``: a fresh grammar program for
    the SREX parent, ``"srex"``: the port itself, ``"edit"``: an edit of a grammar parent), the
    grammar program (None for the port) and the parent's source shown in the prompt."""

    prompt: str
    completion: str
    source: str
    kind: str
    program: Mapping[str, str] | None = None
    parent: str = ""


class _StripTypes(ast.NodeTransformer):
    """Drop docstrings and annotations, so the text is plain, self-contained Python."""

    def visit_FunctionDef(self, node):
        self.generic_visit(node)
        node.returns = None
        for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs):
            a.annotation = None
        body = node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            node.body = body[1:] or [ast.Pass()]
        return node

    def visit_AnnAssign(self, node):
        if node.value is None:
            return None
        return ast.copy_location(ast.Assign(targets=[node.target], value=node.value), node)


def srex_source() -> str:
    """The verified SREX port as a module that defines ``crossover(parents, data,
    cost_evaluator, rng)`` and imports only ``math`` and ``pyvrp`` (no annotations)."""
    from optzoo.routing import operators

    text = "\n\n".join(inspect.getsource(f) for f in (operators._sorted_by_angle,
                                                     operators.python_srex))
    tree = _StripTypes().visit(ast.parse(text))
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "python_srex":
            node.name = ENTRY
    tree.body[:0] = ast.parse("import math\n\nfrom pyvrp import Route, Solution").body
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def _bound_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            names.add(node.name)
            names.update(a.arg for a in (*node.args.posonlyargs, *node.args.args,
                                         *node.args.kwonlyargs))
        elif isinstance(node, ast.Lambda):
            names.update(a.arg for a in node.args.args)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    imported = {(a.asname or a.name).split(".")[0] for node in ast.walk(tree)
                if isinstance(node, ast.Import | ast.ImportFrom) for a in node.names}
    return names - imported - set(dir(builtins)) - {ENTRY, *ENTRY_ARGS, "_"}


class _Rename(ast.NodeTransformer):
    def __init__(self, mapping: Mapping[str, str]):
        self.mapping = mapping

    def visit_Name(self, node):
        node.id = self.mapping.get(node.id, node.id)
        return node

    def visit_arg(self, node):
        node.arg = self.mapping.get(node.arg, node.arg)
        return node

    def visit_FunctionDef(self, node):
        node.name = self.mapping.get(node.name, node.name)
        self.generic_visit(node)
        return node


class _Idioms(ast.NodeTransformer):
    def __init__(self, rng: _random.Random, p: float):
        self.rng, self.p = rng, p

    def visit_Call(self, node):
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id == "range" and not node.keywords \
                and self.rng.random() < self.p:
            if len(node.args) == 1:
                node.args = [ast.Constant(0), node.args[0]]
            elif len(node.args) == 2 and isinstance(node.args[0], ast.Constant) \
                    and node.args[0].value == 0 and type(node.args[0].value) is int:
                node.args = [node.args[1]]
        return node

    def visit_AugAssign(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.Add) and isinstance(node.target, ast.Name) \
                and isinstance(node.value, ast.Constant) and type(node.value.value) is int \
                and self.rng.random() < self.p:
            value = ast.BinOp(ast.Name(node.target.id, ast.Load()), ast.Add(), node.value)
            return ast.copy_location(ast.Assign([ast.Name(node.target.id, ast.Store())], value),
                                     node)
        return node

    def visit_IfExp(self, node):
        self.generic_visit(node)
        if self.rng.random() < self.p:
            return ast.copy_location(ast.IfExp(ast.UnaryOp(ast.Not(), node.test), node.orelse,
                                               node.body), node)
        return node


def augment(source: str, rng: _random.Random, *, rename: float = 0.5, reorder: bool = True,
            idioms: float = 0.3, comments: float = 0.15) -> str:
    """A behaviour-preserving rewrite of an operator's ``source`` (see the module docstring).

    Args:
        source: a module defining ``crossover`` (it must parse).
        rng: the randomness of the rewrite.
        rename: probability of renaming each of the operator's own identifiers.
        reorder: shuffle the module-level helper functions.
        idioms: probability of each equivalent-idiom rewrite.
        comments: probability of a comment line before each line.

    Raises:
        ValueError: ``source`` does not parse.
    """
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise ValueError(f"source: expected Python that parses ({exc.msg}, line "
                         f"{exc.lineno})") from None
    tree = _StripTypes().visit(tree)
    names = sorted(_bound_names(tree))
    taken = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | set(names) \
        | set(dir(builtins))
    mapping = {}
    for name in names:
        if rng.random() >= rename:
            continue
        for _ in range(50):
            new = f"{rng.choice(_NAME_POOL)}_{rng.randrange(10)}"
            new = "_" + new if name.startswith("_") else new
            if new not in taken:
                taken.add(new)
                mapping[name] = new
                break
    tree = _Rename(mapping).visit(tree)
    tree = _Idioms(rng, idioms).visit(tree)
    if reorder:
        head = [s for s in tree.body if not isinstance(s, ast.FunctionDef)]
        helpers = [s for s in tree.body if isinstance(s, ast.FunctionDef) and s.name != ENTRY]
        entry = [s for s in tree.body if isinstance(s, ast.FunctionDef) and s.name == ENTRY]
        rng.shuffle(helpers)
        tree.body = head + helpers + entry
    lines = ast.unparse(ast.fix_missing_locations(tree)).splitlines()
    out = []
    for line in lines:
        stripped = line.lstrip()
        if stripped and not stripped.startswith(("import ", "from ")) \
                and rng.random() < comments:
            out.append(line[:len(line) - len(stripped)] + rng.choice(_COMMENTS))
        out.append(line)
    return "\n".join(out) + "\n"


def mark_modified(source: str, parent: str) -> str:
    """``source`` with ``  # MODIFY:`` after every code line that is not a line of ``parent``
    (the prompt's rule 3); comment and blank lines are left alone."""
    seen = {line.strip() for line in parent.splitlines()}
    out = []
    for line in source.splitlines():
        s = line.strip()
        if s and not s.startswith("#") and s not in seen:
            line += "  # MODIFY: changed"
        out.append(line)
    return "\n".join(out) + "\n"


_IDEA_ORDER = {"angle": "orders each parent's routes by the polar angle of their centroid",
               "stored": "keeps each parent's routes in their stored order"}
_IDEA_CHOICE = {"consecutive": "exchanges a window of consecutive routes",
                "nearest": "pairs each chosen route with the other parent's nearest route",
                "random": "exchanges random subsets of routes"}
_IDEA_MERGE = {"replace": "replaces the second parent's chosen routes",
               "keep": "keeps every route of the second parent and strips the moved clients"}
_IDEA_REPAIR = {"none": "leaves lost clients to the local search",
                "append": "appends lost clients to the least-loaded route",
                "cheapest": "inserts lost clients greedily at their cheapest position",
                "nearest_route": "puts lost clients on the route with the nearest centroid"}


def idea(program: Mapping[str, str]) -> str:
    """The completion's opening sentences for a grammar program."""
    p = dsl.validate(program)
    kids = "tries both parent orders and keeps the cheaper child" \
        if p["children"] == "best_of_two" else "builds one child"
    return (f"The operator {_IDEA_ORDER[p['order']]} and {_IDEA_CHOICE[p['choice']]}. It "
            f"{_IDEA_MERGE[p['merge']]}, {_IDEA_REPAIR[p['repair']]} and {kids}.")


SREX_IDEA = ("The operator keeps SREX: windows of consecutive routes sorted by angle, shifted "
             "while that lowers the clients to re-plan. Both children are built and the cheaper "
             "one is returned.")

_DEFECTS = {"syntax": "broken", "indexing": "unchecked", "returns": "routes",
            "fleet": "unchecked"}


def sample_program(rng: _random.Random, defect_rate: float) -> dict[str, str]:
    """A grammar program: design slots uniform, each defect switch on w.p. ``defect_rate``."""
    program = {slot: rng.choice(choices) for slot, choices in dsl.SLOTS.items()
               if slot not in _DEFECTS}
    for slot, bad in _DEFECTS.items():
        good = next(c for c in dsl.SLOTS[slot] if c != bad)
        program[slot] = bad if rng.random() < defect_rate else good
    return dsl.validate(program)


def completion_text(idea_text: str, source: str) -> str:
    """The paper's answer format: the idea, then the whole file in one fenced block."""
    return f"{idea_text}\n\n```python\n{source.rstrip()}\n```\n"


def mutate(program: Mapping[str, str], rng: _random.Random, defect_rate: float,
           max_changes: int = 2) -> dict[str, str]:
    """An edit of a grammar program: 1..``max_changes`` design slots changed to another choice,
    each defect switch redrawn with ``defect_rate`` (an LLM's rewrite of its parent)."""
    child = dict(dsl.validate(program))
    design = [s for s in dsl.SLOTS if s not in _DEFECTS]
    for slot in rng.sample(design, rng.randint(1, max_changes)):
        child[slot] = rng.choice([c for c in dsl.SLOTS[slot] if c != child[slot]])
    for slot, bad in _DEFECTS.items():
        good = next(c for c in dsl.SLOTS[slot] if c != bad)
        child[slot] = bad if rng.random() < defect_rate else good
    return child


def _changes(parent: Mapping[str, str], child: Mapping[str, str]) -> str:
    moved = [f"{s} {parent[s]} -> {child[s]}" for s in dsl.SLOTS
             if s not in _DEFECTS and parent[s] != child[s]]
    return ("Changes: " + ", ".join(moved) + ". ") if moved else ""


def documents(n: int, seed: int = 0, *, defect_rate: float = 0.15, srex_parent: float = 0.5,
              srex_share: float = 0.1, augment_share: float = 0.7,
              modify_rate: float = 0.3) -> list[Document]:
    """``n`` training documents (deterministic in ``seed``).

    The parent of the prompt is the SREX port (probability ``srex_parent``; the child is then
    a fresh grammar program, or the port itself with probability ``srex_share``) or a grammar
    program, whose child is then :func:`mutate`'s edit of it — so the model learns to rewrite
    the operator it is shown, as RFTHGS's cache re-samples parents.

    Args:
        n: number of documents.
        seed: their randomness.
        defect_rate: probability of each defect switch of a grammar child.
        srex_parent: share of prompts whose parent is the SREX port.
        srex_share: share of SREX-parent documents whose completion is the port itself.
        augment_share: share of parents and completions rewritten by :func:`augment`.
        modify_rate: share of completions with ``# MODIFY:`` marks (against the parent).
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n: expected an integer >= 1, got {n!r}")
    for name, v in (("defect_rate", defect_rate), ("srex_parent", srex_parent),
                    ("srex_share", srex_share), ("augment_share", augment_share),
                    ("modify_rate", modify_rate)):
        if not 0 <= v <= 1:
            raise ValueError(f"{name}: expected a probability in [0, 1], got {v!r}")
    rng = _random.Random(seed)
    srex = srex_source()
    srex_prompt = build_prompt(srex)

    def maybe_augment(text, program):
        if rng.random() < augment_share and (program is None or program["syntax"] == "ok"):
            return augment(text, rng)
        return text

    out = []
    for _ in range(n):
        if rng.random() < srex_parent:
            parent_text, prompt = srex, srex_prompt
            if rng.random() < srex_share:
                program, kind, why = None, "srex", SREX_IDEA
                text = srex
            else:
                program = sample_program(rng, defect_rate)
                kind, why, text = "grammar", idea(program), dsl.render(program)
        else:
            parent_program = sample_program(rng, 0.0)
            parent_text = maybe_augment(dsl.render(parent_program), parent_program)
            prompt = build_prompt(parent_text)
            program = mutate(parent_program, rng, defect_rate)
            kind, text = "edit", dsl.render(program)
            why = _changes(parent_program, program) + idea(program)
        text = maybe_augment(text, program)
        if rng.random() < modify_rate:
            text = mark_modified(text, parent_text)
        out.append(Document(prompt, completion_text(why, text), text, kind, program,
                            parent_text))
    return out
