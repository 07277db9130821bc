"""SB3's ``VecNormalize``: running observation and reward normalization at the env boundary.

The arithmetic and the statistics are lit-sb3's own (``lit_sb3_core.data.normalization``: the modules that
``RLEnvDataModule(normalize=...)`` attaches to an algorithm); this wrapper applies them where SB3 does, on
what the env returns, so SB3 code sees what it expects: ``model.predict`` gets normalized observations from
it, ``get_original_obs()`` the raw ones. Every algorithm trains on it; off-policy ones store the raw
observations and rewards in their replay buffer and normalize minibatches with the current statistics, as
SB3's do (``get_original_terminal_obs()`` gives them the raw final observations).

``save``/``load`` write the statistics and settings as a NumPy ``.npz`` archive with JSON settings, never a
pickle: a file written by SB3's ``VecNormalize.save`` (a pickle) is refused with the way to convert it.
"""

from __future__ import annotations

import json
import zipfile
from copy import deepcopy
from pathlib import Path
from typing import Any, cast

import numpy as np
import torch
from gymnasium import spaces

from lit_sb3.common.running_mean_std import RunningMeanStd
from lit_sb3_core.data.normalization import ObservationNormalizer, RewardNormalizer
from lit_sb3_core.errors import ConfigurationError, ModelFileError
from lit_sb3_core.foundation.files import write_atomically
from lit_sb3_core.foundation.spaces import is_image_space
from lit_sb3_core.sb3.vec_env import VecEnv, VecEnvObs, VecEnvStepReturn, VecEnvWrapper

__all__ = ["VecNormalize", "save_statistics"]

_FORMAT = "lit-sb3 VecNormalize statistics"
_SETTINGS = (
    "training",
    "norm_obs",
    "norm_reward",
    "clip_obs",
    "clip_reward",
    "gamma",
    "epsilon",
    "norm_obs_keys",
)


