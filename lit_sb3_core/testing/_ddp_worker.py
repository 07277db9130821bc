"""One rank of the conformance kit's DDP check: ``python -m lit_sb3_core.testing._ddp_worker CONFIG``.

Lightning's ``strategy="ddp"`` re-runs this module once per extra rank. ``CONFIG`` is a JSON object:
``algo``, ``kwargs`` (constructor arguments), ``env`` (the training env, base64 of its pickle: an env id
or an importable factory), ``steps`` and ``out`` (each rank writes ``<out>.<rank>.json``).
"""

from __future__ import annotations

import base64
import hashlib
import json
import pickle
import sys
import warnings
from typing import Any


def weights_digest(model: Any) -> str:
    """A fingerprint of the policy's weights, to compare ranks without sending every number."""
    import torch

    weights = torch.cat([p.detach().flatten().double() for p in model.policy.parameters()])
    return hashlib.sha256(weights.cpu().numpy().tobytes()).hexdigest()


def main() -> None:
    import torch
    from lightning.pytorch.callbacks import Callback

    from lit_sb3_core import RLEnvDataModule, RLTrainer, make_algo

    initial: list[str] = []

    class RecordInitialWeights(Callback):
        def on_train_start(self, trainer: Any, pl_module: Any) -> None:
            initial.append(weights_digest(pl_module))

    torch.set_num_threads(1)
    warnings.filterwarnings("ignore")
    config = json.loads(sys.argv[1])
    env = pickle.loads(base64.b64decode(config["env"]))  # written by the kit in the parent test process
    model = make_algo(config["algo"], seed=0, **config["kwargs"])
    trainer = RLTrainer(
        max_steps=config["steps"],
        strategy="ddp",
        accelerator="cpu",
        devices=2,
        logger=False,
        enable_progress_bar=False,
        enable_checkpointing=False,
        callbacks=[RecordInitialWeights()],
    )
    trainer.fit(model, datamodule=RLEnvDataModule(train_env=env, n_envs=1, seed=0))
    result = {
        "rank": trainer.global_rank,
        "num_timesteps": model.num_timesteps,
        "initial_weights_sha256": initial[0],
        "weights_sha256": weights_digest(model),
    }
    with open(f"{config['out']}.{trainer.global_rank}.json", "w") as handle:
        json.dump(result, handle)


if __name__ == "__main__":
    main()
