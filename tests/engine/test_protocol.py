"""The trainer<->algorithm protocol (``engine/protocol.py``): RLAlgorithm implements it, and the engine's
model files and trainer use nothing of an algorithm beyond it."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest
from gymnasium import spaces

from lit_sb3_core.engine.protocol import RLModel
from lit_sb3_core.sdk import RLAlgorithm
from lit_sb3_core.testing.envs import SpaceTestEnv

ENGINE = Path(__file__).resolve().parents[2] / "lit_sb3_core" / "engine"


def protocol_members() -> set[str]:
    members = set(RLModel.__annotations__)
    members |= {
        name for name, value in vars(RLModel).items() if callable(value) or isinstance(value, property)
    }
    return {name for name in members if not name.startswith("_")}


def test_the_protocol_declares_the_conversation() -> None:
    assert {
        "env_source",
        "evaluation_options",
        "last_evaluation",
        "last_evaluation_episodes",
        "pending_optimizer_states",
        "n_updates",
    } <= protocol_members()


def test_rl_algorithm_implements_every_member_with_the_same_parameters() -> None:
    for name in protocol_members():
        declared = getattr(RLModel, name, None)
        if not callable(declared) or isinstance(declared, property):
            continue
        implemented = getattr(RLAlgorithm, name)
        expected = [p for p in inspect.signature(declared).parameters if p != "self"]
        actual = [p for p in inspect.signature(implemented).parameters if p != "self"]
        assert actual[: len(expected)] == expected, (name, actual, expected)


def test_a_built_algorithm_is_an_rl_model() -> None:
    from lit_sb3_ppo import PPO

    model = PPO("MlpPolicy", env=SpaceTestEnv(spaces.Box(-1, 1, (3,)), spaces.Discrete(2)), n_steps=8)
    assert isinstance(model, RLModel)
    for name in protocol_members():
        assert hasattr(model, name), name
    assert model.evaluation_options is None and model.last_evaluation == {}
    assert model.last_evaluation_episodes == ([], []) and model.pending_optimizer_states == []


def test_evaluation_results_come_back_through_the_protocol() -> None:
    from lit_sb3_core import RLEnvDataModule, RLTrainer
    from lit_sb3_ppo import PPO

    model = PPO("MlpPolicy", env="CartPole-v1", n_steps=16, seed=0)
    trainer = RLTrainer(max_steps=16, logger=False, enable_progress_bar=False, enable_checkpointing=False)
    (result,) = trainer.validate(
        model, datamodule=RLEnvDataModule(val_env="CartPole-v1", seed=0), n_eval_episodes=2, verbose=False
    )
    assert model.evaluation_options == {
        "n_eval_episodes": 2,
        "deterministic": True,
        "render": False,
        "use_masking": False,
    }
    rewards, lengths = model.last_evaluation_episodes
    assert len(rewards) == len(lengths) == 2
    assert result["val/mean_reward"] == pytest.approx(sum(rewards) / 2)
    assert model.last_evaluation["val/n_eval_episodes"] == 2.0


def algorithm_accesses(path: Path, names: set[str]) -> list[tuple[int, str]]:
    """``(line, attribute)`` of every ``<name>.<attribute>`` in the file, for variables called ``names``."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in names:
            found.append((node.lineno, node.attr))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "hasattr")
            and len(node.args) >= 2
            and isinstance(node.args[0], ast.Name)
            and node.args[0].id in names
            and isinstance(node.args[1], ast.Constant)
        ):
            found.append((node.lineno, str(node.args[1].value)))
    return found


@pytest.mark.parametrize("module", ["model_file.py", "trainer.py", "evaluation.py", "faults.py"])
def test_the_engine_uses_only_protocol_members_of_an_algorithm(module: str) -> None:
    allowed = protocol_members() | {"__class__"}
    used = algorithm_accesses(ENGINE / module, {"model", "algorithm"})
    assert used, "the check found no algorithm accesses: the variable is no longer called model"
    outside = [(line, name) for line, name in used if name not in allowed]
    assert not outside, f"engine/{module} uses members outside engine/protocol.py: {outside}"