class VecNormalize(VecEnvWrapper):
    """Normalize observations to zero mean and unit variance, and rewards by the std of the discounted return.

    Args:
        venv: the vector env to wrap.
        training: update the statistics from what the env returns (set False to evaluate).
        norm_obs: normalize observations (Box spaces, or the Box keys of a Dict space).
        norm_reward: scale rewards by the running std of the discounted return.
        clip_obs: bound of the normalized observations.
        clip_reward: bound of the scaled rewards.
        gamma: discount of the return whose std scales the rewards.
        epsilon: added to the variances before the square root.
        norm_obs_keys: the Dict keys to normalize (default: all of them).
    """

    def __init__(
        self,
        venv: VecEnv,
        training: bool = True,
        norm_obs: bool = True,
        norm_reward: bool = True,
        clip_obs: float = 10.0,
        clip_reward: float = 10.0,
        gamma: float = 0.99,
        epsilon: float = 1e-8,
        norm_obs_keys: list[str] | None = None,
    ) -> None:
        super().__init__(venv)
        self.training = training
        self.norm_obs = norm_obs
        self.norm_reward = norm_reward
        self.gamma = gamma
        self.epsilon = epsilon
        self.norm_obs_keys = self._checked_keys(norm_obs_keys) if norm_obs else norm_obs_keys
        self._obs_normalizers: dict[str | None, ObservationNormalizer] = {}
        if norm_obs:
            keys: list[str | None] = list(self.norm_obs_keys) if self.norm_obs_keys else [None]
            for key in keys:
                space = self._space_of(key)
                self._obs_normalizers[key] = ObservationNormalizer(space.shape, clip_obs, epsilon)
                if is_image_space(space):  # normalized images are floats: CnnPolicy must not scale them again
                    self._set_space_of(key, spaces.Box(-clip_obs, clip_obs, space.shape, np.float32))
        self._reward_normalizer = RewardNormalizer(gamma, clip_reward, epsilon)
        self._clip_obs = clip_obs
        self.old_obs: Any = None
        self.old_reward = np.array([])
        self.old_terminal_obs: dict[int, Any] = {}  # env index -> raw final observation of the last step

    # settings --------------------------------------------------------------------------------------
    def _checked_keys(self, keys: list[str] | None) -> list[str] | None:
        space = self.observation_space
        if isinstance(space, spaces.Dict):
            keys = list(space.spaces) if keys is None else list(keys)
            odd = [key for key in keys if not isinstance(space.spaces.get(key), spaces.Box)]
            if odd:
                raise ConfigurationError(
                    f"VecNormalize normalizes Box observations only; the keys {odd} are not Box spaces: "
                    "explicitly pass the observation keys to normalize with norm_obs_keys=[...]."
                )
            return keys
        if not isinstance(space, spaces.Box):
            raise ConfigurationError(
                f"VecNormalize only supports Box and Dict observations, not {type(space).__name__}: use "
                "norm_obs=False to normalize rewards only."
            )
        if keys is not None:
            raise ConfigurationError(
                f"norm_obs_keys is applicable only to Dict observation spaces, not {type(space).__name__}: "
                "leave it None to normalize the whole observation."
            )
        return None

    def _space_of(self, key: str | None) -> spaces.Box:
        space = self.observation_space
        return cast(spaces.Dict, space).spaces[key] if key is not None else space  # type: ignore[return-value]

    def _set_space_of(self, key: str | None, box: spaces.Box) -> None:
        if key is None:
            self.observation_space = box
        else:
            self.observation_space = spaces.Dict(
                {**cast(spaces.Dict, self.observation_space).spaces, key: box}
            )

    @property
    def clip_obs(self) -> float:
        return self._clip_obs

    @clip_obs.setter
    def clip_obs(self, value: float) -> None:
        self._clip_obs = value
        for normalizer in self._obs_normalizers.values():
            normalizer.clip = value

    @property
    def clip_reward(self) -> float:
        return self._reward_normalizer.clip

    @clip_reward.setter
    def clip_reward(self, value: float) -> None:
        self._reward_normalizer.clip = value

    # the statistics, as SB3 shows them ------------------------------------------------------------------
    @property
    def obs_rms(self) -> RunningMeanStd | dict[str, RunningMeanStd]:
        """The observation statistics (a dict of them for Dict observations)."""
        if not self._obs_normalizers:
            raise AttributeError(
                "obs_rms: this VecNormalize does not normalize observations (norm_obs=False)."
            )
        views = {key: RunningMeanStd(module=n.rms) for key, n in self._obs_normalizers.items()}
        return views[None] if None in views else views  # type: ignore[return-value]

    @obs_rms.setter
    def obs_rms(self, value: RunningMeanStd | dict[str, RunningMeanStd]) -> None:
        given = value if isinstance(value, dict) else {None: value}
        for key, rms in given.items():
            self._obs_normalizers[key].rms = deepcopy(rms.module)

    @property
    def ret_rms(self) -> RunningMeanStd:
        """The statistics of the discounted return."""
        return RunningMeanStd(module=self._reward_normalizer.rms)

    @ret_rms.setter
    def ret_rms(self, value: RunningMeanStd) -> None:
        self._reward_normalizer.rms = deepcopy(value.module)

    @property
    def returns(self) -> np.ndarray:
        returns = self._reward_normalizer.returns
        return np.zeros(self.num_envs) if returns is None else returns

    # the VecEnv API -----------------------------------------------------------------------------------
    def reset(self) -> VecEnvObs:
        obs = self.venv.reset()
        self.old_obs = obs
        self.old_terminal_obs = {}
        self._reward_normalizer.reset_returns()
        return self._normalize(obs, update=self.training)

    def step_wait(self) -> VecEnvStepReturn:
        obs, rewards, dones, infos = self.venv.step_wait()
        self.old_obs = obs
        self.old_reward = rewards
        normalized = self._normalize(obs, update=self.training)
        scaled = self._reward_normalizer(np.asarray(rewards, dtype=np.float64), dones, update=self.training)
        rewards = scaled if self.norm_reward else np.asarray(rewards, dtype=np.float32)
        self.old_terminal_obs = {}
        for i in np.flatnonzero(dones):
            if "terminal_observation" in infos[i]:
                original = infos[i]["terminal_observation"]
                self.old_terminal_obs[int(i)] = original
                infos[i]["terminal_observation"] = self.normalize_obs(original)
        return normalized, rewards, dones, infos

    def _normalize(self, obs: Any, update: bool) -> Any:
        if not self._obs_normalizers:
            return obs
        if None in self._obs_normalizers:
            return self._apply(self._obs_normalizers[None], obs, update)
        normalized = dict(obs)
        for key, normalizer in self._obs_normalizers.items():
            normalized[key] = self._apply(normalizer, obs[key], update)
        return normalized

    @staticmethod
    def _apply(normalizer: ObservationNormalizer, obs: Any, update: bool) -> np.ndarray:
        return normalizer.normalize(torch.as_tensor(np.asarray(obs)), update=update).numpy()

    # SB3's helpers ------------------------------------------------------------------------------------
    def normalize_obs(self, obs: Any) -> Any:
        """``obs`` normalized with the current statistics (which it does not update)."""
        single = not isinstance(obs, dict) and None in self._obs_normalizers
        if single:
            return self._apply(self._obs_normalizers[None], np.asarray(obs)[None], False)[0]
        if isinstance(obs, dict):
            return {
                key: self._apply(self._obs_normalizers[key], np.asarray(value)[None], False)[0]
                if key in self._obs_normalizers
                else value
                for key, value in obs.items()
            }
        return obs

    def normalize_reward(self, reward: np.ndarray) -> np.ndarray:
        """``reward`` scaled with the current return statistics (which it does not update)."""
        reward = np.asarray(reward)
        if self.norm_reward:
            scale = np.sqrt(self.ret_rms.var + self.epsilon)
            reward = np.clip(reward / scale, -self.clip_reward, self.clip_reward)
        return reward.astype(np.float32)

    def unnormalize_obs(self, obs: Any) -> Any:
        """The raw observation that normalizes to ``obs`` (ignoring clipping)."""

        def undo(normalizer: ObservationNormalizer, value: Any) -> np.ndarray:
            rms = normalizer.rms
            return np.asarray(value) * np.sqrt(rms.var.numpy() + self.epsilon) + rms.mean.numpy()

        if isinstance(obs, dict):
            return {
                key: undo(self._obs_normalizers[key], value) if key in self._obs_normalizers else value
                for key, value in obs.items()
            }
        return undo(self._obs_normalizers[None], obs) if None in self._obs_normalizers else obs

    def unnormalize_reward(self, reward: np.ndarray) -> np.ndarray:
        return np.asarray(reward) * np.sqrt(self.ret_rms.var + self.epsilon) if self.norm_reward else reward

    def get_original_obs(self) -> Any:
        """The raw observations of the last reset or step."""
        return deepcopy(self.old_obs)

    def get_original_reward(self) -> np.ndarray:
        """The raw rewards of the last step."""
        return np.array(self.old_reward, copy=True)

    def get_original_terminal_obs(self) -> dict[int, Any]:
        """The raw final observations of the episodes that ended at the last step, by env index (lit-sb3's
        addition: ``info["terminal_observation"]`` holds them normalized, and ``unnormalize_obs`` cannot undo
        clipping). Off-policy algorithms store these in the replay buffer, as SB3 stores the originals."""
        return deepcopy(self.old_terminal_obs)

    def set_venv(self, venv: VecEnv) -> None:
        """Wrap ``venv`` (a ``VecNormalize`` made by ``load`` wraps the env given there)."""
        if venv.observation_space.shape != self.venv.observation_space.shape:
            raise ValueError(
                f"The env's observations have shape {venv.observation_space.shape}, the statistics were gathered "
                f"on shape {self.venv.observation_space.shape}."
            )
        self.venv = venv
        self.num_envs = venv.num_envs
        self.render_mode = venv.render_mode
        self._reward_normalizer.reset_returns()

    # files ---------------------------------------------------------------------------------------------
    def save(self, save_path: str | Path) -> None:
        """Write the statistics and settings to ``save_path`` (a NumPy archive; no pickle)."""
        save_statistics(self, save_path)

    @staticmethod
    def load(load_path: str | Path, venv: VecEnv) -> VecNormalize:
        """A ``VecNormalize`` around ``venv`` with the statistics and settings saved at ``load_path``."""
        path = Path(load_path)
        settings, arrays = _read(path)
        training = settings.pop("training", True)
        try:
            wrapper = VecNormalize(venv, **settings)
        except ValueError as exc:  # norm_obs_keys or norm_obs that this env's observations do not have
            raise ModelFileError(
                f"{path}: the statistics do not fit this env ({str(exc).rstrip('.')}). Load them with the env "
                "they were gathered on.",
                path=path,
                field="settings",
            ) from None
        wrapper.training = training
        for key, normalizer in wrapper._obs_normalizers.items():
            prefix = "obs" if key is None else f"obs/{key}"
            _restore(normalizer.rms, arrays, prefix, path)
        _restore(wrapper._reward_normalizer.rms, arrays, "ret", path)
        return wrapper


