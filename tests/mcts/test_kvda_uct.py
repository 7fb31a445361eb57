"""KVDA-UCT, OGA-UCT and UCT: offsets against brute-force DP values, refinement of OGA's
abstraction by KVDA's, losslessness of the statistics, the reproduction's smoke run and the
benchmark row."""

from __future__ import annotations

import importlib.util
import math
from collections import defaultdict

import numpy as np
import pytest

from optzoo.experiment import Result
from optzoo.mcts import (
    KVDAUCT,
    OGAUCT,
    UCT,
    Connect4,
    GameOfLife,
    SailingWind,
    Saving,
    SysAdmin,
    exact_values,
    play_episode,
)
from tests.conftest import REPO


class Diamond:
    """Hand-built DAG, horizon 2: from 'r', action 0 gives reward 1 to 'x', action 1 reward 3 to
    'y'; 'x' and 'y' have one action each, rewards 2 and 7, to 'z'.
    Q* at the root: 1 + 2 = 3 and 3 + 7 = 10; V*(x) = 2, V*(y) = 7."""

    horizon = 2
    table = {("r", 0): ("x", 1.0), ("r", 1): ("y", 3.0), ("x", 0): ("z", 2.0),
             ("y", 0): ("z", 7.0)}

    def initial_state(self):
        return "r"

    def legal_actions(self, state):
        return (0, 1) if state == "r" else (0,)

    def step(self, state, action):
        return self.table[(state, action)]


SMALL = [Diamond(), SysAdmin(n=3, horizon=3), GameOfLife(size=2, horizon=3, alive=(0,)),
         SailingWind(size=3, horizon=4), Saving(horizon=4, seed=2),
         Connect4(rows=4, cols=4, horizon=4, seed=2)]


def _q_star(tree, q, memo):
    env = tree.env
    return tree.q_reward[q] + exact_values(env, tree.s_env[tree.q_child[q]],
                                           tree.s_depth[tree.q_child[q]], memo)


def _groups(ids):
    out = defaultdict(list)
    for i, x in enumerate(ids):
        out[x].append(i)
    return out


@pytest.mark.parametrize("agent", [OGAUCT, KVDAUCT])
@pytest.mark.parametrize("env", SMALL, ids=lambda e: type(e).__name__)
def test_offsets_match_brute_force_values(env, agent):
    tree = agent(env, seed=0)
    tree.expand_all(env.initial_state())
    memo = {}
    for members in _groups(tree.q_abs).values():
        w = [_q_star(tree, q, memo) - tree.q_b[q] for q in members]
        assert max(w) - min(w) < 1e-9
    for members in _groups(tree.s_abs).values():
        u = [exact_values(env, tree.s_env[s], tree.s_depth[s], memo) - tree.s_e[s]
             for s in members]
        assert max(u) - min(u) < 1e-9


def test_hand_built_dag_offsets_and_grouping():
    kv = KVDAUCT(Diamond(), seed=0)
    kv.expand_all("r")
    by_action = {(kv.s_env[kv.q_parent[q]], kv.q_action[q]): q for q in range(len(kv.q_abs))}
    root_q = [by_action[("r", 0)], by_action[("r", 1)]]
    # x and y are one abstract state (their children differ by the known 5), so the two root
    # Q-nodes are grouped, with Q*(r,1) − Q*(r,0) = 10 − 3 = 7 known from the offsets
    assert kv.q_abs[root_q[0]] == kv.q_abs[root_q[1]]
    assert kv.q_b[root_q[1]] - kv.q_b[root_q[0]] == pytest.approx(7.0)
    sx, sy = (kv.q_child[q] for q in root_q)
    assert kv.s_abs[sx] == kv.s_abs[sy] and kv.s_e[sy] - kv.s_e[sx] == pytest.approx(5.0)
    oga = OGAUCT(Diamond(), seed=0)
    oga.expand_all("r")
    assert len(set(oga.q_abs)) == len(oga.q_abs)  # all rewards differ: ASAP groups nothing


