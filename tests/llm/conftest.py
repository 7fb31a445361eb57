"""Shared setup of the llm tests.

transformers loads its model classes lazily; importing them here puts that one-off cost
(seconds on a busy machine) at collection instead of into the first test's timing.  Tests run
on one thread, as reproductions' trials do: tiny models gain nothing from more, and the shared
machines lose from oversubscription.
"""

import pytest
import torch
from transformers import LlamaForCausalLM  # noqa: F401


@pytest.fixture(autouse=True)
def _one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
