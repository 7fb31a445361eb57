"""The rfthgs reproduction's instance sources: the full preset on the real CVRPLIB X files
(the paper's 30 training instances, larger held-out ones), the generated source of quick
unchanged, and clear errors when the X files are missing."""

import dataclasses
import math
import re

import pytest

torch = pytest.importorskip("torch")
pyvrp = pytest.importorskip("pyvrp")

from optzoo.errors import ConfigError  # noqa: E402
from optzoo.experiment import Result  # noqa: E402
from optzoo.routing.instances import InstanceSpec, list_x_instances  # noqa: E402
from optzoo.routing.reproduce import rfthgs as repro  # noqa: E402
from optzoo.routing.reproduce.rfthgs import PRESETS, RFTHGSRepro, run_trial, trials  # noqa: E402
from tests.conftest import shared_dir  # noqa: E402

CVRP = shared_dir() / "data" / "cvrp"


@pytest.fixture
def x_data(monkeypatch):
    # the X files are part of the project's shared data (tests/routing/test_instances.py needs
    # them too): a missing folder fails here instead of hiding these tests
    assert any(CVRP.glob("X-n*-k*.vrp")), f"no X files in {CVRP}"
    monkeypatch.setenv("OPTZOO_DATA", str(CVRP))
    return CVRP


def _customers_in_file(name: str) -> int:
    # read the DIMENSION line ourselves: independent of the module's name parsing
    text = (CVRP / f"{name}.vrp").read_text()
    return int(re.search(r"DIMENSION\s*:\s*(\d+)", text).group(1)) - 1


def _bks_in_file(name: str) -> int:
    line = [s for s in (CVRP / f"{name}.sol").read_text().splitlines() if s.strip()][-1]
    return int(line.split()[-1])


def test_full_preset_trains_on_the_papers_30_x_instances_and_tests_on_larger_ones(x_data):
    cfg = PRESETS["full"]
    assert cfg.instance_source == "x" and cfg.iterations == 800 and cfg.seeds == 5
    ts = trials(cfg)
    assert len(ts) == len(cfg.methods) * 5 and {t.seed for t in ts} == set(range(5))
    assert {t.problem for t in ts} == {"cvrplib-x"}
    train, test = ts[0].params["train_names"], ts[0].params["test_names"]
    for t in ts:  # every method and seed sees the same instances
        assert t.params["train_names"] == train and t.params["test_names"] == test
        assert t.params["instance_source"] == "x" and t.params["iterations"] == 800
    available = set(list_x_instances())
    assert set(train) <= available and set(test) <= available
    assert not set(train) & set(test)
    assert len(set(train)) == len(train) == 30 and len(set(test)) == len(test) == 5
    # the paper's training set: X-n101-k25 ... X-n237-k14, n = 100-236 customers
    assert train[0] == "X-n101-k25" and train[-1] == "X-n237-k14"
    sizes = [_customers_in_file(nm) for nm in train]
    assert all(100 <= n <= 240 for n in sizes)
    # all the X files of that size range, none skipped
    assert set(train) == {nm for nm in available if 100 <= _customers_in_file(nm) <= 240}
    test_sizes = [_customers_in_file(nm) for nm in test]
    assert all(300 <= n <= 500 for n in test_sizes) and test_sizes == sorted(test_sizes)
    in_range = sorted(_customers_in_file(nm) for nm in available
                      if 300 <= _customers_in_file(nm) <= 500)
    # spread over the range: both ends included, a gap between consecutive picks
    assert test_sizes[0] == in_range[0] and test_sizes[-1] == in_range[-1]
    assert min(b - a for a, b in zip(test_sizes, test_sizes[1:], strict=False)) >= 20