@pytest.mark.parametrize("env", SMALL, ids=lambda e: type(e).__name__)
def test_kvda_groups_a_superset_of_oga_on_q_nodes_before_terminal_states(env):
    oga, kv = OGAUCT(env, seed=0), KVDAUCT(env, seed=0)
    oga.expand_all(env.initial_state())
    kv.expand_all(env.initial_state())
    # same seed, same expansion order: node ids coincide
    assert oga.q_child == kv.q_child and oga.s_env == kv.s_env
    for members in _groups(oga.q_abs).values():
        if kv.s_term[kv.q_child[members[0]]]:  # successors: a depth's shared terminal node
            assert len({kv.q_abs[i] for i in members}) == 1


# Connect-4 is left out: its early game ends send children of one state with different rewards
# into the one terminal-successor abstract node, and the equal-offset rule (next test) then
# leaves those states alone where OGA groups them, so KVDA may end with more abstract nodes
@pytest.mark.parametrize("env", [e for e in SMALL if not isinstance(e, Connect4)],
                         ids=lambda e: type(e).__name__)
def test_kvda_has_no_more_abstract_q_nodes_than_oga(env):
    oga, kv = OGAUCT(env, seed=0), KVDAUCT(env, seed=0)
    oga.expand_all(env.initial_state())
    kv.expand_all(env.initial_state())
    assert len(set(kv.q_abs)) <= len(set(oga.q_abs))


@pytest.mark.parametrize("env", [SysAdmin(n=3, horizon=3), Connect4(rows=4, cols=4, horizon=4)],
                         ids=lambda e: type(e).__name__)
def test_equal_offset_rule_can_split_states_that_oga_groups(env):
    """The paper's state rule (children of one state in one abstract Q-node must have equal
    offsets; official ``consistentVstarDist``) makes KVDA's state abstraction no coarser than
    OGA's only on Q-nodes: SysAdmin's reboot actions whose successors coincide but whose rewards
    differ, or Connect-4 moves that end the game with different rewards, leave states alone."""
    oga, kv = OGAUCT(env, seed=0), KVDAUCT(env, seed=0)
    oga.expand_all(env.initial_state())
    kv.expand_all(env.initial_state())
    split = [m for m in _groups(oga.s_abs).values()
             if len(m) > 1 and len({kv.s_abs[i] for i in m}) > 1]
    assert split
    split_states = {s for m in split for s in m}
    split_q = {q for m in _groups(oga.q_abs).values()
               if len({kv.q_abs[i] for i in m}) > 1 for q in m}

    def clash(s):
        seen = {}
        return any(seen.setdefault(kv.q_abs[q], round(kv.q_b[q], 9)) != round(kv.q_b[q], 9)
                   for q in kv.s_children[s])

    # every split is explained by the rule, directly or from below: some member has two
    # children in one abstract Q-node with different offsets (and stays alone), or some member
    # has a child whose OGA Q-group KVDA splits -- which happens only when the successors'
    # OGA state group is split one depth further down
    for members in split:
        lonely = [s for s in members if clash(s)]
        assert all(kv.s_abs.count(kv.s_abs[s]) == 1 for s in lonely)
        assert lonely or any(q in split_q for s in members for q in kv.s_children[s])
    for q in split_q:
        assert kv.q_child[q] in split_states


def _brute_value(tree, q):
    x = tree.q_abs[q]
    members = [m for m in range(len(tree.q_abs)) if tree.q_abs[m] == x]
    n = sum(tree.q_n[m] for m in members)
    s = sum(tree.q_s[m] - tree.q_b[m] * tree.q_n[m] for m in members)
    return s / n + tree.q_b[q]


@pytest.mark.parametrize("agent", [UCT, OGAUCT, KVDAUCT])
def test_incremental_statistics_equal_recomputed_ones(agent):
    env = SailingWind(size=4, horizon=6)
    tree = agent(env, iterations=150, c=1.0, seed=3)
    tree.search(env.initial_state())
    for q in range(len(tree.q_abs)):
        assert tree.value(q) == pytest.approx(_brute_value(tree, q), abs=1e-9)
    assert sum(tree.abs_n) == sum(tree.q_n)