def save_statistics(vec_normalize: Any, save_path: str | Path) -> None:
    """Write the statistics of ``vec_normalize`` to ``save_path`` in the format ``VecNormalize.load`` reads.

    ``vec_normalize`` may also be Stable-Baselines3's own ``VecNormalize`` (loaded with SB3, which unpickles
    its files): that converts an SB3 statistics file into one lit-sb3 can load without unpickling.
    """
    settings = {name: getattr(vec_normalize, name, None) for name in _SETTINGS}
    settings = {k: (float(v) if isinstance(v, np.floating) else v) for k, v in settings.items()}
    arrays: dict[str, Any] = {"format": np.array(_FORMAT), "settings": np.array(json.dumps(settings))}
    obs_rms = vec_normalize.obs_rms if vec_normalize.norm_obs else None
    stats = obs_rms if isinstance(obs_rms, dict) else {None: obs_rms} if obs_rms is not None else {}
    for key, rms in stats.items():
        prefix = "obs" if key is None else f"obs/{key}"
        arrays.update(_moments(rms, prefix))
    arrays.update(_moments(vec_normalize.ret_rms, "ret"))
    write_atomically(save_path, lambda file: np.savez(file, **arrays))  # a failed save keeps the old file


def _moments(rms: Any, prefix: str) -> dict[str, np.ndarray]:
    return {
        f"{prefix}/mean": np.asarray(rms.mean, dtype=np.float64),
        f"{prefix}/var": np.asarray(rms.var, dtype=np.float64),
        f"{prefix}/count": np.asarray(rms.count, dtype=np.float64),
    }


