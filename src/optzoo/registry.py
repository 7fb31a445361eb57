"""Paper cards: every ICLR 2026 paper optzoo covers, with its area, status and reproduction.

The registry is plain data and imports nothing heavy, so ``optzoo list`` answers at once; a
reproduction is named by ``"module:attribute"`` and imported only when it runs.
"""

from __future__ import annotations

import difflib
import importlib
from dataclasses import dataclass

from optzoo.errors import ConfigError, NotImplementedPaper

AREAS = (
    "predictions", "optim", "landscape", "kan", "bilevel", "unlearning", "bo", "llm", "policy",
    "preference", "specdec", "scaling", "routing", "scheduling", "mcts", "rl", "imaging",
    "graphs", "transport", "nas", "metanet", "recsys",
)


@dataclass(frozen=True)
class Paper:
    """One paper.

    Args:
        slug: file name of its brief in ``shared/papers`` and the name ``optzoo reproduce`` takes.
        title: the paper's title.
        method: the short name of its method.
        area: the folder ``optzoo.<area>`` its method lives in.
        openreview: OpenReview forum id, where known.
        reproduction: ``"module:attribute"`` of its :class:`~optzoo.experiment.Reproduction`,
            or ``None`` while the paper is planned.
    """

    slug: str
    title: str
    method: str
    area: str
    openreview: str | None = None
    reproduction: str | None = None

    @property
    def status(self) -> str:
        return "implemented" if self.reproduction else "planned"

    def load(self):
        """Import and return the paper's reproduction.

        Raises:
            NotImplementedPaper: the paper is registered but not implemented yet.
        """
        if self.reproduction is None:
            raise NotImplementedPaper(
                f"{self.slug}: the reproduction is planned, not implemented yet "
                f"(area {self.area!r}); see `optzoo list` for implemented papers"
            )
        module, _, attr = self.reproduction.partition(":")
        return getattr(importlib.import_module(module), attr)