def test_values_converge_to_exact_q_star_like_uct():
    env = SysAdmin(n=2, horizon=2, down=(0,))
    memo = {}
    errs = {}
    for agent in (UCT, KVDAUCT):
        tree = agent(env, iterations=3000, c=1.0, seed=1)
        tree.search(env.initial_state())
        root = 0
        best = max(_q_star(tree, q, memo) for q in tree.s_children[root])
        # the greedy child's estimate converges to V*; every value is within the rollout range
        errs[agent.name] = abs(max(tree.value(q) for q in tree.s_children[root]) - best)
        for q in tree.s_children[root]:
            assert tree.value(q) <= _q_star(tree, q, memo) + 1e-9
    assert errs["kvda"] < 0.1 and errs["uct"] < 0.1
    assert errs["kvda"] <= errs["uct"] + 0.02


def test_search_returns_a_legal_action_and_episode_is_deterministic():
    env = GameOfLife()
    a = play_episode(KVDAUCT(env, iterations=20, seed=5), env)
    b = play_episode(KVDAUCT(env, iterations=20, seed=5), env)
    assert a == b and math.isfinite(a["return"])


@pytest.mark.parametrize("kwargs", [{"iterations": 0}, {"c": 0.0}, {"recency": 0}])
def test_bad_arguments_raise(kwargs):
    with pytest.raises(ValueError, match=next(iter(kwargs))):
        KVDAUCT(SysAdmin(), **kwargs)


def test_bad_environment_and_domain_raise():
    with pytest.raises(ValueError, match="env"):
        UCT(object())
    with pytest.raises(ValueError, match="down"):
        SysAdmin(n=3, down=(5,))
    with pytest.raises(ValueError, match="depth"):
        UCT(SysAdmin(horizon=2)).search(SysAdmin().initial_state(), depth=2)


def test_reproduction_smoke(tmp_path):
    from optzoo.mcts.reproduce.kvda_uct import PRESETS, REPRODUCTION

    cfg = PRESETS["smoke"]
    results = [Result(t, REPRODUCTION.run_trial(t, "cpu")) for t in REPRODUCTION.trials(cfg)]
    summary = REPRODUCTION.summarize(results, cfg, tmp_path)
    # the smoke preset runs (ε_a, ε_t)-OGA, hence claim (4) and its table
    assert {r.trial.method for r in results} == {"random", "kvda", "oga", "uct", "eps_oga"}
    assert len(summary.claims) == 4 and summary.tables[0].rows and summary.tables[1].rows
    assert all(f.path.exists() for f in summary.figures)
    kv = [r.metrics["q_ratio"] for r in results if r.trial.method == "kvda"]
    assert all(np.isfinite(kv)) and min(kv) >= 1.0


def test_benchmark_row_tiny(monkeypatch):
    path = REPO / "benchmarks" / "bench_mcts.py"
    spec = importlib.util.spec_from_file_location("_bench_mcts", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "ITERATIONS", 10)
    monkeypatch.setattr(module, "BLOCKS", 1)
    for fn in module.BENCHMARKS:
        row = fn()
        assert {"name", "method", "peer", "method_s", "peer_s"} <= set(row)
        assert row["method_s"] > 0 and row["peer_s"] > 0


# -- verdicts (issue 18): synthetic cells where the old rules passed and the new ones must not


def _cell_results(cells, eps=()):
    """Results of ``cells[(domain, C)][agent] = [(return, q_ratio) per seed]``."""
    from optzoo.experiment import Trial

    out = []
    for (dom, c), agents in cells.items():
        for agent, rows in agents.items():
            for seed, (ret, q) in enumerate(rows):
                params = {"episodes": 1, "iterations": 20, "c": float(c)}
                method = agent
                if agent.startswith("eps_oga:"):
                    method = "eps_oga"
                    params.update(eps_a=float(agent.split(":")[1]), eps_t=0.0)
                out.append(Result(Trial(method, dom, seed, params),
                                  {"return": float(ret), "q_ratio": float(q)}))
    return out


def _claims(results, **overrides):
    """The claims on the quick preset; these synthetic cells have 3 seeds, so the
    non-inferiority claims are decided on 3 (``ni_min_seeds=3``) unless told otherwise."""
    import dataclasses

    from optzoo.mcts.reproduce import kvda_uct as repro

    cfg = dataclasses.replace(repro.PRESETS["quick"], **{"ni_min_seeds": 3, **overrides})
    return repro._claims(repro._cells(results), cfg)