def test_quick_params_do_not_carry_the_instance_source(monkeypatch, tmp_path):
    # quick has been run: its trial keys hash these params and must not change; the generated
    # source needs no file, so an empty OPTZOO_DATA does not matter
    monkeypatch.setenv("OPTZOO_DATA", str(tmp_path))
    old_fields = {f.name for f in dataclasses.fields(RFTHGSRepro)} - {
        "seeds", "seed_start", "methods", "instance_source", *repro.MARGINS, *repro.LM_FIELDS,
        *repro.LOCAL_LM_FIELDS}
    ts = trials(PRESETS["quick"])
    assert len(ts) == 15
    for t in ts:
        # the code LM's fields are code-lm's own: the grammar methods keep their old keys
        extra = set(repro.LM_FIELDS) if t.method == "code-lm" else set()
        assert set(t.params) == old_fields | extra and t.problem == "x-like-cvrp"
    x_cfg = dataclasses.replace(PRESETS["quick"], instance_source="x", train_n=(100, 110),
                                train_instances=3, test_n=(300, 310), test_instances=2)
    monkeypatch.setenv("OPTZOO_DATA", str(CVRP))
    if any(CVRP.glob("X-n*-k*.vrp")):
        x_params = next(t for t in trials(x_cfg) if t.method == "rfthgs").params
        assert set(x_params) == old_fields | {"instance_source", "train_names", "test_names"}


def test_missing_x_files_are_a_config_error(monkeypatch, tmp_path):
    monkeypatch.setenv("OPTZOO_DATA", str(tmp_path))
    with pytest.raises(ConfigError, match="OPTZOO_DATA"):
        trials(PRESETS["full"])


def test_a_worker_without_the_x_files_fails_before_running(x_data, monkeypatch, tmp_path):
    trial = trials(PRESETS["full"])[0]
    monkeypatch.setenv("OPTZOO_DATA", str(tmp_path))
    with pytest.raises(ConfigError, match="train_names.*X-n101-k25"):
        run_trial(trial, "cpu")


def test_too_few_x_files_in_a_range_is_a_config_error(monkeypatch, tmp_path):
    assert any(CVRP.glob("X-n*-k*.vrp")), f"no X files in {CVRP}"
    # a partial copy: three training-size files and two larger ones
    for name in ("X-n101-k25", "X-n106-k14", "X-n110-k13", "X-n303-k21", "X-n308-k13"):
        for ext in (".vrp", ".sol"):
            (tmp_path / f"{name}{ext}").symlink_to(CVRP / f"{name}{ext}")
    monkeypatch.setenv("OPTZOO_DATA", str(tmp_path))
    with pytest.raises(ConfigError, match="train_instances: expected 30 .* found 3"):
        trials(PRESETS["full"])
    cfg = dataclasses.replace(PRESETS["full"], train_instances=3, test_instances=3,
                              instances_per_reward=3)
    with pytest.raises(ConfigError, match="test_instances: expected 3 .* found 2"):
        trials(cfg)
    # fewer needed than present: a spread subset, the smallest and largest included
    cfg = dataclasses.replace(PRESETS["full"], train_instances=2, test_instances=1,
                              instances_per_reward=2)
    t = trials(cfg)[0]
    assert t.params["train_names"] == ["X-n101-k25", "X-n110-k13"]
    assert t.params["test_names"] == ["X-n303-k21"]


def test_instance_source_is_validated():
    with pytest.raises(ConfigError, match="instance_source"):
        RFTHGSRepro(instance_source="cvrplib")
    with pytest.raises(ConfigError, match="test_n"):
        RFTHGSRepro(instance_source="x", train_n=(100, 240), test_n=(200, 500))


def test_sandbox_read_check_names_the_problem():
    # an X spec the sandboxed child cannot load (no such file) is refused up front
    with pytest.raises(ConfigError, match="sandboxed evaluator cannot load"):
        repro._check_sandbox_reads([InstanceSpec.x("X-n99999-k1")])


