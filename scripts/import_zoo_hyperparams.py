"""Write each plugin's ``zoo_hyperparams.py`` from rl-zoo3's hyperparameter files.

    pip download --no-deps "rl_zoo3==2.9.*" -d /tmp/zoo && unzip -q /tmp/zoo/rl_zoo3-*.whl -d /tmp/zoo
    python scripts/import_zoo_hyperparams.py /tmp/zoo/rl_zoo3/hyperparams

rl-zoo3 writes its settings as YAML with Python snippets in strings (``policy_kwargs: "dict(net_arch=[64])"``,
``activation_fn=nn.ReLU``). They are read here with ``ast`` into plain JSON-able values (never evaluated),
translated to lit-sb3's names, and written as Python literals, so the plugins ship plain data:

- ``n_timesteps``, ``n_envs``, ``normalize`` stay (run settings; ``normalize`` as ``True``/``"observation"``/
  ``"reward"``); ``policy`` is dropped when it is the algorithm's default;
- ``env_wrapper: AtariWrapper`` with ``frame_stack`` becomes ``atari`` (``True``, or the wrapper's options);
- ``noise_type``/``noise_std`` become an ``action_noise`` spec; ``nn.ReLU`` becomes ``"relu"``;
  ``RMSpropTFLike`` becomes ``"rmsprop_tf_like"``;
- MuJoCo entries (rl-zoo3 has ``-v4``, a few ``-v2`` that need the retired mujoco-py) are shipped under
  ``-v4`` and ``-v5``: the same tasks, v5 with gymnasium's fixes;
- entries whose environment does not run from PyPI wheels here (PyBullet, MiniGrid, robotics, CarRacing with
  rl-zoo3's own wrappers, donkey car, ...) or that need rl-zoo3's wrappers are left out, each listed in
  the generated module's ``LEFT_OUT`` with the reason.
"""

from __future__ import annotations

import ast
import pprint
import sys
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
ZOO_VERSION = "2.9.2"

# rl-zoo3 file -> (plugin folder, import package, default policy)
PLUGINS = {
    "a2c": ("lit-sb3-a2c", "lit_sb3_a2c", "MlpPolicy"),
    "ars": ("lit-sb3-ars", "lit_sb3_ars", "MlpPolicy"),
    "crossq": ("lit-sb3-crossq", "lit_sb3_crossq", "MlpPolicy"),
    "ddpg": ("lit-sb3-ddpg", "lit_sb3_ddpg", "MlpPolicy"),
    "dqn": ("lit-sb3-dqn", "lit_sb3_dqn", "MlpPolicy"),
    "ppo": ("lit-sb3-ppo", "lit_sb3_ppo", "MlpPolicy"),
    "ppo_lstm": ("lit-sb3-ppo-recurrent", "lit_sb3_ppo_recurrent", "MlpLstmPolicy"),
    "qrdqn": ("lit-sb3-qrdqn", "lit_sb3_qrdqn", "MlpPolicy"),
    "sac": ("lit-sb3-sac", "lit_sb3_sac", "MlpPolicy"),
    "td3": ("lit-sb3-td3", "lit_sb3_td3", "MlpPolicy"),
    "tqc": ("lit-sb3-tqc", "lit_sb3_tqc", "MlpPolicy"),
    "trpo": ("lit-sb3-trpo", "lit_sb3_trpo", "MlpPolicy"),
}

