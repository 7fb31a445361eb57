"""Neural architecture search: NATS-Bench-style cell spaces with exact costs, a first-order
DARTS / Gumbel supernet, ConNAS's constraint-guided gradient modification (ICLR 2026) and its
baselines (expected-cost penalty, post-hoc projection, constrained random search), a trained
ground-truth table on deformed scikit-learn digits (with measured latency), and a reader of
NATS-Bench's topology files.

Example:
    A ConNAS search of the 125-cell mini space on digits under a FLOPs budget (2 epochs
    here; the reproduction runs 30):

    >>> from optzoo.nas import MINI_TOPOLOGY as space
    >>> from optzoo.nas import SearchConfig, connas_search, digits_split
    >>> data = digits_split()                        # scikit-learn digits, N x 1 x 8 x 8
    >>> train = tuple(t[:128] for t in data["train"])   # (images, labels)
    >>> valid = tuple(t[:64] for t in data["val"])
    >>> budget = 70_314                              # FLOPs: 54 of the 125 cells fit
    >>> res = connas_search(space, train, valid, {"flops": budget},
    ...                     SearchConfig(epochs=2, batch_size=64), seed=0)
    >>> space.to_str(res.arch), space.flops(res.arch) <= budget
    ('|skip_connect~0|+|nor_conv_1x1~0|skip_connect~1|', True)
"""

from optzoo.nas.connas import (
    ConNAS,
    connas_gradient,
    connas_search,
    constraint_direction,
    edge_direction,
)
from optzoo.nas.darts import SearchConfig, SearchResult, SuperNet, search
from optzoo.nas.darts_penalty import (
    PenaltyGradient,
    additive_fit,
    darts_penalty_search,
    expected_cost,
)
from optzoo.nas.darts_projection import greedy_projection
from optzoo.nas.ground_truth import (
    GroundTruth,
    augmented_digits,
    digits_split,
    ground_truth_table,
    measure_latency,
)
from optzoo.nas.nats_bench import NatsRecord, load_nats_topology
from optzoo.nas.random_search import constrained_random_search
from optzoo.nas.search_space import MINI_TOPOLOGY, NATS_TOPOLOGY, OPS, CellSpace

__all__ = [
    "MINI_TOPOLOGY", "NATS_TOPOLOGY", "OPS", "CellSpace", "ConNAS", "GroundTruth", "NatsRecord",
    "PenaltyGradient", "SearchConfig", "SearchResult", "SuperNet", "additive_fit",
    "augmented_digits", "connas_gradient",
    "connas_search", "constrained_random_search", "constraint_direction",
    "darts_penalty_search", "digits_split", "edge_direction", "expected_cost",
    "greedy_projection", "ground_truth_table", "load_nats_topology", "measure_latency",
    "search",
]