def _restore(module: Any, arrays: dict[str, np.ndarray], prefix: str, path: Path) -> None:
    try:
        mean, var, count = (arrays[f"{prefix}/{name}"] for name in ("mean", "var", "count"))
    except KeyError as missing:
        raise ModelFileError(
            f"{path}: the VecNormalize file has no statistics {missing} (its settings ask for them). Save the "
            "statistics again with VecNormalize.save.",
            path=path,
            field=prefix,
        ) from None
    if mean.shape != tuple(module.mean.shape) or var.shape != mean.shape or count.shape != ():
        raise ModelFileError(
            f"{path}: the VecNormalize file holds statistics of shape {mean.shape} (var {var.shape}, count "
            f"{count.shape}) for {prefix}, the env needs {tuple(module.mean.shape)}. Load them with the env "
            "they were gathered on.",
            path=path,
            field=prefix,
        )
    module.mean.copy_(torch.as_tensor(mean))
    module.var.copy_(torch.as_tensor(var))
    module.count.fill_(float(count))


def _read(path: Path) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    if not path.is_file():
        raise FileNotFoundError(f"No VecNormalize statistics at {path}.")
    with open(path, "rb") as file:
        head = file.read(2)
    if head[:1] == b"\x80":
        raise ModelFileError(
            f"{path} is a pickle, as Stable-Baselines3's VecNormalize.save writes them; lit-sb3 never unpickles "
            "files (loading a pickle runs code from it). Convert it once where stable_baselines3 is installed "
            "and the file is trusted: `from lit_sb3.common.vec_env.vec_normalize import save_statistics; "
            "save_statistics(stable_baselines3.common.vec_env.VecNormalize.load(path, venv), 'stats.npz')`.",
            path=path,
        )
    try:
        _check_npz_members(path)
        with np.load(path, allow_pickle=False) as archive:
            arrays = {name: archive[name] for name in archive.files}
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as exc:
        raise ModelFileError(f"{path} is not a VecNormalize statistics file: {exc}", path=path) from None
    if str(arrays.get("format", "")) != _FORMAT or "settings" not in arrays:
        raise ModelFileError(f"{path} is not a VecNormalize statistics file written by lit-sb3.", path=path)
    try:
        settings = json.loads(str(arrays["settings"]))
    except (ValueError, RecursionError) as exc:
        raise ModelFileError(
            f"{path}: settings are not JSON ({type(exc).__name__}: {exc}).", path=path
        ) from None
    if not isinstance(settings, dict):
        raise ModelFileError(f"{path}: settings must be a JSON object, got {settings!r:.80}.", path=path)
    unknown = set(settings) - set(_SETTINGS)
    if unknown:
        raise ModelFileError(f"{path} has unknown VecNormalize settings {sorted(unknown)}.", path=path)
    _check_settings(settings, path)
    for name, array in arrays.items():
        if name.endswith(("/mean", "/var", "/count")):
            if array.dtype.kind not in "fiu" or not np.all(np.isfinite(array)):
                raise ModelFileError(
                    f"{path}: {name} must hold finite numbers, got {array.dtype} values with NaN or infinity "
                    "(the statistics diverged or the file was tampered with).",
                    path=path,
                )
            if name.endswith(("/var", "/count")) and np.any(array < 0):
                raise ModelFileError(
                    f"{path}: {name} must not be negative (a variance or a count).", path=path
                )
    return settings, arrays


