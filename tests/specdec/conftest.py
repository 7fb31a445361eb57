"""Shared setup of the specdec tests: one torch thread (tiny models gain nothing from more and
the shared machines lose from oversubscription), set for the whole session so module-scoped
fixtures train on one thread too."""

import pytest
import torch
from transformers import LlamaForCausalLM  # noqa: F401  (lazy import cost at collection)


@pytest.fixture(autouse=True, scope="session")
def _one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
