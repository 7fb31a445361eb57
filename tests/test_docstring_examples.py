"""Every area's package docstring and every entry point below carries a runnable ``>>>``
example, and each example runs (doctest, ELLIPSIS and NORMALIZE_WHITESPACE).

An entry point is what a user of the area reaches for first: the paper's method (optimizer,
acquisition, loss, solver, estimator) and the problem or baseline its README section uses.
"""

from __future__ import annotations

import doctest
import importlib
import inspect

import pytest

AREAS = ["bilevel", "bo", "graphs", "imaging", "kan", "landscape", "llm", "mcts", "metanet",
         "nas", "optim", "policy", "predictions", "preference", "recsys", "rl", "routing",
         "scaling", "scheduling", "transport", "unlearning", "experiment"]

ENTRY_POINTS = {
    "optzoo.bilevel": ["F2SA", "UniBiO", "BilevelProblem"],
    "optzoo.bo": ["LocalEntropySearch", "run_les", "run_logei"],
    "optzoo.bo.graphs": ["BoGrape", "CustomConstraint", "molecular_space"],
    "optzoo.graphs": ["SpectralSparsifier", "DynamicSpectralSparsifier", "make_kernel"],
    "optzoo.imaging": ["SparseKernelComplex", "fit_sparse_kernel", "apply_sparse"],
    "optzoo.kan": ["TwoLayerKAN", "kan_tangent_kernel", "predicted_loss_curve"],
    "optzoo.landscape": ["find_path", "EntropicToy", "entropic_drift_rate"],
    "optzoo.llm": ["tiny_llama", "char_tokenizer", "Addition", "rollout"],
    "optzoo.mcts": ["KVDAUCT", "OGAUCT", "UCT", "play_episode", "GymDeterministicEnv"],
    "optzoo.metanet": ["QuasiEquivariantNFN", "MonomialNFN", "relu_mlp_zoo"],
    "optzoo.nas": ["ConNAS", "connas_search", "CellSpace"],
    "optzoo.optim": ["ASGO", "DASGO", "O2NC", "HAM", "SteepestDescent", "SurgeLR",
                     "AdaGradNorm", "AcceleGrad"],
    "optzoo.policy": ["grpo_loss", "gn_ivo_loss", "spo_advantages", "SPOValueTracker",
                      "offpolicy_grpo_loss", "OffPolicySchedule"],
    "optzoo.predictions": ["ContractScheduling", "OneMaxSearch", "SkiRental", "d_avg"],
    "optzoo.preference": ["auxdpo_loss", "ti_dpo_loss", "token_importance", "dpo_loss"],
    "optzoo.recsys": ["balance", "mgda_beta", "soft_topk_indicator", "dpp_rerank"],
    "optzoo.rl": ["DRSAC", "kl_dro_dual", "PDPOConfig", "run_pdpo"],
    "optzoo.routing": ["run_hgs", "srex", "generate_x_like", "evaluate_operator"],
    "optzoo.scaling": ["Parameterisation", "param_groups", "coordinate_check"],
    "optzoo.scheduling": ["FJSPEnv", "dispatch", "nsga2", "hypervolume", "sd2_instance"],
    "optzoo.transport": ["HJOptimalTransport", "ICNNOptimalTransport", "energy_distance"],
    "optzoo.unlearning": ["ofmu", "ofmu_gradients", "npo_loss"],
}

_FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


@pytest.fixture(autouse=True)
def _one_torch_thread():
    """The examples are tiny: two threads contending on two loaded cores cost 15-20 ms per
    small op (coordinate_check 6 s vs 0.1 s); restore the worker's setting afterwards."""
    import torch

    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def _run(obj, module) -> doctest.TestResults:
    runner = doctest.DocTestRunner(optionflags=_FLAGS)
    for t in doctest.DocTestFinder(recurse=False).find(obj, module.__name__,
                                                      globs={"__name__": module.__name__}):
        runner.run(t)
    return runner.summarize(verbose=False)


@pytest.mark.parametrize("area", AREAS)
def test_area_docstring_has_a_running_example(area):
    m = importlib.import_module(f"optzoo.{area}")
    assert ">>>" in (m.__doc__ or ""), f"optzoo.{area}: the package docstring has no example"
    res = _run(m, m)
    assert res.attempted > 0 and res.failed == 0, f"optzoo.{area}: {res.failed} failing"


@pytest.mark.parametrize(("module", "name"),
                         [(m, n) for m, names in ENTRY_POINTS.items() for n in names])
def test_entry_point_has_a_running_example(module, name):
    m = importlib.import_module(module)
    obj = getattr(m, name)
    assert ">>>" in (inspect.getdoc(obj) or ""), f"{module}.{name}: no >>> example"
    res = _run(obj, importlib.import_module(obj.__module__))
    assert res.attempted > 0 and res.failed == 0, f"{module}.{name}: {res.failed} failing"


def test_entry_points_are_exported():
    for module, names in ENTRY_POINTS.items():
        exported = set(importlib.import_module(module).__all__)
        assert set(names) <= exported, f"{module}: {set(names) - exported} not in __all__"
