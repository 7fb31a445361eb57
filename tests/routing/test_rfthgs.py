"""RFTHGS learning loop: the crossover program space, reward tiers, duplicate check, GRPO
advantages and clipped loss, and the loop on a synthetic evaluator."""

import itertools
import random

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pyvrp = pytest.importorskip("pyvrp")

from optzoo.routing.crossover_dsl import EXPERT, SLOTS, random_program, render, validate  # noqa: E402,E501
from optzoo.routing.rfthgs import (  # noqa: E402
    OperatorCache,
    RewardConfig,
    RFTConfig,
    SlotPolicy,
    ast_fingerprint,
    evolutionary_search,
    grpo_advantages,
    is_duplicate,
    tiered_reward,
    train,
    verl_policy_loss,
)


def _data(n=25, seed=0):
    m = pyvrp.Model()
    m.add_vehicle_type(8, capacity=[10])
    m.add_depot(500, 500)
    rng = np.random.default_rng(seed)
    for x, y in rng.integers(0, 1000, (n, 2)):
        m.add_client(int(x), int(y), delivery=[int(rng.integers(1, 4))])
    for a in m.locations:
        for b in m.locations:
            m.add_edge(a, b, int(round(((a.x - b.x) ** 2 + (a.y - b.y) ** 2) ** 0.5)))
    return m.data()


def _run(program, data, seed):
    ns = {}
    exec(compile(render(program), "<op>", "exec"), ns)  # trusted: our own templates
    r = pyvrp.RandomNumberGenerator(seed)
    parents = (pyvrp.Solution.make_random(data, r), pyvrp.Solution.make_random(data, r))
    return ns["crossover"](parents, data, pyvrp.CostEvaluator([20], 6, 0),
                           pyvrp.RandomNumberGenerator(seed + 1))


def test_every_defect_free_program_returns_a_valid_child():
    data = _data()
    keys = list(SLOTS)
    design = [k for k in keys if k not in ("syntax", "indexing", "returns", "fleet")]
    combos = list(itertools.product(*(SLOTS[k] for k in design)))
    # every value of every slot appears; a fixed random third of the 768 designs
    for combo in random.Random(0).sample(combos, 256):
        prog = {**EXPERT, **dict(zip(design, combo, strict=True))}
        for seed in range(2):
            child = _run(prog, data, seed)
            assert isinstance(child, pyvrp.Solution)
            assert child.num_routes() <= data.num_vehicles
            visits = [c for r in child.routes() for c in r.visits()]
            assert len(visits) == len(set(visits))  # no client twice
            if prog["merge"] == "keep" or prog["repair"] != "none":
                assert child.is_complete()


def test_incomplete_children_are_repaired_by_pyvrp_local_search():
    """The 'none' repair relies on PyVRP's LocalSearch inserting missing clients."""
    from pyvrp.search import NODE_OPERATORS, LocalSearch, compute_neighbours

    data = _data()
    ls = LocalSearch(data, pyvrp.RandomNumberGenerator(0), compute_neighbours(data))
    for op in NODE_OPERATORS:
        ls.add_node_operator(op(data))
    child = pyvrp.Solution(data, [[1, 2, 3], [4, 5]])
    assert not child.is_complete()
    assert ls(child, pyvrp.CostEvaluator([20], 6, 0)).is_complete()


def test_defect_slots_produce_their_failure_tiers():
    data = _data()
    with pytest.raises(SyntaxError):
        compile(render({**EXPERT, "syntax": "broken"}), "<op>", "exec")
    wrong = _run({**EXPERT, "returns": "routes", "children": "first"}, data, 0)
    assert isinstance(wrong, list)  # PyVRP's GA rejects a non-Solution child
    errors = 0
    for seed in range(20):
        try:
            _run({**EXPERT, "indexing": "unchecked", "window": "1", "count": "half"}, data, seed)
        except IndexError:
            errors += 1
    assert 0 < errors < 20  # fails on some parent pairs, not all
    with pytest.raises(ValueError, match="order"):
        validate({**EXPERT, "order": "zigzag"})
    with pytest.raises(ValueError, match="missing"):
        validate({"order": "angle"})