CLASSIC = {"CartPole-v1", "MountainCar-v0", "MountainCarContinuous-v0", "Acrobot-v1", "Pendulum-v1"}
BOX2D = {"LunarLander-v3", "LunarLanderContinuous-v3", "BipedalWalker-v3", "BipedalWalkerHardcore-v3"}
MUJOCO = {
    "HalfCheetah", "Ant", "Hopper", "Walker2d", "Humanoid", "HumanoidStandup", "Swimmer", "Reacher",
    "InvertedPendulum", "InvertedDoublePendulum", "Pusher",
}  # fmt: skip
# Registered by lit_sb3_ppo_recurrent.envs (rl-zoo3's velocity-free variants of classic control).
NO_VELOCITY = {"CartPoleNoVel-v1", "PendulumNoVel-v1", "MountainCarNoVel-v0", "MountainCarContinuousNoVel-v0"}
ACTIVATIONS = {
    "ReLU": "relu",
    "Tanh": "tanh",
    "ELU": "elu",
    "LeakyReLU": "leaky_relu",
    "GELU": "gelu",
    "SiLU": "silu",
}
NAMES = {"RMSpropTFLike": "rmsprop_tf_like", **ACTIVATIONS}
ATARI_WRAPPER = "stable_baselines3.common.atari_wrappers.AtariWrapper"
# rl-zoo3 keys that are not constructor or run settings: HER's buffer keys, the zoo's callbacks.
UNSUPPORTED_KEYS = {"replay_buffer_class", "callback", "vec_env_wrapper", "model_class"}
# Settings a lit-sb3 plugin does not offer (yet), per rl-zoo3 file.
NOT_OFFERED = {"crossq": {"use_sde": "lit-sb3's CrossQ has no gSDE"}}


def _snippet(node: ast.AST) -> Any:
    """A plain value from rl-zoo3's Python snippet: dict(...) calls, literals, nn.X class names."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "dict"
        and not node.args
    ):
        return {kw.arg: _snippet(kw.value) for kw in node.keywords}
    if isinstance(node, ast.Dict):
        return {_snippet(k): _snippet(v) for k, v in zip(node.keys, node.values)}
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_snippet(e) for e in node.elts]
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_snippet(node.operand)
    if isinstance(node, (ast.Attribute, ast.Name)):
        name = node.attr if isinstance(node, ast.Attribute) else node.id
        if name in NAMES:
            return NAMES[name]
    raise ValueError(f"cannot read {ast.dump(node)}")


def _parse(value: Any) -> Any:
    return _snippet(ast.parse(value.strip(), mode="eval").body) if isinstance(value, str) else value


def _normalize(value: Any) -> Any:
    value = _parse(value)
    if isinstance(value, bool):
        return value
    obs, reward = bool(value.get("norm_obs", True)), bool(value.get("norm_reward", True))
    return True if obs and reward else "observation" if obs else "reward" if reward else False


def _env_ids(env_id: str) -> tuple[list[str], str | None]:
    """The ids an entry is shipped under, or ([], why not)."""
    if env_id == "atari":
        return ["atari"], None
    if env_id in CLASSIC or env_id in BOX2D or env_id in NO_VELOCITY:
        return [env_id], None
    name, _, version = env_id.rpartition("-")
    if name in MUJOCO and version in ("v2", "v4"):
        return [f"{name}-v4", f"{name}-v5"], None
    if "Bullet" in env_id or env_id.startswith("Minitaur"):
        return [], "PyBullet is not installed"
    if env_id.startswith("MiniGrid"):
        return [], "MiniGrid is not installed"
    if env_id.startswith(("Fetch", "Panda", "parking", "Neck", "A1", "RocketLander", "donkey")):
        return [], "the environment's package is not installed"
    if env_id.startswith("CarRacing"):
        return [], "needs rl-zoo3's own wrappers (FrameSkip, resize, history)"
    if "NoVel" in env_id:
        return [], "no velocity-free variant of this env is registered"
    return [], "unknown environment"


def convert(algo: str, env_id: str, entry: dict[str, Any], default_policy: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    atari: dict[str, Any] | None = None
    for key, value in entry.items():
        if key in NOT_OFFERED.get(algo, {}) and value:
            raise ValueError(NOT_OFFERED[algo][key])
        if key in UNSUPPORTED_KEYS:
            raise ValueError(f"{key} is not supported")
        if key == "n_timesteps":
            out[key] = int(float(value))
        elif key == "policy":
            if value != default_policy:
                out[key] = value
        elif key == "normalize":
            normalized = _normalize(value)
            if normalized:
                out[key] = normalized
        elif key == "env_wrapper":
            wrappers = value if isinstance(value, list) else [value]
            for wrapper in wrappers:
                name, options = next(iter(wrapper.items())) if isinstance(wrapper, dict) else (wrapper, {})
                if name != ATARI_WRAPPER:
                    raise ValueError(f"needs the wrapper {name}")
                atari = {**(atari or {}), **(options or {})}
        elif key == "frame_stack":
            atari = {**(atari or {}), "frame_stack": int(value)}
        elif key in ("noise_type", "noise_std"):
            kind = entry.get("noise_type", "normal")
            out["action_noise"] = {"type": kind.replace("-", "_"), "sigma": float(entry["noise_std"])}
        elif key == "policy_kwargs":
            out[key] = _parse(value)
        elif key in ("learning_rate", "gamma", "ent_coef", "delta_std") and isinstance(value, str):
            out[key] = (
                value
                if value.startswith("lin_") or value == "auto" or value.startswith("auto")
                else float(value)
            )
        elif key == "train_freq" and isinstance(value, list):
            out[key] = [int(value[0]), str(value[1])]
        else:
            out[key] = value
    if atari is not None:
        frame_stack = atari.get("frame_stack", 4)
        options = {k: v for k, v in atari.items() if k != "frame_stack"}
        out["atari"] = True if not options and frame_stack == 4 else {**options, "frame_stack": frame_stack}
    return out


def import_file(path: Path, algo: str) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    data = yaml.safe_load(path.read_text())
    default_policy = PLUGINS[algo][2]
    shipped: dict[str, dict[str, Any]] = {}
    left_out: dict[str, str] = {}
    for env_id, entry in data.items():
        if env_id == "default":
            continue
        ids, why = _env_ids(env_id)
        if not ids:
            left_out[env_id] = str(why)
            continue
        try:
            converted = convert(algo, env_id, entry, default_policy)
        except ValueError as exc:
            left_out[env_id] = str(exc)
            continue
        for shipped_id in ids:
            shipped[shipped_id] = converted
    return shipped, left_out


HEADER = '''"""rl-zoo3 {version}'s tuned hyperparameters for {algo}, as plain data (generated: do not edit by hand).

