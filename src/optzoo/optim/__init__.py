"""Optimizers of the ``optim`` area, each a :class:`torch.optim.Optimizer`.

* :class:`O2NC` -- online-to-nonconvex conversion; ``hint="extrapolated"`` is ODOG
  (Patitucci, Jiang & Mokhtari, ICLR 2026), the other hints are the baselines it improves on;
  :class:`NormalizedSGD` (Cutkosky & Mehta 2020) is a further baseline.
* :class:`AdaGradNorm`, :class:`DiagAdaGrad`, :class:`ASGO`, :class:`DASGO` -- SGD with
  AdaGrad-type preconditioning, Algorithm 1 of Kovalev (ICLR 2026), and with ``nesterov=True``
  its accelerated Algorithm 2; :class:`Scion` (Pethick et al. 2025), the non-accumulating limit;
  :class:`AcceleGrad` (Levy, Yurtsever & Cevher 2018), the prior accelerated scalar baseline.
* :class:`SteepestDescent`, :class:`SignSGD` -- L_p steepest descent with coupled or decoupled
  weight decay (Jacobs, Zhou & Burkholz, ICLR 2026); :mod:`optzoo.optim.mirror_flow` holds the
  reparameterized models and the steepest mirror flow they induce.
* :class:`HAM` -- Hyperbolic Aware Minimization (Jacobs, Gadhikar, Rubio-Madrigal & Burkholz,
  ICLR 2026): a base optimizer's step (Adam by default) followed by a hyperbolic mirror step;
  :meth:`HAM.wrap` takes an optimizer already built.
* :class:`SurgeLR` -- SURGE (Bu, ICLR 2026), a :class:`torch.optim.lr_scheduler.LRScheduler`
  that scales any optimizer's learning rate by ``a_t`` from estimated critical values of the
  loss; :func:`module_targets` computes those values for an ``nn.Module``
  (:mod:`optzoo.optim.resurgence` holds the analysis phase; imported on first use).

Example::

    >>> import torch
    >>> from optzoo.optim import SteepestDescent, SurgeLR
    >>> model = torch.nn.Linear(3, 1)
    >>> opt = SteepestDescent(model.parameters(), lr=0.01)  # sign descent by default
    >>> sched = SurgeLR(opt, targets=[0.05])
    >>> loss = model(torch.randn(4, 3)).pow(2).mean()
    >>> loss.backward()
    >>> a = sched.step(loss)
    >>> opt.step()

Every optimizer class (all but the scheduler :class:`SurgeLR`) is registered in
:mod:`optzoo.optim.registry`, which drives the generic tests.
"""

from optzoo.optim.accelegrad import AcceleGrad
from optzoo.optim.adagrad import DiagAdaGrad
from optzoo.optim.adagrad_norm import AdaGradNorm
from optzoo.optim.asgo import ASGO
from optzoo.optim.dasgo import DASGO
from optzoo.optim.ham import HAM
from optzoo.optim.normalized_sgd import NormalizedSGD
from optzoo.optim.o2nc import O2NC
from optzoo.optim.scion import Scion
from optzoo.optim.steepest_descent import SignSGD, SteepestDescent
from optzoo.optim.surge import SurgeLR

__all__ = ["ASGO", "DASGO", "O2NC", "AcceleGrad", "AdaGradNorm", "DiagAdaGrad", "NormalizedSGD",
           "HAM", "Scion", "SignSGD", "SteepestDescent", "SurgeLR", "module_targets"]


def __getattr__(name: str):
    # module_targets lives with the analysis phase, which imports sympy/mpmath: load on use.
    if name == "module_targets":
        from optzoo.optim.resurgence import module_targets

        return module_targets
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