def test_kvda_ties_with_oga_are_not_wins():
    # every cell: KVDA and OGA play and compress identically (the old claim 2 needed 2/3 of the
    # non-ties: with one noisy win and two ties it held; claim 1 is a tie too)
    same = [(-20.0, 1.5), (-22.0, 1.6), (-21.0, 1.4)]
    noisy = [(-10.0, 1.5), (-30.0, 1.6), (-21.0, 1.4)]
    cells = {("sailing_wind", 1.0): {"kvda": same, "oga": same, "uct": same},
             ("sailing_wind", 2.0): {"kvda": same, "oga": same, "uct": same},
             ("sailing_wind", 4.0): {"kvda": noisy, "oga": same, "uct": same}}
    claims = _claims(_cell_results(cells))
    assert [c.verdict.test for c in claims] == ["all_of", "at_least", "all_of"]
    assert claims[0].status == "not held"   # no more abstractions than OGA
    assert claims[1].status == "not held"   # two ties, one noisy cell: 2 of 3 cannot be reached
    # equal to UCT in two cells; the noisy cell cannot show "not worse" (the old rule, "no CI
    # entirely below 0", passed it)
    assert claims[2].status == "inconclusive"
    assert [v.verdict for _, v in claims[2].verdict.cells] == ["held", "held", "inconclusive"]


def test_kvda_below_uct_in_one_cell_fails_every_cell_claim():
    good = [(-20.0, 2.0), (-21.0, 2.1), (-19.0, 1.9)]
    oga = [(-25.0, 1.2), (-26.0, 1.3), (-24.5, 1.1)]
    # the old claim 3 passed while no cell's CI lay entirely below 0: a noisy loss of 5 passed
    worse = [(-24.0, 2.0), (-27.0, 2.1), (-25.0, 1.9)]
    cells = {("sailing_wind", 1.0): {"kvda": good, "oga": oga, "uct": good},
             ("sailing_wind", 2.0): {"kvda": good, "oga": oga, "uct": good},
             ("sailing_wind", 4.0): {"kvda": worse, "oga": oga, "uct": good}}
    claims = _claims(_cell_results(cells))
    assert claims[0].status == "held" and claims[1].status == "held"
    assert claims[2].status == "not held"
    assert dict(claims[2].verdict.cells)["sailing_wind it=20 C=4"].verdict == "not held"


def test_tuned_eps_oga_on_a_grid_edge_makes_the_cell_inconclusive():
    kv = [(-20.0, 2.0), (-21.0, 2.1), (-19.0, 1.9)]
    oga = [(-25.0, 1.2), (-26.0, 1.3), (-24.5, 1.1)]
    # ε_a = 2 is the best of {0 (OGA), 1, 2}: an edge that is no hard limit
    eps = {"eps_oga:1": [(-23.0, 1.3)] * 3, "eps_oga:2": [(-20.5, 1.5), (-21.0, 1.5),
                                                         (-19.5, 1.5)]}
    cells = {("sailing_wind", c): {"kvda": kv, "oga": oga, "uct": kv, **eps}
             for c in (1.0, 2.0, 4.0)}
    claim = _claims(_cell_results(cells))[3]
    assert claim.verdict.test == "at_least" and claim.status == "inconclusive"
    assert all("grid edge" in v.reason for _, v in claim.verdict.cells)
    # with 999999 ("ignore the reward", a hard limit) best, the cells are decided
    eps["eps_oga:999999"] = eps.pop("eps_oga:2")
    cells = {("sailing_wind", c): {"kvda": kv, "oga": oga, "uct": kv, **eps}
             for c in (1.0, 2.0, 4.0)}
    assert _claims(_cell_results(cells))[3].status == "held"


# -- the official search loop (issue 22), each rule against a hand trace, and the old rules
#    (EAGER) kept as options


class Fork:
    """Horizon 1: action 0 gives reward 1, action 1 reward 3 (two terminal successors, hence
    one abstract successor: KVDA may group the two root Q-nodes with known offset 2)."""

    horizon = 1

    def initial_state(self):
        return "r"

    def legal_actions(self, state):
        return (0, 1)

    def step(self, state, action):
        return ("t0", 1.0) if action == 0 else ("t1", 3.0)


class Funnel(Diamond):
    """Horizon 3: r -0/+1-> x, r -1/+3-> y, x -+2-> z, y -+7-> z, z -+5-> w (z is reached
    along two paths: a transposition)."""

    horizon = 3
    table = {**Diamond.table, ("z", 0): ("w", 5.0)}