_P = Paper
PAPERS: tuple[Paper, ...] = (
    _P("predictions-smoothness",
       "On Smoothness Bounds for Non-Clairvoyant Scheduling with Predictions",
       "Refined smoothness", "predictions", "Zcn4n57lHg",
       "optzoo.predictions.reproduce.smoothness:REPRODUCTION"),
    _P("decision-metrics",
       "Decision-Theoretic Approaches for Improved Learning-Augmented Algorithms",
       "Decision-theoretic metrics", "predictions", "XGEZ9q02Ys",
       "optzoo.predictions.reproduce.decision_metrics:REPRODUCTION"),
    _P("o2nc-doubly-optimistic",
       "Improving Online-to-Nonconvex Conversion for Smooth Optimization via Double Optimism",
       "ODOG", "optim", "ZAflv4dxQ9", "optzoo.optim.reproduce.o2nc:REPRODUCTION"),
    _P("adagrad-nesterov",
       "SGD with Adaptive Preconditioning: Unified Analysis and Momentum Acceleration",
       "AdaGrad family + Nesterov", "optim", "XhXMzPJJ7J",
       "optzoo.optim.reproduce.adagrad_nesterov:REPRODUCTION"),
    _P("steepest-mirror-flows",
       "Never Saddle for Reparameterized Steepest Descent as Mirror Flow",
       "Steepest mirror flows", "optim", "YgudIlQ9nC",
       "optzoo.optim.reproduce.steepest_mirror_flows:REPRODUCTION"),
    _P("ham", "Hyperbolic Aware Minimization: Implicit Bias for Sparsity",
       "HAM", "optim", "XKB5Hu0ACY", "optzoo.optim.reproduce.ham:REPRODUCTION"),
    _P("resurgence", "Globally Aware Optimization with Resurgence",
       "SURGE", "optim", "dhnyoea2Qj", "optzoo.optim.reproduce.resurgence:REPRODUCTION"),
    _P("entropic-barriers",
       "Entropic Confinement and Mode Connectivity in Overparameterized Neural Networks",
       "Entropic barriers", "landscape", "XyrNcsJhyN",
       "optzoo.landscape.reproduce.entropic_barriers:REPRODUCTION"),
    _P("kan-convergence",
       "On the Convergence of Two-Layer Kolmogorov-Arnold Networks with First-Layer Training",
       "KAN-TK convergence", "kan", "buuwRBYfrP",
       "optzoo.kan.reproduce.kan_convergence:REPRODUCTION"),
    _P("unibio", "Bilevel Optimization with Lower-Level Uniform Convexity: Theory and Algorithm",
       "UniBiO", "bilevel", "dJgb3ngAvT", "optzoo.bilevel.reproduce.unibio:REPRODUCTION"),
    _P("f2sa-p", "Faster Gradient Methods for Highly-Smooth Stochastic Bilevel Optimization",
       "F²SA-p", "bilevel", "XIAta0WOJ6",
       "optzoo.bilevel.reproduce.f2sa_p:REPRODUCTION"),
    _P("ofmu", "Optimization-Driven Framework for Machine Unlearning",
       "OFMU", "unlearning", "ZDuyNJI56H",
       "optzoo.unlearning.reproduce.ofmu:REPRODUCTION"),
    _P("bogrape", "BoGrape: Bayesian Optimization over Graphs with Shortest-Path Encoded",
       "BoGrape", "bo", "g0EbJrKFQJ", "optzoo.bo.reproduce.bogrape:REPRODUCTION"),
    _P("les", "Local Entropy Search over Descent Sequences for Bayesian Optimization",
       "LES", "bo", "cPxmLZmFa7", "optzoo.bo.reproduce.les:REPRODUCTION"),
    _P("gn-ivo", "Group-Normalized Implicit Value Optimization for Language Models",
       "GN-IVO", "policy", "eFXmrCun0c", "optzoo.policy.reproduce.gn_ivo:REPRODUCTION"),
    _P("spo", "Single-stream Policy Optimization", "SPO", "policy", "b61UW62K7W",
       "optzoo.policy.reproduce.spo:REPRODUCTION"),
    _P("offpolicy-grpo",
       "Revisiting Group Relative Policy Optimization: Insights into On-Policy and Off-Policy "
       "Training", "Off-policy GRPO", "policy", "XXfOf22o3K",
       "optzoo.policy.reproduce.offpolicy_grpo:REPRODUCTION"),
    _P("ti-dpo", "Token-Importance Guided Direct Preference Optimization",
       "TI-DPO", "preference", "cMEnMVvMw9", "optzoo.preference.reproduce.ti_dpo:REPRODUCTION"),
    _P("auxdpo", "Why DPO is a Misspecified Estimator and How to Fix It",
       "AuxDPO", "preference", None, "optzoo.preference.reproduce.auxdpo:REPRODUCTION"),
    _P("xtf", "Explainable Token-level Noise Filtering for LLM Fine-tuning Datasets",
       "XTF", "preference", "WEEodalWQg", "optzoo.preference.reproduce.xtf:REPRODUCTION"),
    _P("steporlm",
       "StepORLM: A Self-Evolving Framework with Generative Process Supervision for Operations "
       "Research Language Models", "StepORLM", "preference", "ZrgxU8WMmG",
       "optzoo.preference.reproduce.steporlm:REPRODUCTION"),
    _P("gto",
       "Bridging Draft Policy Misalignment: Group Tree Optimization for Speculative Decoding",
       "GTO", "specdec", "dwPdYFqVWO", "optzoo.specdec.reproduce.gto:REPRODUCTION"),
    _P("quant-robustness", "Training Dynamics Impact Post-Training Quantization Robustness",
       "Quantization robustness", "scaling", "ZXr3Xx7Z1O",
       "optzoo.scaling.reproduce.quant_robustness:REPRODUCTION"),
    _P("hp-transfer",
       "Completed Hyperparameter Transfer across Modules, Width, Depth, Batch and Duration",
       "Complete(d)P", "scaling", "elB9k4nTL1",
       "optzoo.scaling.reproduce.hp_transfer:REPRODUCTION"),
    _P("rfthgs",
       "Refining Hybrid Genetic Search for CVRP via Reinforcement Learning-Finetuned LLM",
       "RFTHGS", "routing", "aITKXFeivk",
       "optzoo.routing.reproduce.rfthgs:REPRODUCTION"),
    _P("mofjsp-dcan",
       "Neural Multi-Objective Combinatorial Optimization for Flexible Job Shop Scheduling "
       "Problems", "DCAN", "scheduling", "YAgOaYedLQ",
       "optzoo.scheduling.reproduce.mofjsp_dcan:REPRODUCTION"),
    _P("kvda-uct",
       "Grouping Nodes with Known Value Differences: A Lossless UCT-based Abstraction Algorithm",
       "KVDA-UCT", "mcts", "Zk0zZMSAYc",
       "optzoo.mcts.reproduce.kvda_uct:REPRODUCTION"),
    _P("dr-sac",
       "DR-SAC: Distributionally Robust Soft Actor-Critic for Reinforcement Learning under "
       "Uncertainty", "DR-SAC", "rl", "a19MA0ksbc",
       "optzoo.rl.reproduce.dr_sac:REPRODUCTION"),
    _P("adversarial-cmdp", "Primal-Dual Policy Optimization for Adversarial Linear CMDPs",
       "Weighted-LogSumExp primal-dual PO", "rl", "baP3Dw7bWO",
       "optzoo.rl.reproduce.adversarial_cmdp:REPRODUCTION"),
    _P("sparse-kernel-decomposition",
       "DISK: Differentiable Sparse Kernel Complex for Efficient Spatially-Variant Convolution",
       "DISK", "imaging", "bbuxDoRD2D",
       "optzoo.imaging.reproduce.sparse_kernel_decomposition:REPRODUCTION"),
    _P("dynamic-spectral-sparsifier", "Dynamic Kernel Graph Sparsifiers",
       "DynamicGeoSpar", "graphs", "DjtJV3ke1j",
       "optzoo.graphs.reproduce.dynamic_spectral_sparsifier:REPRODUCTION"),
    _P("hj-optimal-transport",
       "Neural Hamilton–Jacobi Characteristic Flows for Optimal Transport",
       "NCF", "transport", "YbQxus1KEa",
       "optzoo.transport.reproduce.hj_optimal_transport:REPRODUCTION"),
    _P("connas", "Constraint-guided Hardware-aware NAS through Gradient Modification",
       "ConNAS", "nas", "fcKMFIiNFQ",
       "optzoo.nas.reproduce.connas:REPRODUCTION"),
    _P("quasi-equivariant-metanetworks", "Quasi-Equivariant Metanetworks",
       "QE-NFN", "metanet", "XMiDpi2mWY",
       "optzoo.metanet.reproduce.quasi_equivariant_metanetworks:REPRODUCTION"),
    _P("diversity-topk",
       "Gradient-Based Diversity Optimization with Differentiable Top-k Objective",
       "DDT / MDR", "recsys", "cuzWopwoZG",
       "optzoo.recsys.reproduce.diversity_topk:REPRODUCTION"),
)