_MAX_MEMBER_BYTES = 2**30


def _check_npz_members(path: Path) -> None:
    """Before ``np.load`` reads anything: no member unpacks to more than 1 GiB (statistics are small)."""
    with zipfile.ZipFile(path) as archive:
        for info in archive.infolist():
            if info.file_size > _MAX_MEMBER_BYTES:
                raise ModelFileError(
                    f"{path}: {info.filename} would unpack to {info.file_size} bytes, more than the "
                    f"{_MAX_MEMBER_BYTES} a VecNormalize statistics file holds (damaged or a decompression bomb).",
                    path=path,
                )


def _check_settings(settings: dict[str, Any], path: Path) -> None:
    """Each setting has the type and range ``VecNormalize`` takes, before anything is built from it."""
    for key in ("training", "norm_obs", "norm_reward"):
        if key in settings and not isinstance(settings[key], bool):
            raise ModelFileError(
                f"{path}: settings.{key} must be true or false, got {settings[key]!r:.80}.", path=path
            )
    for key in ("clip_obs", "clip_reward", "epsilon"):
        value = settings.get(key)
        if key in settings and (
            isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < float("inf")
        ):
            raise ModelFileError(
                f"{path}: settings.{key} must be a positive finite number, got {value!r:.80}. Save the "
                "statistics again with VecNormalize.save.",
                path=path,
            )
    gamma = settings.get("gamma")
    if "gamma" in settings and (
        isinstance(gamma, bool) or not isinstance(gamma, (int, float)) or not 0 <= gamma <= 1
    ):
        raise ModelFileError(
            f"{path}: settings.gamma must be a number in [0, 1], got {gamma!r:.80}.", path=path
        )
    keys = settings.get("norm_obs_keys")
    if keys is not None and not (isinstance(keys, list) and all(isinstance(k, str) for k in keys)):
        raise ModelFileError(
            f"{path}: settings.norm_obs_keys must be null or a list of names, got {keys!r:.80}.",
            path=path,
        )
