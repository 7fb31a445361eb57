"""The trusted compile helper: grammar programs and source texts become crossovers for
``run_hgs``; a wrong entry point or arity is refused up front with its reason."""

import random

import pytest

pyvrp = pytest.importorskip("pyvrp")

from optzoo.routing import generate_x_like, python_srex, run_hgs  # noqa: E402
from optzoo.routing.code_corpus import srex_source  # noqa: E402
from optzoo.routing.crossover_dsl import EXPERT, random_program, render  # noqa: E402
from optzoo.routing.operators import compile_operator  # noqa: E402
from optzoo.routing.sandbox import check_source  # noqa: E402

TWO_ARGS = "def crossover(parents, data):\n    return parents[0]\n"


def test_compiled_srex_port_runs_hgs_like_python_srex():
    data = generate_x_like(25, seed=3)
    op = compile_operator(srex_source())
    assert callable(op) and op.__name__ == "crossover"
    ours = run_hgs(data, op, iterations=40, seed=2)
    ref = run_hgs(data, python_srex, iterations=40, seed=2)
    assert ours.cost() == ref.cost() and ours.is_feasible()


def test_grammar_program_compiles_to_its_rendered_source():
    op = compile_operator(EXPERT)
    data = generate_x_like(20, seed=1)
    res = run_hgs(data, op, iterations=20, seed=0)
    assert res.is_feasible() and res.num_iterations == 20
    ns: dict = {}
    exec(render(EXPERT), ns)  # the same module text, executed by hand
    assert run_hgs(data, ns["crossover"], iterations=20, seed=0).cost() == res.cost()


def test_wrong_arity_fails_up_front_not_deep_in_the_ga():
    # the issue: without the check the GA's call raises a bare TypeError
    ns: dict = {}
    exec(TWO_ARGS, ns)
    with pytest.raises(TypeError):
        run_hgs(generate_x_like(10, seed=0), ns["crossover"], iterations=2, seed=0)
    with pytest.raises(ValueError, match=r"operator: forbidden \(line 1\).*exactly 4 positional"):
        compile_operator(TWO_ARGS)
    with pytest.raises(ValueError, match="exactly 4 positional"):
        compile_operator("def crossover(parents, data, cost_evaluator, rng, extra):\n"
                         "    return parents[0]\n")


@pytest.mark.parametrize("source, match", [
    ("x = 1\n", "no module-level 'def crossover"),
    ("def crossover(a, b, c, d)\n    return a\n", "syntax_error"),
    ("import os\ndef crossover(a, b, c, d):\n    return a[0]\n", "import of module 'os'"),
    ("", "syntax_error"),
])
def test_bad_sources_are_refused_with_the_reason(source, match):
    with pytest.raises(ValueError, match=match):
        compile_operator(source)


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="operator: expected"):
        compile_operator(42)
    with pytest.raises(ValueError, match="repair"):
        compile_operator({**EXPERT, "repair": "no-such-rule"})
    with pytest.raises(ValueError, match="'def mix"):  # entry other than crossover is looked up
        compile_operator(srex_source(), entry="mix")
    op = compile_operator("def mix(parents, data, cost_evaluator, rng):\n"
                          "    return parents[1]\n", entry="mix")
    assert op(("a", "b"), None, None, None) == "b"


def test_grammar_programs_compile_exactly_when_the_static_check_passes():
    rng = random.Random(0)
    seen = set()
    for _ in range(40):
        prog = random_program(rng)
        ok = check_source(render(prog)).ok
        seen.add(ok)
        if ok:
            assert callable(compile_operator(prog))
        else:
            with pytest.raises(ValueError, match="operator: "):
                compile_operator(prog)
    assert seen == {True, False}  # both branches were exercised
