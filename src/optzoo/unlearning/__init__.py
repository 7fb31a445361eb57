"""Machine unlearning: OFMU (Asif & Amiri, "OFMU: Optimization-Driven Framework for Machine
Unlearning", ICLR 2026, OpenReview ZDuyNJI56H) and the baselines it is compared with — gradient
ascent, GradDiff, NPO, fine-tuning on the retain set, retraining from scratch — with the
evaluation metrics (accuracies, loss-threshold MIA AUC, KL to the retrained model).

Every method takes any ``nn.Module`` (a classifier, or a causal LM returning ``(B, T, V)``
logits), loss callables ``loss(model, batch) -> scalar`` and the data as one batch or an iterable
of batches; it updates the model in place and returns an :class:`UnlearningResult` with the
per-step history.
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