@pytest.mark.slow
def test_an_x_trial_measures_gaps_against_the_bks(x_data):
    cfg = RFTHGSRepro(seeds=1, methods=("rfthgs",), instance_source="x", train_instances=2,
                      train_n=(100, 106), test_instances=1, test_n=(300, 302), test_seeds=1,
                      iterations=2, steps=1, prompts=1, group=2, instances_per_reward=1,
                      test_operators=1)
    (trial,) = trials(cfg)
    assert trial.params["train_names"] == ["X-n101-k25", "X-n106-k14"]
    assert trial.params["test_names"] == ["X-n303-k21"]
    m = run_trial(trial, "cpu")
    # the baseline table, recomputed with pyvrp.solve (SREX) and the .sol costs read here
    gaps = []
    for name in trial.params["train_names"]:
        data = pyvrp.read(str(CVRP / f"{name}.vrp"), round_func="round")
        res = pyvrp.solve(data, stop=pyvrp.stop.MaxIterations(2), seed=0, collect_stats=False)
        bks = _bks_in_file(name)
        gaps.append(100.0 * (res.cost() - bks) / bks)
    assert m["base_gap_mean"] == pytest.approx(sum(gaps) / len(gaps), rel=1e-12)
    assert m["base_gap_mean"] > 0 and m["srex_test_gap"] > 0
    assert m["test_infeasible"] == 0 and math.isfinite(m["test_gap"])
    assert m["diff_0"] == pytest.approx(m["test_gap"] - m["srex_test_gap"])


def test_x_evaluator_gives_each_instance_of_a_call_the_papers_360_s():
    seen = []

    class Inner:
        limits = None

        def __call__(self, source, instances, seed):
            seen.append((self.limits.wall_s, self.limits.cpu_s))
            return {"status": "ok", "source": source, "gaps": [0.0] * len(instances)}

    ev = repro._XEvaluator([InstanceSpec.x("X-n101-k25")] * 30, [1.0] * 30, 800)
    ev._inner = Inner()
    ev("src", [0, 1, 2, 3, 4], 0)
    ev("src", list(range(30)), 0)
    assert seen == [(5 * 360.0, 5 * 360.0), (30 * 360.0, 30 * 360.0)]


# -- verdicts on synthetic trials (no HGS run) --------------------------------------------------

def _result(method, seed, *, test_gap, srex=1.0, first=0.8, last=0.3, reward=0.05,
            expert=False, infeasible=0):
    from optzoo.experiment import Result, Trial

    m = {"failure_first": first, "failure_last": last, "reward_last": reward,
         "test_gap": test_gap, "srex_test_gap": srex, "test_infeasible": infeasible,
         "best_is_expert": expert}
    for k in range(3):
        m[f"diff_{k}"] = test_gap - srex
    return Result(Trial(method, "x-like-cvrp", seed, {}), m)


def test_rfthgs_claims_need_a_declared_effect():
    cfg = PRESETS["quick"]
    # the operator ties SREX in every seed (old rule: pooled CI below 0 needed; a tie is now
    # "not held" by the declared minimal gain, and ablations that tie rfthgs are not worse)
    rs = [_result(m, s, test_gap=1.0) for m in ("rfthgs", *repro.ABLATIONS) for s in range(3)]
    c = repro._claims(rs, cfg)
    assert [x.verdict.test for x in c] == ["all_of", "all_of", "superior", "superior",
                                           "superior"]
    assert c[0].status == "held"
    assert c[1].status == "not held" and all(x.status == "not held" for x in c[2:])
    # gains of 0.3 pp in every seed, ablations 0.3 pp worse: held
    rs = [_result("rfthgs", s, test_gap=0.7 + 0.01 * s) for s in range(3)]
    rs += [_result(a, s, test_gap=1.0 + 0.01 * s) for a in repro.ABLATIONS for s in range(3)]
    c = repro._claims(rs, cfg)
    assert all(x.status == "held" for x in c), [x.verdict.reason for x in c]
    # the tested operator is the expert in every seed: (b) and (c) decide nothing
    for r in rs:
        if r.trial.method == "rfthgs":
            r.metrics["best_is_expert"] = True
    c = repro._claims(rs, cfg)
    assert c[0].status == "held" and all(x.status == "inconclusive" for x in c[1:])