def test_duplicate_check_ignores_names_and_integer_literals():
    a = "def f(x, y):\n    z = x + 1\n    return z * y\n"
    b = "def g(p, q):\n    w = p + 7\n    return w * q\n"
    c = "def f(x, y):\n    z = x - 1\n    return z * y\n"
    assert is_duplicate(b, a) and not is_duplicate(c, a)
    assert ast_fingerprint("def f(:\n") is None
    # in the program space: only the window slot (an integer literal) is invisible
    assert is_duplicate(render({**EXPERT, "window": "1"}), render(EXPERT))
    for slot in ("order", "choice", "merge", "repair", "children"):
        other = next(c for c in SLOTS[slot] if c != EXPERT[slot])
        assert not is_duplicate(render({**EXPERT, slot: other}), render(EXPERT)), slot


def test_tiered_reward():
    cfg = RewardConfig()
    base = [1.0, 2.0, 3.0]  # mean 2
    parent = render(EXPERT)
    child = render({**EXPERT, "repair": "cheapest"})
    assert tiered_reward({"status": "syntax_error"}, parent, base) == (-1.0, "compile")
    assert tiered_reward({"status": "forbidden"}, parent, base) == (-1.0, "compile")
    assert tiered_reward({"status": "runtime_error"}, parent, base) == (-0.8, "runtime")
    assert tiered_reward({"status": "timeout"}, parent, base) == (-0.8, "runtime")
    ok = {"status": "ok", "source": parent, "gaps": [0.5, 1.0, 1.5]}
    assert tiered_reward(ok, parent, base) == (-0.9, "duplicate")
    assert tiered_reward(ok, parent, base, RewardConfig(use_duplicate=False)) == (0.5, "scored")
    assert tiered_reward({**ok, "source": child}, parent, base) == (0.5, "scored")
    worse = {"status": "ok", "source": child, "gaps": [10.0, 10.0, 10.0]}
    assert tiered_reward(worse, parent, base) == (-0.7, "scored")  # clipped at the floor
    assert tiered_reward(worse, parent, base, RewardConfig(binary=True)) == (0.0, "scored")
    assert tiered_reward({**ok, "source": child}, parent, base,
                         RewardConfig(binary=True)) == (1.0, "scored")
    # a zero baseline does not divide by zero
    r, _ = tiered_reward({**ok, "source": child}, parent, [0.0, 0.0, 0.0], cfg)
    assert r == -0.7
    with pytest.raises(ValueError, match="status"):
        tiered_reward({"status": "weird"}, parent, base)


def test_grpo_advantages_and_clipped_loss():
    r = torch.tensor([[1.0, 0.0, -1.0, 0.0], [0.5, 0.5, 0.5, 0.5]])
    adv = grpo_advantages(r)
    std = np.std([1, 0, -1, 0], ddof=1)
    np.testing.assert_allclose(adv[0].numpy(), np.array([1, 0, -1, 0]) / (std + 1e-6),
                               rtol=1e-6)
    assert torch.all(adv[1] == 0)  # a degenerate group teaches nothing
    logp_old = torch.zeros(4)
    logp = torch.log(torch.tensor([1.5, 1.5, 0.5, 0.5]))
    a = torch.tensor([1.0, -1.0, 1.0, -1.0])
    # one token per sequence: verl's seq-mean-token-sum is the mean over sequences
    loss, _ = verl_policy_loss(logp[:, None], logp_old[:, None], a, torch.ones(4, 1))
    # per element min(ρA, clip(ρ, 0.8, 1.28)A): 1.28, -1.5, 0.5, -0.8
    expected = -np.mean([1.28, -1.5, 0.5, -0.8])
    assert float(loss) == pytest.approx(expected)