# Hidden cards: reproductions the engine's tests run end to end; not papers, never listed.
_INTERNAL = (
    Paper("_selftest", "Engine self-test: Monte Carlo estimates of pi", "self-test",
          "experiment", reproduction="optzoo.experiment.selftest:REPRODUCTION"),
)

CARDS: tuple[Paper, ...] = (*PAPERS, *_INTERNAL)  # every card ``get`` knows, hidden ones last
_BY_SLUG = {p.slug: p for p in CARDS}


def get(slug: str) -> Paper:
    """The paper registered under ``slug``.

    Raises:
        ConfigError: unknown slug; the message suggests the closest slugs or areas
            ("did you mean ...") instead of listing all of them.

    Example:
        >>> get("ham").method
        'HAM'
        >>> try:
        ...     get("hamm")
        ... except ConfigError as err:
        ...     print(str(err).partition("?")[0])
        unknown paper 'hamm'; did you mean 'ham'
    """
    try:
        return _BY_SLUG[slug]
    except KeyError:
        names = [*(p.slug for p in PAPERS), *AREAS, "all"]
        close = difflib.get_close_matches(slug.lower(), names, n=3, cutoff=0.6)
        hint = f"did you mean {' or '.join(map(repr, close))}? " if close else ""
        raise ConfigError(
            f"unknown paper {slug!r}; {hint}expected a slug, an area or 'all' "
            f"(see `optzoo list`)"
        ) from None


def select(target: str) -> list[Paper]:
    """Papers named by ``target``: a slug, an area name, or ``"all"``."""
    if target == "all":
        return list(PAPERS)
    if target in AREAS:
        return [p for p in PAPERS if p.area == target]
    return [get(target)]


def markdown_table() -> str:
    """The README's paper table (``optzoo list --markdown``)."""
    lines = ["| slug | paper | method | area | status |", "|---|---|---|---|---|"]
    for p in PAPERS:
        title = p.title
        if p.openreview:
            title = f"[{title}](https://openreview.net/forum?id={p.openreview})"
        lines.append(f"| `{p.slug}` | {title} | {p.method} | `{p.area}` | {p.status} |")
    return "\n".join(lines)