def test_rfthgs_failure_drop_and_reward_use_cis():
    cfg = PRESETS["quick"]
    # mean failure drop 0.23 and mean reward 0.02, but noisy (old rule: point means -> held)
    rs = [_result("rfthgs", s, test_gap=0.7, first=0.8, last=last, reward=rew)
          for s, (last, rew) in enumerate([(0.7, -0.2), (0.5, 0.1), (0.5, 0.16)])]
    assert repro._claims(rs, cfg)[0].status == "inconclusive"
    # an infeasible held-out run fails (b)
    rs = [_result("rfthgs", s, test_gap=0.7, infeasible=int(s == 1)) for s in range(3)]
    assert repro._claims(rs, cfg)[1].status == "not held"


def test_code_lm_claims_compare_with_srex_and_the_grammar_policy():
    """(d)-(f): the code LM's compile share must rise by the declared drop in failures, its
    operator must beat SREX and the grammar policy by the declared gap; ties fail, and an LM
    whose tested operator is always the SREX port decides nothing."""
    cfg = PRESETS["quick"]
    grammar = [_result("rfthgs", s, test_gap=1.0) for s in range(3)]
    tie = [_result("code-lm", s, test_gap=1.0, first=0.9, last=0.9) for s in range(3)]
    c = repro._claims(grammar + tie, cfg)
    assert [x.text[:3] for x in c[-3:]] == ["(d)", "(e)", "(f)"]
    assert all(x.status == "not held" for x in c[-3:]), [x.verdict.reason for x in c[-3:]]
    better = [_result("code-lm", s, test_gap=0.6 + 0.01 * s, first=0.9, last=0.4 - 0.02 * s)
              for s in range(3)]
    for r in better:
        for t in range(1, cfg.steps + 1):
            r.metrics[f"failure_frac@{t}"] = 0.9 if t == 1 else 0.4
    c = repro._claims(grammar + better, cfg)
    assert all(x.status == "held" for x in c[-3:]), [x.verdict.reason for x in c[-3:]]
    assert "at step 1: 0.1" in c[-3].evidence
    for r in better:
        r.metrics["best_is_expert"] = True
    c = repro._claims(grammar + better, cfg)
    assert c[-3].status == "held" and all(x.status == "inconclusive" for x in c[-2:])
    # without code-lm trials there are no (d)-(f) claims
    assert len(repro._claims(grammar, cfg)) == 2


def test_winning_sources_are_in_the_report_notes():
    r = _result("code-lm", 0, test_gap=0.5)
    r.metrics["best_source"] = "def crossover(parents, data, cost_evaluator, rng):\n    pass\n"
    notes = repro._winning_sources([r, _result("rfthgs", 0, test_gap=1.0)])
    assert len(notes) == 1 and "```python\ndef crossover(" in notes[0]
    assert "written by the model" in notes[0] and "0.500 %" in notes[0]


def test_local_lm_needs_a_model_folder(tmp_path):
    with pytest.raises(ConfigError, match="local_lm_path: method 'local-lm' needs"):
        RFTHGSRepro(methods=("rfthgs", "local-lm"))
    with pytest.raises(ConfigError, match="no config.json there"):
        RFTHGSRepro(methods=("rfthgs", "local-lm"), local_lm_path=str(tmp_path))
    # no preset runs it by default: there is no model to ship
    assert all("local-lm" not in cfg.methods for cfg in PRESETS.values())


