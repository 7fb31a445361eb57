"""LAWA — LAtest Weight Averaging (Kaddour 2022; Sanyal et al. 2023), the averaging intervention
of Catalan-Tatjer et al., "Training Dynamics Impact Post-Training Quantization Robustness" (ICLR
2026): the uniform parameter average of the latest ``L`` saved checkpoints,

    θ_LAWA = (1 / L) · Σ_{i = k−L+1}^{k} θ_i                                    (LAWA)

taken during the *stable* (constant-lr) phase instead of a learning-rate decay.  The paper's
``weight_averaging.py`` averages the checkpoints in full precision and the result is then
quantized with the same GPTQ settings as every other checkpoint (its configs use L ∈ {2, 3});
floating-point tensors are averaged, integer buffers are taken from the newest checkpoint.

Example:
    >>> import torch
    >>> from optzoo.scaling.lawa import LAWA
    >>> model = torch.nn.Linear(1, 1, bias=False)
    >>> lawa = LAWA(window=2)
    >>> for w in (1.0, 2.0, 4.0):                # three checkpoints; the first falls out
    ...     _ = model.weight.data.fill_(w)
    ...     lawa.update(model)
    >>> lawa.averaged(model).weight.item()
    3.0
"""

from __future__ import annotations

import copy
from collections import deque
from collections.abc import Mapping, Sequence

import torch

from optzoo.checks import check_int

__all__ = ["LAWA", "average_state_dicts"]


def average_state_dicts(states: Sequence[Mapping[str, torch.Tensor]]) -> dict[str, torch.Tensor]:
    """The uniform average of ``states`` (same keys and shapes): floating tensors averaged in
    float64 and cast back, other tensors copied from the last state."""
    if len(states) == 0:
        raise ValueError("states: expected at least one state dict")
    keys = list(states[-1].keys())
    for i, s in enumerate(states):
        if list(s.keys()) != keys:
            raise ValueError(f"states: state {i} has different keys from the last one")
    out = {}
    for k in keys:
        ref = states[-1][k]
        if any(tuple(s[k].shape) != tuple(ref.shape) for s in states):
            raise ValueError(f"states: tensor {k!r} has different shapes across states")
        if ref.is_floating_point():
            acc = torch.zeros(ref.shape, dtype=torch.float64, device=ref.device)
            for s in states:
                acc += s[k].detach().to(torch.float64)
            out[k] = (acc / len(states)).to(ref.dtype)
        else:
            out[k] = ref.detach().clone()
    return out


class LAWA:
    """A sliding window of the latest ``window`` checkpoints and their uniform average.

    Args:
        window: L, the number of latest checkpoints averaged.
    """

    def __init__(self, window: int):
        check_int("window", window, low=1)
        self.window = int(window)
        self._states: deque[dict[str, torch.Tensor]] = deque(maxlen=self.window)
        self.steps: deque[int | None] = deque(maxlen=self.window)

    def __len__(self) -> int:
        return len(self._states)

    def update(self, model_or_state, step: int | None = None) -> None:
        """Save a checkpoint (a detached copy of a module's ``state_dict`` or of a state dict);
        the oldest falls out of the window."""
        state = (model_or_state.state_dict() if isinstance(model_or_state, torch.nn.Module)
                 else model_or_state)
        if not isinstance(state, Mapping):
            raise ValueError(f"model_or_state: expected a module or a state dict, got "
                             f"{type(model_or_state).__name__}")
        self._states.append({k: v.detach().clone() for k, v in state.items()})
        self.steps.append(step)

    @property
    def full(self) -> bool:
        """Whether the window holds ``window`` checkpoints."""
        return len(self._states) == self.window

    def average(self) -> dict[str, torch.Tensor]:
        """The uniform average of the checkpoints in the window (Eq. LAWA)."""
        if not self._states:
            raise ValueError("LAWA: no checkpoint saved yet (call update first)")
        return average_state_dicts(list(self._states))

    def averaged(self, model: torch.nn.Module) -> torch.nn.Module:
        """A deep copy of ``model`` loaded with :meth:`average` (``model`` is unchanged)."""
        out = copy.deepcopy(model)
        out.load_state_dict(self.average())
        return out
