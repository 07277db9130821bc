"""Small networks train fastest, and most reproducibly, on one thread (and CI machines are small)."""

import pytest
import torch


@pytest.fixture(autouse=True)
def _one_torch_thread() -> None:
    torch.set_num_threads(1)
