"""Machine unlearning: OFMU (Asif & Amiri, "OFMU: Optimization-Driven Framework for Machine
Unlearning", ICLR 2026, OpenReview ZDuyNJI56H) and the baselines it is compared with — gradient
ascent, GradDiff, NPO, fine-tuning on the retain set, retraining from scratch — with the
evaluation metrics (accuracies, loss-threshold MIA AUC, KL to the retrained model).

Every method takes any ``nn.Module`` (a classifier, or a causal LM returning ``(B, T, V)``
logits), loss callables ``loss(model, batch) -> scalar`` and the data as one batch or an iterable
of batches; it updates the model in place and returns an :class:`UnlearningResult` with the
per-step history.

Example:
    >>> import math
    >>> import torch
    >>> from optzoo.unlearning import accuracy, capped, classification_ce, ofmu
    >>> _ = torch.manual_seed(0)
    >>> x = torch.randn(300, 4)
    >>> y = torch.bucketize(x[:, :2].sum(1), torch.tensor([-0.8, 0.8]))  # 3 classes
    >>> model = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.ReLU(),
    ...                             torch.nn.Linear(16, 3))
    >>> opt = torch.optim.Adam(model.parameters(), lr=3e-2)
    >>> for _ in range(30):  # the trained model to unlearn from
    ...     opt.zero_grad()
    ...     classification_ce(model, (x, y)).backward()
    ...     opt.step()
    >>> forget, retain = (x[y == 2], y[y == 2]), (x[y != 2], y[y != 2])  # forget class 2
    >>> result = ofmu(model, capped(math.log(3)), classification_ce, forget, retain,
    ...               rounds=10, inner_steps=3, lr=0.5)  # raise bounded L_f, keep L_r
    >>> bool(accuracy(model, *forget) < 0.1), bool(accuracy(model, *retain) > 0.9)
    (True, True)
"""

from optzoo.unlearning._loop import UnlearningResult
from optzoo.unlearning.finetune import finetune
from optzoo.unlearning.graddiff import graddiff
from optzoo.unlearning.gradient_ascent import gradient_ascent
from optzoo.unlearning.losses import (
    capped,
    classification_ce,
    example_losses,
    sequence_logprob,
    token_cross_entropy,
)
from optzoo.unlearning.metrics import (
    accuracy,
    js_divergence,
    kl_divergence,
    loss_mia_auc,
    mia_auc,
)
from optzoo.unlearning.npo import npo, npo_loss
from optzoo.unlearning.ofmu import (
    VARIANTS,
    OFMUGradients,
    cosine_similarity,
    ofmu,
    ofmu_gradients,
)
from optzoo.unlearning.retrain import retrain

__all__ = [
    "VARIANTS",
    "OFMUGradients",
    "UnlearningResult",
    "accuracy",
    "capped",
    "classification_ce",
    "cosine_similarity",
    "example_losses",
    "finetune",
    "graddiff",
    "gradient_ascent",
    "js_divergence",
    "kl_divergence",
    "loss_mia_auc",
    "mia_auc",
    "npo",
    "npo_loss",
    "ofmu",
    "ofmu_gradients",
    "retrain",
    "sequence_logprob",
    "token_cross_entropy",
]
