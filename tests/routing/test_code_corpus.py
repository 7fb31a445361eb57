"""The code corpus of RFTHGS's code LM: the SREX text equals the verified port, every
augmentation keeps the operator's behaviour, documents are the paper's prompt/answer format."""

from __future__ import annotations

import ast
import random

import pytest
from pyvrp import CostEvaluator, RandomNumberGenerator, Solution

from optzoo.routing import code_corpus as cc
from optzoo.routing import crossover_dsl as dsl
from optzoo.routing import generate_x_like
from optzoo.routing.lm_generator import build_prompt, extract_code
from optzoo.routing.operators import python_srex
from optzoo.routing.sandbox import check_source

DATA = generate_x_like(40, seed=3)


def _children(op, seeds=range(5)):
    """What ``op`` returns on random parent pairs, each pair with its own random stream."""
    out = []
    for s in seeds:
        r = RandomNumberGenerator(seed=s)
        a, b = Solution.make_random(DATA, r), Solution.make_random(DATA, r)
        try:
            child = op((a, b), DATA, CostEvaluator([20.0], 6.0, 0.0), r)
            out.append([list(x.visits()) for x in child.routes()]
                       if hasattr(child, "routes") else repr(type(child)))
        except Exception as exc:  # a defective program's failure is part of its behaviour
            out.append(type(exc).__name__)
    return out


def _compiled(source):
    namespace = {}
    exec(compile(source, "<operator>", "exec"), namespace)
    return namespace["crossover"]


def test_srex_source_is_the_verified_port():
    src = cc.srex_source()
    assert check_source(src).ok
    assert _children(_compiled(src)) == _children(python_srex)
    tree = ast.parse(src)
    assert not any(isinstance(n, ast.AnnAssign) or (isinstance(n, ast.arg) and n.annotation)
                   for n in ast.walk(tree))


@pytest.mark.parametrize("seed", range(6))
def test_augment_keeps_behaviour_of_grammar_programs(seed):
    rng = random.Random(seed)
    program = cc.sample_program(rng, defect_rate=0.3)
    program["syntax"] = "ok"
    src = dsl.render(program)
    aug = cc.augment(src, rng, rename=1.0, idioms=1.0, comments=0.3)
    assert aug != src and check_source(aug).ok
    assert _children(_compiled(aug)) == _children(_compiled(src))


def test_augment_keeps_behaviour_of_srex_and_entry_point():
    src = cc.srex_source()
    for seed in range(3):
        aug = cc.augment(src, random.Random(seed), rename=1.0, idioms=1.0)
        entry = next(n for n in ast.parse(aug).body
                     if isinstance(n, ast.FunctionDef) and n.name == "crossover")
        assert [a.arg for a in entry.args.args] == list(cc.ENTRY_ARGS)
        assert "import math" in aug and "Solution" in aug  # imported names are never renamed
        assert _children(_compiled(aug)) == _children(python_srex)


def test_augment_rewrites_idioms_both_ways():
    src = "def crossover(parents, data, cost_evaluator, rng):\n" \
          "    k = 0\n    k += 2\n    a = [i for i in range(3)] if k else []\n" \
          "    b = list(range(0, 4))\n    return (a, b, k)\n"
    aug = cc.augment(src, random.Random(0), rename=0.0, idioms=1.0, comments=0.0,
                     reorder=False)
    assert "k = k + 2" in aug and "range(0, 3)" in aug and "range(4)" in aug
    assert "if not k else" in aug
    assert _compiled(aug)(None, None, None, None) == _compiled(src)(None, None, None, None)


def test_augment_rejects_source_that_does_not_parse():
    with pytest.raises(ValueError, match="source: expected Python that parses"):
        cc.augment("def crossover(:\n", random.Random(0))


def test_mark_modified_marks_only_new_code_lines():
    parent = "x = 1\ny = 2\n"
    out = cc.mark_modified("x = 1\n# note\nz = 3\n", parent).splitlines()
    assert out == ["x = 1", "# note", "z = 3  # MODIFY: changed"]


def test_documents_are_deterministic_and_in_the_answer_format():
    docs = cc.documents(12, seed=5)
    again = cc.documents(12, seed=5)
    assert [d.completion for d in docs] == [d.completion for d in again]
    assert [d.completion for d in cc.documents(12, seed=6)] != [d.completion for d in docs]
    for d in docs:
        assert d.prompt == build_prompt(d.parent)
        assert extract_code(d.completion).strip() == d.source.strip()
        assert d.completion.index("```python") > 0  # the idea comes first
    assert {d.kind for d in docs} >= {"edit", "grammar"}
    srex = cc.srex_source()
    assert {d.parent == srex for d in docs} == {True, False}


def test_edits_change_one_or_two_design_slots_of_their_parent():
    rng = random.Random(1)
    for _ in range(30):
        parent = cc.sample_program(rng, 0.0)
        child = cc.mutate(parent, rng, defect_rate=0.0)
        changed = [s for s in dsl.SLOTS if parent[s] != child[s]]
        assert 1 <= len(changed) <= 2 and not set(changed) & set(cc._DEFECTS)
    edits = [d for d in cc.documents(20, 2, srex_parent=0.0, augment_share=0.0)]
    assert {d.kind for d in edits} == {"edit"}
    assert all(d.completion.startswith("Changes: ") for d in edits)


def test_defect_rate_controls_the_share_of_defective_programs():
    clean = cc.documents(30, 0, defect_rate=0.0, srex_share=0.0)
    assert all(d.program is not None for d in clean)
    assert all(check_source(d.source).ok for d in clean)
    assert all(d.program["syntax"] == "ok" and d.program["returns"] == "solution"
               for d in clean)
    broken = cc.documents(30, 0, defect_rate=1.0, srex_share=0.0, augment_share=0.0)
    assert all(check_source(d.source).status == "syntax_error" for d in broken)
    srex = cc.documents(5, 0, srex_parent=1.0, srex_share=1.0, augment_share=0.0,
                        modify_rate=0.0)
    assert {d.kind for d in srex} == {"srex"} and srex[0].source == cc.srex_source()


def test_documents_reject_bad_arguments():
    with pytest.raises(ValueError, match="n: expected an integer >= 1"):
        cc.documents(0)
    with pytest.raises(ValueError, match="defect_rate: expected a probability"):
        cc.documents(3, defect_rate=1.5)