def test_policy_log_prob_matches_sampling_frequencies():
    pol = SlotPolicy()
    with torch.no_grad():
        pol.logits("repair")[0] = torch.tensor([2.0, 0.0, 0.0, 0.0])
    progs = pol.sample(EXPERT, 4000, torch.Generator().manual_seed(0))
    freq = np.mean([p["repair"] == "none" for p in progs])
    p_none = float(torch.softmax(torch.tensor([2.0, 0, 0, 0]), 0)[0])
    assert freq == pytest.approx(p_none, abs=0.03)
    lp = pol.log_prob(EXPERT, {**EXPERT, "repair": "append"})
    uniform = -sum(np.log(len(c)) for s, c in SLOTS.items() if s != "repair")
    assert float(lp.detach()) == pytest.approx(uniform + np.log(1 - p_none) - np.log(3), abs=1e-5)


def _fake_evaluator(calls):
    """Syntax by compile(); runtime for the other defects; the gap falls with 'cheapest'
    repair and 'nearest' choice — a known optimum the loop should find."""

    def evaluate(source, instances, seed):
        calls.append((source, tuple(instances), seed))
        try:
            compile(source, "<op>", "exec")
        except SyntaxError:
            return {"status": "syntax_error", "source": source}
        choose = source.split("def _choose")[1].split("def _merge")[0]
        prog_bad = (not any(f"% len({n})" in choose for n in ("routes_b", "ranked", "order_b"))
                    or "while len(routes) > data.num_vehicles" not in source
                    or "return routes\n\n\ndef crossover" in source)
        if prog_bad:
            return {"status": "runtime_error", "source": source}
        gap = 2.0 - 0.8 * ("dist[path" in source) - 0.5 * ("math.dist(cents_a" in source)
        rng = random.Random(hash((source, seed)) % 1000)
        return {"status": "ok", "source": source,
                "gaps": [gap + 0.05 * rng.random() for _ in instances]}

    return evaluate


def test_train_learns_to_avoid_failures_and_beat_the_baseline():
    calls = []
    out = train(_fake_evaluator(calls), base_gaps=[2.0] * 6,
                cfg=RFTConfig(steps=25, prompts=4, group=8, lr=0.2), seed=0)
    h = out["history"]
    first = np.mean([m["failure_frac"] for m in h[:3]])
    last = np.mean([m["failure_frac"] for m in h[-3:]])
    assert first > 0.6 and last < first - 0.3
    assert np.mean([m["reward"] for m in h[-3:]]) > 0
    assert out["cache"].best().gap < 1.5
    assert len(out["cache"]) > 1
    # memoisation: a (source, instances, seed) triple is evaluated once
    assert len(calls) == len(set(calls))
    # one instance draw and one seed per group
    assert len({(c[1], c[2]) for c in calls}) <= 25 * 4


def test_cache_and_ablation_switches():
    cache = OperatorCache.with_expert(1.0)
    assert len(cache) == 1 and cache.entries[0].source == render(EXPERT)
    prog = {**EXPERT, "repair": "append"}
    assert not cache.add(prog, render(prog), 0.5, 0.0)  # r must be > 0
    assert cache.add(prog, render(prog), 0.5, 0.3)
    assert not cache.add(prog, render(prog), 0.4, 0.3)  # de-duplicated by source
    assert cache.best().gap == 0.5
    calls = []
    out = train(_fake_evaluator(calls), [2.0] * 6,
                RFTConfig(steps=3, prompts=2, group=4, use_cache=False), seed=1)
    assert len(out["cache"]) == 1  # no cache: prompts are always the expert
    with pytest.raises(ValueError, match="group"):
        RFTConfig(group=1)