def _by_action(tree):
    return {tree.q_action[q]: q for q in tree.s_children[0]}


def test_new_q_nodes_stay_alone_until_their_k_th_visit():
    # hand trace (K = 3, C = 1): iterations 1-2 expand both actions (one visit each); 3: σ = std
    # {1, 3} = 1, scores 3 + sqrt(ln 2) > 1 + sqrt(ln 2): action 1; 4: 3 + sqrt(ln 3 / 2) = 3.74
    # > 1 + sqrt(ln 3) = 2.05: action 1 again, its 3rd visit: it joins the abstract node of
    # "terminal successor at depth 0", while action 0 (one visit) keeps its own node
    tree = KVDAUCT(Fork(), c=1.0, recency=3, seed=0)
    root = tree._state("r", 0)
    for _ in range(2):
        tree.iterate(root)
    q0, q1 = _by_action(tree)[0], _by_action(tree)[1]
    assert tree.q_abs[q0] != tree.q_abs[q1]
    assert [tree.abs_n[tree.q_abs[q]] for q in (q0, q1)] == [1, 1]
    for _ in range(2):
        tree.iterate(root)
    assert (tree.q_n[q0], tree.q_n[q1]) == (1, 3)
    shared = tree.abs_ids[(0, "Q", tree.s_abs[tree.q_child[q1]])]
    assert tree.q_abs[q1] == shared and tree.q_abs[q0] != shared
    assert tree.abs_n[shared] == 3 and tree.q_recent[q1] == 0
    assert (tree.value(q0), tree.value(q1)) == (1.0, 3.0)
    # the old rule: grouped at creation, so after two iterations both read N_X = 2
    eager = KVDAUCT(Fork(), c=1.0, recency=3, seed=0, abstract_on_creation=True)
    root = eager._state("r", 0)
    for _ in range(2):
        eager.iterate(root)
    e0, e1 = _by_action(eager)[0], _by_action(eager)[1]
    assert eager.q_abs[e0] == eager.q_abs[e1] and eager.abs_n[eager.q_abs[e0]] == 2
    assert (eager.value(e0), eager.value(e1)) == (1.0, 3.0)  # lossless either way


@pytest.mark.parametrize("stop", [False, True])
def test_an_expansion_into_a_known_state_continues_the_descent(stop):
    tree = UCT(Funnel(), seed=0, stop_at_transposition=stop)
    root = tree._state("r", 0)
    tree.s_untried[root] = [1, 0]  # pop order: action 0, then 1
    q_rx = tree._expand(root, tree.s_untried[root].pop())
    q_ry = tree._expand(root, tree.s_untried[root].pop())
    x, y = tree.q_child[q_rx], tree.q_child[q_ry]
    q_xz = tree._expand(x, tree.s_untried[x].pop())
    z = tree.q_child[q_xz]
    q_zw = tree._expand(z, tree.s_untried[z].pop())
    # one visit each, as every node of a searched tree has
    for q, ret in ((q_rx, 8.0), (q_ry, 15.0), (q_xz, 7.0), (q_zw, 5.0)):
        tree._record(q, ret)
    # greedy (scale 0) at r: y (15 > 8); y's untried action leads to the known z
    path, leaf, expanded = tree._descend(root, 0.0)
    q_yz = tree.s_children[y][0]
    assert tree.q_child[q_yz] == z and expanded == {y}
    if stop:  # the old rule: the leaf is z, the rollout starts there
        assert path == [q_ry, q_yz] and leaf == z
    else:     # official: z is descended, its only action leads to the terminal w
        assert path == [q_ry, q_yz, q_zw] and leaf == tree.q_child[q_zw]
        assert tree.s_term[leaf]


