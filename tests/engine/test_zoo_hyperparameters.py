"""Every tuned entry the plugins ship (rl-zoo3's, generated, and the hand-checked ones) builds its model and
trains from it.

The short run keeps every setting of the entry except the sizes that decide how long one iteration takes:
the number of envs (at most 2), the rollout length (``n_steps``, and ``batch_size`` with it), the warm-up
and buffer of off-policy methods, ARS's number of directions, and episodes cut to 50 steps, so that each
entry costs about a second; the networks, optimizers, schedules, normalization, noise, gSDE and Atari
preprocessing are the entry's own. ``-m slow`` runs each entry for one full iteration of its own sizes instead.
"""

from __future__ import annotations

import importlib.util
from typing import Any

import gymnasium as gym
import pytest

from lit_sb3_core import RLEnvDataModule, RLTrainer, get_algo_class, list_algos
from lit_sb3_core.engine.tuned import ATARI_KEY, split_tuned
from lit_sb3_core.envs.atari import is_atari_id

_HAS = {name: importlib.util.find_spec(module) is not None for name, module in
        {"atari": "ale_py", "mujoco": "mujoco", "box2d": "Box2D"}.items()}  # fmt: skip
_ON_POLICY_SIZES = ("n_steps", "batch_size")
_SHORT_EPISODES = 50


def _family(env_id: str) -> str:
    if env_id == ATARI_KEY:
        return "atari"
    name = env_id.rpartition("-")[0]
    if name in ("LunarLander", "LunarLanderContinuous", "BipedalWalker", "BipedalWalkerHardcore"):
        return "box2d"
    spec = gym.registry.get(env_id)
    if spec is not None and "mujoco" in str(spec.entry_point):
        return "mujoco"
    return "classic"


def _entries() -> list[Any]:
    import lit_sb3_ppo_recurrent.envs  # noqa: F401  (registers the *NoVel ids)

    params = []
    for algo in list_algos():
        for env_id in sorted(getattr(get_algo_class(algo), "tuned_hyperparameters", {}) or {}):
            family = _family(env_id)
            marks = []
            if family != "classic" and not _HAS[family]:
                marks.append(pytest.mark.skip(reason=f"the {family} extra is not installed"))
            # -v4 and -v5 MuJoCo entries are the same settings: the -v4 twin only has to build.
            params.append(pytest.param(algo, env_id, marks=marks, id=f"{algo}-{env_id}"))
    return params


def _env_for(env_id: str) -> str:
    return "BreakoutNoFrameskip-v4" if env_id == ATARI_KEY else env_id


def _shortened(algo_cls: type, model: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
    model = dict(model)
    data["n_envs"] = n_envs = min(int(data.get("n_envs", 1)), 2)
    if "n_steps" in _init_args(algo_cls):
        n_steps = min(int(model.get("n_steps", 16)), 16)
        model["n_steps"] = n_steps
        if "batch_size" in _init_args(algo_cls):
            model["batch_size"] = n_steps * n_envs
    if "learning_starts" in _init_args(algo_cls):
        model["learning_starts"] = min(
            int(model.get("learning_starts", 100)), 56
        )  # a few updates in 64 steps
        model["buffer_size"] = min(int(model.get("buffer_size", 1_000_000)), 2_000)
    if "n_delta" in _init_args(algo_cls):
        model["n_delta"] = min(int(model.get("n_delta", 8)), 2)
        model["n_top"] = min(int(model.get("n_top") or model["n_delta"]), model["n_delta"])
    return model


def _init_args(cls: type) -> set[str]:
    import inspect

    return set(inspect.signature(cls.__init__).parameters)


def _fit(algo: str, env_id: str, short: bool) -> Any:
    cls = get_algo_class(algo)
    split = split_tuned(cls, cls.tuned_hyperparameters[env_id])
    model_args, data = split["model"], dict(split["data"])
    if short:
        model_args = _shortened(cls, model_args, data)
        data["env_kwargs"] = {**data.get("env_kwargs", {}), "max_episode_steps": _SHORT_EPISODES}
    model = cls(seed=0, **model_args)
    dm = RLEnvDataModule(train_env=_env_for(env_id), **data)
    steps = 64 if short else 1
    trainer = RLTrainer(
        max_steps=steps,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    trainer.fit(model, datamodule=dm)
    dm.close()
    return model


@pytest.mark.filterwarnings("ignore::UserWarning", "ignore::DeprecationWarning")
@pytest.mark.parametrize(("algo", "env_id"), _entries())
def test_tuned_entry_builds_and_trains(algo: str, env_id: str) -> None:
    cls = get_algo_class(algo)
    split = split_tuned(cls, cls.tuned_hyperparameters[env_id])
    assert split["trainer"].get("max_steps", 1) > 0
    if env_id.endswith("-v4") and env_id.replace("-v4", "-v5") in cls.tuned_hyperparameters:
        model = cls(seed=0, env=env_id, **split["model"])  # the -v5 twin trains below
        assert model.policy is not None
        return
    model = _fit(algo, env_id, short=True)
    assert model.num_timesteps >= 64


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::UserWarning", "ignore::DeprecationWarning")
@pytest.mark.parametrize(("algo", "env_id"), _entries())
def test_tuned_entry_runs_one_full_iteration(algo: str, env_id: str) -> None:
    model = _fit(algo, env_id, short=False)
    assert model.num_timesteps >= 1


def test_atari_ids_take_the_atari_entry() -> None:
    pytest.importorskip("ale_py", reason="the atari extra is not installed")
    from lit_sb3_core import tuned_hyperparameters

    assert (
        is_atari_id("PongNoFrameskip-v4")
        and is_atari_id("ALE/Breakout-v5")
        and not is_atari_id("CartPole-v1")
    )
    split = tuned_hyperparameters("ppo", "ALE/Breakout-v5")
    assert split["data"]["atari"] is True and split["data"]["n_envs"] == 8
    assert split["model"]["policy"] == "CnnPolicy" and split["trainer"]["max_steps"] == 10_000_000
    assert tuned_hyperparameters("dqn", "PongNoFrameskip-v4")["model"]["buffer_size"] == 100_000
    lstm = tuned_hyperparameters("recurrent_ppo", "PongNoFrameskip-v4")
    assert lstm["data"]["atari"] == {"terminal_on_life_loss": False, "frame_stack": 4}
    assert lstm["model"]["policy"] == "CnnLstmPolicy"
