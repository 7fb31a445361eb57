"""One torch thread per test: these tensors are tiny, and on shared CPUs a second thread costs
more in synchronisation than it gains (the same choice as the reproductions' run_trial)."""

import pytest
import torch


@pytest.fixture(autouse=True)
def _one_torch_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