@pytest.mark.parametrize("stop", [False, True])
def test_one_iteration_backs_up_the_whole_continued_path(stop):
    # hand trace (C = 4, σ over the ground means): 1-2 expand (r,1) and (r,0); 3 expands
    # (y,0) into the new z (the leaf); 4 expands (z,0) into w; 5 picks (r,0) and expands (x,0)
    # into the known z: officially the descent goes on through (z,0) to w, with the old rule
    # it stops at z and a rollout gives the same return
    tree = UCT(Funnel(), c=4.0, seed=0, stop_at_transposition=stop)
    root = tree._state("r", 0)
    for _ in range(12):
        tree.iterate(root)
    q = {(tree.s_env[tree.q_parent[i]], tree.q_action[i]): i for i in range(len(tree.q_abs))}
    # every return is exact (a deterministic DAG, the rollouts included)
    assert {k: tree.value(i) for k, i in q.items()} == {
        ("r", 0): 8.0, ("r", 1): 15.0, ("x", 0): 7.0, ("y", 0): 12.0, ("z", 0): 5.0}
    through = tree.q_n[q["x", 0]] + tree.q_n[q["y", 0]]
    # (z,0) is on every path through z but the one that created z (3), and, with the old
    # rule, also not on the one that expanded (x,0) (5)
    assert tree.q_n[q["z", 0]] == through - (2 if stop else 1)


@pytest.mark.parametrize("sigma, fresh, traced", [("ground", 0.0, 3.0), ("shared", 1.0, 3.5)])
def test_dynamic_scale_on_a_hand_trace(sigma, fresh, traced):
    tree = KVDAUCT(Diamond(), seed=0, sigma=sigma)
    tree.expand_all("r")
    assert tree._sigma() == fresh  # no visit yet: official 0, the old rule 1
    q0, q1 = _by_action(tree)[0], _by_action(tree)[1]
    assert tree.q_abs[q0] == tree.q_abs[q1]  # one abstract node, known offset 7
    for q, ret in ((q0, 3.0), (q0, 5.0), (q1, 10.0)):
        tree._record(q, ret)
    # ground means: Q(r,0) = 4, Q(r,1) = 10, population std 3.  Shared estimates: S_X / N_X =
    # (3 + 5 + 10 − 7 − 3 b0) / 3 = 11/3 − b0, so V̄ = 11/3 and 11/3 + 7: std 3.5
    assert tree._sigma() == pytest.approx(traced)


@pytest.mark.parametrize("agent", [UCT, OGAUCT, KVDAUCT])
def test_eager_options_and_bad_option_values(agent):
    from optzoo.mcts import EpsOGAUCT
    from optzoo.mcts.uct import EAGER

    env = SailingWind(size=4, horizon=5)
    for cls in (agent, EpsOGAUCT):
        tree = cls(env, iterations=60, seed=1, **EAGER)
        assert (tree.abstract_on_creation, tree.stop_at_transposition, tree.sigma) == \
            (True, True, "shared")
        tree.search(env.initial_state())
        assert sum(tree.abs_n) == sum(tree.q_n)
    with pytest.raises(ValueError, match="sigma"):
        agent(env, sigma="abstract")
    with pytest.raises(TypeError, match="stop_at_transposition"):
        agent(env, stop_at_transposition=1)
    with pytest.raises(TypeError, match="abstract_on_creation"):
        agent(env, abstract_on_creation="yes")


def test_noninferiority_claims_need_the_full_presets_seeds():
    from optzoo.mcts.reproduce.kvda_uct import PRESETS

    assert PRESETS["full"].seeds >= PRESETS["full"].ni_min_seeds == 5
    good = [(-20.0, 2.0), (-21.0, 2.1), (-19.0, 1.9)]
    oga = [(-25.0, 1.2), (-26.0, 1.3), (-24.5, 1.1)]
    eps = {"eps_oga:999999": [(-22.0, 1.5), (-23.0, 1.5), (-21.5, 1.5)]}
    cells = {("sailing_wind", c): {"kvda": good, "oga": oga, "uct": good, **eps}
             for c in (1.0, 2.0, 4.0)}
    decided = _claims(_cell_results(cells))
    assert decided[2].status == "held" and decided[3].status == "held"
    # the same data with the preset's rule (5 seeds): claims 3 and 4 cannot be decided
    claims = _claims(_cell_results(cells), ni_min_seeds=5)
    assert claims[0].status == "held" and claims[1].status == "held"
    for claim in claims[2:]:
        assert claim.status == "inconclusive"
        for _, v in claim.verdict.cells:
            assert "fewer than the 5" in v.reason
            assert any("would be held" in g for g in v.guards)
    # the margin is declared in return units in the claim's text (0.05 × horizon 15)
    assert "sailing_wind 0.75" in claims[2].text and "0.75" in claims[3].text