Written by ``scripts/import_zoo_hyperparams.py`` from rl-zoo3's ``hyperparams/{file}.yml``
(https://github.com/DLR-RM/rl-baselines3-zoo, MIT). ``n_timesteps``, ``n_envs``, ``normalize`` and
``atari`` are run settings (``tuned_hyperparameters`` splits them off); the rest are constructor arguments.
MuJoCo entries are shipped under -v4 (rl-zoo3's id) and -v5. The ``"atari"`` entry applies to every Atari id.
``LEFT_OUT`` lists rl-zoo3's entries whose environment does not run here, with the reason.
"""

from __future__ import annotations

from typing import Any

__all__ = ["LEFT_OUT", "ZOO_HYPERPARAMETERS"]

'''


def write(algo: str, shipped: dict[str, Any], left_out: dict[str, str]) -> Path:
    folder, package, _ = PLUGINS[algo]
    target = REPO / "plugins" / folder / package / "zoo_hyperparams.py"
    text = HEADER.format(version=ZOO_VERSION, algo=algo, file=algo)
    text += "ZOO_HYPERPARAMETERS: dict[str, dict[str, Any]] = " + pprint.pformat(
        shipped, width=100, sort_dicts=False
    )
    text += "\n\nLEFT_OUT: dict[str, str] = " + pprint.pformat(left_out, width=100, sort_dicts=False) + "\n"
    target.write_text(text)
    return target


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__)
        return 2
    folder = Path(argv[0])
    for algo in PLUGINS:
        shipped, left_out = import_file(folder / f"{algo}.yml", algo)
        target = write(algo, shipped, left_out)
        print(
            f"{algo}: {len(shipped)} entries shipped, {len(left_out)} left out -> {target.relative_to(REPO)}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
