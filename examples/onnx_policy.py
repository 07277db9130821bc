"""Play episodes with a policy exported by ``lit-sb3 export`` (or ``model.export``), without lit-sb3.

Needs only numpy, onnxruntime and gymnasium: this is what a deployment looks like. The exported graph takes
raw observations and returns env actions; the file's own description (``lit_sb3_export.json`` in the ONNX
metadata) says which other inputs it has and what to feed them at the start: RecurrentPPO's LSTM state
(zeros, fed back from the outputs every step) and episode-start flags, MaskablePPO's action masks (from the
env's ``action_masks()`` when it has one, else all allowed).

    lit-sb3 export ppo_cartpole.zip                                 # -> ppo_cartpole.onnx
    python examples/onnx_policy.py ppo_cartpole.onnx --env CartPole-v1 --episodes 3
"""

from __future__ import annotations

import argparse
import json

import gymnasium as gym
import numpy as np
import onnxruntime


def load(path: str) -> tuple[onnxruntime.InferenceSession, dict]:
    session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    metadata = json.loads(session.get_modelmeta().custom_metadata_map["lit_sb3_export.json"])
    return session, metadata


def initial_inputs(metadata: dict) -> dict[str, np.ndarray]:
    """The extra inputs of the first step, for one env (batch size 1)."""
    extras = {}
    for spec in metadata["inputs"]:
        name = spec["name"]
        if name == "obs" or name.startswith("obs."):
            continue
        shape = [1 if n == "batch" else n for n in spec["shape"]]
        fill = np.ones if metadata["initial_values"].get(name) == "ones" else np.zeros
        extras[name] = fill(shape, dtype=spec["dtype"])
    return extras


def observation_inputs(obs, metadata: dict) -> dict[str, np.ndarray]:
    """One observation as a batch of one, under the graph's input names (one per key of a Dict space)."""
    dtypes = {spec["name"]: spec["dtype"] for spec in metadata["inputs"]}
    if isinstance(obs, dict):
        return {
            f"obs.{key}": np.asarray(value, dtype=dtypes[f"obs.{key}"])[None] for key, value in obs.items()
        }
    return {"obs": np.asarray(obs, dtype=dtypes["obs"])[None]}


def play(session, metadata: dict, env: gym.Env, seed: int, record: list | None = None) -> float:
    obs, _ = env.reset(seed=seed)
    extras = initial_inputs(metadata)
    output_names = [spec["name"] for spec in metadata["outputs"]]
    total, done = 0.0, False
    while not done:
        if "action_masks" in extras and hasattr(env.unwrapped, "action_masks"):
            extras["action_masks"] = np.asarray(env.unwrapped.action_masks(), dtype=bool)[None]
        outputs = dict(zip(output_names, session.run(None, {**observation_inputs(obs, metadata), **extras})))
        action = outputs["actions"][0]
        if record is not None:
            record.append((obs, action))
        # Feed the recurrent state back; the next step does not start an episode.
        for name in ("lstm_hidden", "lstm_cell"):
            if name in extras:
                extras[name] = outputs[f"{name}_out"]
        if "episode_start" in extras:
            extras["episode_start"] = np.zeros_like(extras["episode_start"])
        obs, reward, terminated, truncated, _ = env.step(action)
        total += float(reward)
        done = terminated or truncated
    return total


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("policy", help="an .onnx file written by lit-sb3 export")
    parser.add_argument("--env", required=True, help="gymnasium environment id")
    parser.add_argument("--episodes", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--record", default=None, help="save the first episode's observations and actions (.npz)"
    )
    args = parser.parse_args()
    session, metadata = load(args.policy)
    env = gym.make(args.env)
    for episode in range(args.episodes):
        steps: list | None = [] if args.record and episode == 0 else None
        total = play(session, metadata, env, args.seed + episode, steps)
        print(f"{args.policy.rsplit('/', 1)[-1]} on {args.env}: return {total:.2f}")
        if steps is not None:
            observations = np.stack([np.asarray(o) for o, _ in steps])
            np.savez(args.record, observations=observations, actions=np.stack([a for _, a in steps]))
    env.close()


if __name__ == "__main__":
    main()
