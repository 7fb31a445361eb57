"""Verifiable tasks: rewards on hand-worked examples (malformed completions, leading zeros,
Countdown's division and subtraction rules), demonstrations graded correct at every level,
determinism per seed, disjoint splits, and TRL's reward-function convention."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from optzoo.llm import Addition, Countdown, Grade, Mixture, Multiplication, Problem, Task


@pytest.mark.parametrize("completion, expected", [
    ("357", 1.0), (" 357\n", 1.0), ("0357", 0.0), ("+357", 0.0), ("3 57", 0.0), ("356", 0.0),
    ("357.0", 0.0), ("", 0.0), ("357=", 0.0), ("thirty", 0.0)])
def test_addition_reward_hand_worked(completion, expected):
    assert Addition(digits=3).reward(["12+345="], [completion]) == [expected]


def test_addition_edge_values_and_operand_count():
    task = Addition()
    assert task.reward(["0+0=", "0+0=", "999+1=", "12+35+8="], ["0", "00", "1000", "55"]) == [
        1.0, 0.0, 1.0, 1.0]


def test_format_reward_only_for_well_formed_wrong_answers():
    task = Addition(format_reward=0.1)
    assert task.reward(["12+345="] * 4, ["357", "356", "0357", "x"]) == [1.0, 0.1, 0.0, 0.0]
    with pytest.raises(ValueError, match="format_reward"):
        Addition(format_reward=1.0)


@pytest.mark.parametrize("completion, expected", [
    ("12+35=47;47+8=55", 1.0),
    ("12 + 35 = 47; 47 + 8 = 55", 1.0),
    ("12+35=46;46+9=55", 1.0),       # sparse reward: the final number only
    ("12+35=47;47+8=56", 0.0),
    ("55", 0.0),                      # no steps: malformed in the chain format
    ("12+35=47;", 0.0),
    ("12+35=47;47+8=055", 0.0),
    ("12*35=47;47+8=55", 0.0),        # wrong operator
])
def test_addition_chain_format(completion, expected):
    assert Addition(operands=3, steps=True).reward(["12+35+8="], [completion]) == [expected]


def test_multiplication_hand_worked():
    task = Multiplication(digits=2)
    assert task.reward(["12*34=", "12*34=", "99*99=", "7*0=", "7*0="],
                       ["408", "0408", "9801", "0", "00"]) == [1.0, 0.0, 1.0, 1.0, 0.0]
    chain = Multiplication(digits=1, operands=3, steps=True)
    assert chain.reward(["2*3*4="] * 2, ["2*3=6;6*4=24", "2*3=6;6*4=25"]) == [1.0, 0.0]


def test_foreign_prompt_is_an_error():
    with pytest.raises(ValueError, match="prompt"):
        Addition().reward(["12*34="], ["408"])
    with pytest.raises(ValueError, match="prompt"):
        Countdown().reward(["12+34="], ["46"])


@pytest.mark.parametrize("completion, expected", [
    ("7*3=21;25+21=46", 1.0),
    ("3*7=21;21+25=46", 1.0),
    (" 7 * 3 = 21 ; 25 + 21 = 46 ", 1.0),
    ("7+3=21;25+21=46", 0.0),         # a false step
    ("7*3=21;25+21=46;", 0.0),        # trailing separator: malformed
    ("07*3=21;25+21=46", 0.0),        # leading zero
    ("25+7*3", 0.0),                  # an expression is not the steps format
    ("25+21=46", 0.0),                # 21 is not available
    ("7*3=21;21+21=42", 0.0),
    ("", 0.0),
])
def test_countdown_steps_hand_worked(completion, expected):
    assert Countdown().reward(["3,7,25:46="], [completion]) == [expected]


def test_countdown_number_use_rules():
    use_all, at_most_once = Countdown(), Countdown(use_all=False)
    # 5 unused: fails "exactly once", passes "at most once"
    assert use_all.reward(["2,5,7:14="], ["7*2=14"]) == [0.0]
    assert at_most_once.reward(["2,5,7:14="], ["7*2=14"]) == [1.0]
    # 7 used twice: fails both
    assert use_all.reward(["2,5,7:49="], ["7*7=49"]) == [0.0]
    assert at_most_once.reward(["2,5,7:49="], ["7*7=49"]) == [0.0]
    # a repeated given number may be used as often as it is given
    assert use_all.reward(["3,3,5:45="], ["3*3=9;9*5=45"]) == [1.0]
    # an intermediate result is consumed when used
    assert use_all.reward(["2,3,4:24="], ["2*3=6;6*4=24"]) == [1.0]
    assert at_most_once.reward(["2,3,4:36="], ["2*3=6;6*6=36"]) == [0.0]


def test_countdown_division_and_subtraction_rules():
    steps = Countdown()
    expr = Countdown(answer_format="expression")
    assert steps.reward(["4,8,3:6="], ["8/4=2;2*3=6"]) == [1.0]
    assert expr.reward(["4,8,3:6="], ["8/4*3"]) == [1.0]
    # inexact division: 7/2 is not an integer (TinyZero's rational Countdown would accept it)
    assert steps.reward(["2,7,4:14="], ["7/2=3;3*4=14"]) == [0.0]
    assert expr.reward(["2,7,4:14="], ["7/2*4"]) == [0.0]
    assert expr.reward(["2,7,4:14="], ["(7/2)*4"]) == [0.0]
    # non-positive intermediate results are not allowed (so nothing is ever divided by 0)
    assert steps.reward(["3,3,5:5="], ["3-3=0;5+0=5"]) == [0.0]
    assert expr.reward(["3,10,20:13="], ["3-10+20"]) == [0.0]
    assert expr.reward(["3,10,20:13="], ["20-(10-3)"]) == [1.0]
    assert expr.reward(["3,10,20:13="], ["20-10-3"]) == [0.0]   # left-associative: 7
    assert steps.reward(["2,6,3:1="], ["6/2=3;3/3=1"]) == [1.0]


@pytest.mark.parametrize("completion, expected", [
    ("25+7*3", 1.0), ("(25+7*3)", 1.0), ("25 + 7 * 3", 1.0), ("3*7+25", 1.0),
    ("(25+7)*3", 0.0), ("25+7*3)", 0.0), ("25+-7*3", 0.0), ("25+07*3", 0.0), ("25+21", 0.0),
    ("2 5+7*3", 0.0), ("", 0.0), ("25+7*3=46", 0.0)])
def test_countdown_expression_hand_worked(completion, expected):
    assert Countdown(answer_format="expression").reward(["3,7,25:46="], [completion]) == [
        expected]


def test_countdown_grades_syntax_apart_from_rules():
    task = Countdown(format_reward=0.1)
    assert task.grade("3,7,25:46=", "7*3=21;25+21=47") is Grade.WELL_FORMED
    assert task.grade("3,7,25:46=", "7/2=3;25+3=28") is Grade.WELL_FORMED
    assert task.grade("3,7,25:46=", "25+7*3") is Grade.MALFORMED
    assert task.reward(["3,7,25:46="] * 3, ["7*3=21;25+21=46", "7*3=21;25+21=47", "x"]) == [
        1.0, 0.1, 0.0]


@pytest.mark.parametrize("task", [
    *(Addition.from_level(k) for k in Addition.LEVELS),
    *(Multiplication.from_level(k) for k in Multiplication.LEVELS),
    *(Countdown.from_level(k) for k in Countdown.LEVELS),
    *(Countdown.from_level(k, answer_format="expression") for k in Countdown.LEVELS),
    Addition(digits=(1, 4), operands=(2, 4), steps=True),
    Multiplication(digits=(1, 2), operands=3, steps=True),
    Countdown(count=(2, 5), max_number=30, use_all=False),
], ids=repr)
def test_demonstrations_are_correct_and_deterministic(task):
    problems = task.sample(60, seed=3)
    assert all(isinstance(p, Problem) for p in problems)
    assert task.reward([p.prompt for p in problems], [p.answer for p in problems]) == [1.0] * 60
    assert task.sample(60, seed=3) == problems
    assert task.sample(60, seed=4) != problems


def test_operand_ranges_follow_digits_and_operands():
    problems = Addition(digits=3, operands=(2, 4)).sample(300, seed=0)
    ops = [p.prompt[:-1].split("+") for p in problems]
    assert all(100 <= int(x) <= 999 for o in ops for x in o)
    assert {len(o) for o in ops} == {2, 3, 4}
    one = [int(x) for p in Addition(digits=1).sample(300, seed=0) for x in p.prompt[:-1].split("+")]
    assert min(one) == 0 and max(one) == 9


def test_countdown_generation_respects_its_parameters():
    task = Countdown(count=4, max_number=25, max_target=200)
    for p in task.sample(100, seed=1):
        nums, target = p.prompt[:-1].split(":")
        nums = [int(x) for x in nums.split(",")]
        assert len(nums) == 4 and all(1 <= x <= 25 for x in nums)
        assert int(target) <= 200 and int(target) not in nums
        assert p.answer.count(";") == 2   # three steps combine four numbers


def test_split_is_disjoint_and_unique():
    train, test = Addition(digits=2).split(500, 200, seed=0)
    tr, te = {p.prompt for p in train}, {p.prompt for p in test}
    assert len(tr) == 500 and len(te) == 200 and not tr & te
    assert Addition(digits=2).split(500, 200, seed=0) == (train, test)
    with pytest.raises(ValueError, match="too few distinct prompts"):
        Addition(digits=1).split(90, 20, seed=0)   # only 100 distinct 1-digit sums


def test_trl_reward_convention():
    task = Addition()
    # TRL passes extra columns (completion_ids, trainer_state, ...) as keyword arguments
    assert task.reward(prompts=["1+2="], completions=["3"], completion_ids=[[7]],
                       trainer_state=None) == [1.0]
    conv_prompt = [{"role": "user", "content": "1+2="}]
    conv_completion = [{"role": "assistant", "content": "3"}]
    assert task.reward([conv_prompt], [conv_completion]) == [1.0]
    with pytest.raises(ValueError, match="completions"):
        task.reward(["1+2=", "2+2="], ["3"])
    with pytest.raises(TypeError, match="completions"):
        task.reward(["1+2="], [3])
    with pytest.raises(TypeError):
        task.reward("1+2=", "3")


def test_mixture_dispatches_and_samples_by_weight():
    mix = Mixture((Addition(digits=1), Multiplication(digits=1), Countdown.from_level(1)),
                  weights=(2, 1, 1))
    assert mix.reward(["3+4=", "3*4=", "3,4:12="], ["7", "12", "4*3=12"]) == [1.0, 1.0, 1.0]
    kinds = [("*" in p.prompt, ":" in p.prompt) for p in mix.sample(400, seed=0)]
    frac_add = sum(k == (False, False) for k in kinds) / 400
    assert 0.4 < frac_add < 0.6
    with pytest.raises(ValueError, match="matches no task"):
        Mixture((Addition(),)).reward(["3*4="], ["12"])
    with pytest.raises(ValueError, match="weights"):
        Mixture((Addition(),), weights=(1, 2))


def test_tasks_validate_their_arguments():
    with pytest.raises(ValueError, match="digits"):
        Addition(digits=0)
    with pytest.raises(ValueError, match="digits"):
        Addition(digits=(3, 2))
    with pytest.raises(ValueError, match="operands"):
        Multiplication(operands=1)
    with pytest.raises(ValueError, match="answer_format"):
        Countdown(answer_format="rpn")
    with pytest.raises(ValueError, match="level"):
        Addition.from_level(0)
    with pytest.raises(ValueError, match="seed"):
        Addition().sample(3, seed=-1)
    with pytest.raises(ValueError, match="n:"):
        Addition().sample(-1)


def test_spec_identifies_the_task():
    a, b = Addition(digits=(2, 3)), Addition(digits=(2, 3), steps=True)
    assert a.spec() == Addition(digits=(2, 3)).spec() != b.spec()
    assert a.spec()["task"] == "Addition" and a.spec()["digits"] == [2, 3]
    assert Mixture((a, b)).spec()["tasks"] == [a.spec(), b.spec()]
    assert hash(a) == hash(Addition(digits=(2, 3)))


@given(st.lists(st.integers(0, 10 ** 6), min_size=2, max_size=5), st.integers(-3, 3))
def test_addition_reward_matches_python_sum(nums, delta):
    prompt = "+".join(map(str, nums)) + "="
    answer = sum(nums) + delta
    expected = 1.0 if delta == 0 else 0.0
    assert Addition().reward([prompt], [str(answer)]) == [expected if answer >= 0 else 0.0]


@given(st.integers(0, 10 ** 9))
def test_countdown_demonstrations_for_any_seed(seed):
    task = Countdown(count=(2, 4), max_number=50, answer_format="expression")
    p = task.draw(np.random.default_rng(seed))
    assert task.grade(p.prompt, p.answer) is Grade.CORRECT


class _Echo(Task):
    """A user-defined task through the public interface (repeat the digit)."""

    format_reward = 0.0

    def draw(self, rng):
        d = str(int(rng.integers(10)))
        return Problem(f"{d}=", d)

    def parses(self, prompt):
        return len(prompt) == 2 and prompt[0].isdigit() and prompt[1] == "="

    def grade(self, prompt, completion):
        if not self.parses(prompt):
            raise ValueError("prompt")
        return Grade.CORRECT if completion == prompt[0] else Grade.MALFORMED


def test_user_defined_task_gets_sampling_splits_and_reward():
    task = _Echo()
    assert task.reward(["3=", "4="], ["3", "5"]) == [1.0, 0.0]
    train, test = task.split(5, 5, seed=0)
    assert not {p.prompt for p in train} & {p.prompt for p in test}


def test_tasks_import_without_torch_or_transformers():
    import subprocess
    import sys

    code = ("import sys, optzoo.llm; from optzoo.llm import Addition, Countdown, Mixture; "
            "Countdown().sample(3); print('torch' in sys.modules, 'transformers' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
