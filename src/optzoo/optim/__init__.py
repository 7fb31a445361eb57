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

Every class is registered in :mod:`optzoo.optim.registry`, which drives the generic tests.
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

__all__ = ["ASGO", "DASGO", "O2NC", "AcceleGrad", "AdaGradNorm", "DiagAdaGrad", "NormalizedSGD",
           "HAM", "Scion", "SignSGD", "SteepestDescent"]