def test_evolutionary_search_baseline():
    calls = []
    out = evolutionary_search(_fake_evaluator(calls), [2.0] * 6, budget=40, seed=0)
    assert out["evaluations"] <= 40 and len(calls) == out["evaluations"]
    validate(out["program"])
    assert out["source"] == render(out["program"])


def test_random_program_covers_the_space():
    rng = random.Random(0)
    seen = {s: set() for s in SLOTS}
    for _ in range(300):
        for s, c in random_program(rng).items():
            seen[s].add(c)
    assert all(seen[s] == set(SLOTS[s]) for s in SLOTS)


def test_score_routes_and_sandboxed_evaluator():
    from optzoo.routing.hgs import best_routes, run_hgs, score_routes
    from optzoo.routing.instances import InstanceSpec
    from optzoo.routing.rfthgs import SandboxEvaluator

    spec = InstanceSpec.generated(20, seed=3)
    data = spec.load()
    res = run_hgs(data, None, iterations=30, seed=0, collect_stats=False)
    routes = [list(r.visits()) for r in res.best.routes()]
    assert score_routes(data, routes) == pytest.approx(res.cost())
    assert best_routes(None, [spec], 30, 0)[0]["routes"] == routes
    assert score_routes(data, routes[:-1]) is None  # incomplete
    assert score_routes(data, [routes[0] + routes[0][:1]] + routes[1:]) is None  # repeat
    assert score_routes(data, [[999]]) is None  # unknown client
    assert score_routes(data, "garbage") is None

    ref = res.cost()
    ev = SandboxEvaluator([spec], [ref], iterations=30)
    ok = ev(render(EXPERT), [0], 0)
    assert ok["status"] == "ok" and len(ok["gaps"]) == 1 and np.isfinite(ok["gaps"][0])
    assert ev(render({**EXPERT, "syntax": "broken"}), [0], 0)["status"] == "syntax_error"
    evil = "import os\n\ndef crossover(parents, data, cost_evaluator, rng):\n" \
           "    os.system('true')\n    return parents[0]\n"
    assert ev(evil, [0], 0)["status"] == "forbidden"
    raises = "def crossover(parents, data, cost_evaluator, rng):\n    raise ValueError('x')\n"
    assert ev(raises, [0], 0)["status"] == "runtime_error"
    with pytest.raises(ValueError, match="references"):
        SandboxEvaluator([spec], [], 30)


@pytest.mark.parametrize("path", ["fork server", "run_untrusted"])
def test_sandbox_evaluator_hands_the_data_folder_to_the_child(monkeypatch, tmp_path, path):
    """The sandboxed child sees no environment: the parent resolves OPTZOO_DATA for it."""
    import shutil
    import types

    from optzoo.routing import sandbox
    from optzoo.routing.instances import InstanceSpec, data_root
    from optzoo.routing.rfthgs import SandboxEvaluator

    src = data_root()
    for ext in (".vrp", ".sol"):
        name = "X-n101-k25" + ext
        shutil.copy(next(p for p in (src / name, src / "cvrp" / name) if p.exists()), tmp_path)
    monkeypatch.setenv("OPTZOO_DATA", str(tmp_path))
    seen = {}

    def fake(source, job, args, limits):
        seen["args"] = args
        return types.SimpleNamespace(ok=False, status="runtime", reason="stub")

    monkeypatch.setattr(sandbox, "run_untrusted", fake)
    ev = SandboxEvaluator([InstanceSpec.x("X-n101-k25")], [27591.0], iterations=1)
    if path == "fork server":
        server = types.SimpleNamespace(run=lambda source, args, limits: fake(source, None, args,
                                                                             limits))
        monkeypatch.setattr(ev, "_forkserver", lambda: server)
    else:
        monkeypatch.setattr(ev, "_forkserver", lambda: None)
    assert ev("def crossover(*a): pass", [0], seed=0)["status"] == "runtime"
    assert seen["args"][3] == str(data_root()) and str(tmp_path) in seen["args"][3]
