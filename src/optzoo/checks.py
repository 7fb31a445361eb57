"""Argument checks shared by the areas: each raises ``ValueError`` / ``TypeError`` naming the
argument and what was expected, and returns the value unchanged (so a check never alters a
result for a valid input).

Example::

    >>> from optzoo.checks import check_real, check_int
    >>> check_real("eps", 1e-4, low=0.0, low_open=True)
    0.0001
    >>> check_int("n", 3, low=1)
    3
    >>> check_real("eps", -1.0, low=0.0)
    Traceback (most recent call last):
    ...
    ValueError: eps: expected a finite real number >= 0.0, got -1.0
"""

from __future__ import annotations

import math
import numbers

import numpy as np

__all__ = ["check_real", "check_int", "check_finite_array", "check_generator", "check_tensor"]


def check_real(name: str, value: object, *, low: float | None = None, high: float | None = None,
               low_open: bool = False, high_open: bool = False, finite: bool = True) -> object:
    """``value`` must be a real number (not a bool), not NaN, finite unless ``finite=False``,
    and within the bounds (``None`` = unbounded, ``*_open`` excludes the bound)."""
    v = value
    if hasattr(v, "numel") and hasattr(v, "item"):  # a torch scalar tensor
        if v.numel() != 1:
            raise ValueError(f"{name}: expected a scalar, got a tensor of shape {tuple(v.shape)}")
        v = v.item()
    elif isinstance(v, np.ndarray):
        if v.size != 1:
            raise ValueError(f"{name}: expected a scalar, got an array of shape {v.shape}")
        v = v.item()
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise TypeError(f"{name}: expected a real number, got {type(value).__name__} {value!r}")
    f = float(v)
    bounds = []
    if low is not None:
        bounds.append(f"{'>' if low_open else '>='} {low}")
    if high is not None:
        bounds.append(f"{'<' if high_open else '<='} {high}")
    what = ("a finite real number" if finite else "a real number") + (
        " " + " and ".join(bounds) if bounds else "")
    if math.isnan(f) or (finite and math.isinf(f)):
        raise ValueError(f"{name}: expected {what}, got {value!r}")
    if low is not None and (f < low or (low_open and f == low)):
        raise ValueError(f"{name}: expected {what}, got {value!r}")
    if high is not None and (f > high or (high_open and f == high)):
        raise ValueError(f"{name}: expected {what}, got {value!r}")
    return value


def check_int(name: str, value: object, *, low: int | None = None,
              high: int | None = None) -> object:
    """``value`` must be an integer (Python or NumPy, not a bool) within ``[low, high]``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name}: expected an integer, got {type(value).__name__} {value!r}")
    if (low is not None and value < low) or (high is not None and value > high):
        rng = " and ".join(s for s in (f">= {low}" if low is not None else "",
                                       f"<= {high}" if high is not None else "") if s)
        raise ValueError(f"{name}: expected an integer {rng}, got {value!r}")
    return value


def check_finite_array(name: str, x: object, *, ndim: int | tuple[int, ...] | None = None,
                       allow_nan: bool = False) -> np.ndarray:
    """``x`` as a float NumPy array: real-valued, of ``ndim`` dimensions, with no ±inf (and no
    NaN unless ``allow_nan``).  Returns ``np.asarray(x, float)``."""
    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{name}: expected an array of real numbers, got "
                        f"{type(x).__name__}") from e
    dims = (ndim,) if isinstance(ndim, int) else ndim
    if dims is not None and a.ndim not in dims:
        raise ValueError(f"{name}: expected a {' or '.join(map(str, dims))}-D array, "
                         f"got shape {a.shape}")
    bad = np.isinf(a) if allow_nan else ~np.isfinite(a)
    if bad.any():
        raise ValueError(f"{name}: expected finite values, got {int(bad.sum())} non-finite "
                         f"entr{'y' if bad.sum() == 1 else 'ies'}")
    return a


def check_tensor(name: str, x: object, *, ndim: int | tuple[int, ...] | None = None,
                 floating: bool = True, finite: bool = True):
    """``x`` must be a ``torch.Tensor`` (floating-point if ``floating``) of ``ndim`` dimensions
    with finite entries (if ``finite``).  Returns ``x``.  The finiteness test synchronises a GPU
    once per call."""
    import torch

    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name}: expected a torch.Tensor, got {type(x).__name__}")
    if floating and not x.is_floating_point():
        raise TypeError(f"{name}: expected a floating-point tensor, got dtype {x.dtype}")
    dims = (ndim,) if isinstance(ndim, int) else ndim
    if dims is not None and x.dim() not in dims:
        raise ValueError(f"{name}: expected a {' or '.join(map(str, dims))}-D tensor, "
                         f"got shape {tuple(x.shape)}")
    if finite and x.is_floating_point() and not bool(torch.isfinite(x).all()):
        raise ValueError(f"{name}: expected finite values, got NaN or ±inf")
    return x


def check_generator(name: str, rng: object) -> np.random.Generator:
    """``rng`` must be a ``numpy.random.Generator`` (pass ``np.random.default_rng(seed)``)."""
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"{name}: expected a numpy.random.Generator (e.g. "
                        f"np.random.default_rng({rng!r}) for a seed), got {type(rng).__name__}")
    return rng