def test_local_lm_fields_are_local_lm_trials_own(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    cfg = dataclasses.replace(PRESETS["quick"],
                              methods=("rfthgs", "code-lm", "local-lm"),
                              local_lm_path=str(tmp_path))
    by = {t.method: t for t in trials(cfg)}
    base = {t.method: t for t in trials(PRESETS["quick"])}
    # adding local-lm changes no other method's trial keys
    for m in ("rfthgs", "code-lm"):
        assert by[m].key(repro.SLUG) == base[m].key(repro.SLUG)
    assert set(by["local-lm"].params) - set(by["rfthgs"].params) == set(repro.LOCAL_LM_FIELDS)
    assert by["local-lm"].params["local_lm_path"] == str(tmp_path)


def test_local_lm_claims_are_g_to_i():
    cfg = PRESETS["quick"]
    grammar = [_result("rfthgs", s, test_gap=1.0) for s in range(3)]
    local = [_result("local-lm", s, test_gap=0.6 + 0.01 * s, first=0.9, last=0.4 - 0.02 * s)
             for s in range(3)]
    c = repro._claims(grammar + local, cfg)
    assert [x.text[:3] for x in c[-3:]] == ["(g)", "(h)", "(i)"]
    assert "the local model" in c[-3].text and "The local model" in c[-2].text
    assert all(x.status == "held" for x in c[-2:]), [x.verdict.reason for x in c[-2:]]
    tie = [_result("local-lm", s, test_gap=1.0) for s in range(3)]
    assert all(x.status == "not held" for x in repro._claims(grammar + tie, cfg)[-2:])


def test_a_local_lm_trial_runs_a_saved_model_end_to_end(tmp_path):
    """local-lm loads a Hugging Face model folder (here a tiny code LM saved by project code)
    and runs the whole trial: the RL loop, test-time sampling and the held-out test."""
    from optzoo.llm.models import TinyLlama, save_causal_lm
    from optzoo.routing import code_lm

    lm = code_lm.pretrain_code_lm(code_lm.CodeLMConfig(
        vocab_size=512, documents=6, steps=3, batch_size=2, model=TinyLlama(
            hidden_size=16, intermediate_size=32, num_layers=1, num_heads=2,
            max_position_embeddings=4096)), cache=False)
    folder = tmp_path / "my-code-model"
    save_causal_lm(lm.model, lm.tokenizer, folder)
    cfg = dataclasses.replace(PRESETS["smoke"], seeds=1, methods=("rfthgs", "local-lm"),
                              local_lm_path=str(folder), local_lm_max_new_tokens=24)
    trial = next(t for t in trials(cfg) if t.method == "local-lm")
    out = run_trial(trial, "cpu")
    assert out["lm_parameters"] == sum(p.numel() for p in lm.model.parameters())
    assert 0.0 <= out["failure_frac@1"] <= 1.0 and math.isfinite(out["test_gap"])
    assert "def crossover" in out["best_source"]
    notes = repro._notes(cfg, [Result(trial, out)])
    assert any(str(folder) in n and "claims (g)-(i)" in n for n in notes)
    # a model stored in bfloat16 is fine-tuned in float32: bfloat16 weights would round the
    # loop's lr-1e-6 steps away
    save_causal_lm(lm.model.to(torch.bfloat16), lm.tokenizer, tmp_path / "bf16")
    gen = repro._local_lm_policy(dataclasses.replace(cfg, local_lm_path=str(tmp_path / "bf16")),
                                 {}, "cpu")
    assert {p.dtype for p in gen.model.parameters()} == {torch.float32}


def test_the_pretraining_code_lm_trial_runs_first_and_the_other_lm_trials_last():
    ts = trials(PRESETS["quick"])
    assert (ts[0].method, ts[0].seed) == ("code-lm", 0)
    assert [t.method for t in ts[-2:]] == ["code-lm", "code-lm"]
    assert sorted((t.method, t.seed) for t in ts) == sorted(
        (m, s) for m in PRESETS["quick"].methods for s in range(PRESETS["quick"].seeds))
