"""SB3's and sb3-contrib's ``common.utils``: seeding, schedules, devices, space checks and small math helpers.

Where lit-sb3 already has the function, the name here is that function (or a thin adapter to SB3's
argument types): ``set_random_seed``, ``polyak_update``, ``obs_as_tensor``, ``explained_variance``
(numpy in, as SB3), ``quantile_huber_loss`` (QR-DQN/TQC) and ``conjugate_gradient_solver`` (TRPO).
"""

from __future__ import annotations

import platform
import random
import re
import warnings
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from gymnasium import spaces

from lit_sb3_core._version import __version__
from lit_sb3_core.errors import ConfigurationError
from lit_sb3_core.foundation.schedules import ConstantSchedule, FloatSchedule, LinearSchedule
from lit_sb3_core.foundation.spaces import obs_to_tensor
from lit_sb3_core.nets.losses import quantile_huber_loss
from lit_sb3_core.nets.off_policy_policies import polyak_update
from lit_sb3_core.sb3.logger import configure_logger

Schedule = Callable[[float], float]

__all__ = [
    "ConstantSchedule",
    "FloatSchedule",
    "LinearSchedule",
    "check_for_correct_spaces",
    "check_shape_equal",
    "configure_logger",
    "conjugate_gradient_solver",
    "constant_fn",
    "explained_variance",
    "flat_grad",
    "get_device",
    "get_latest_run_id",
    "get_linear_fn",
    "get_parameters_by_name",
    "get_schedule_fn",
    "get_system_info",
    "is_vectorized_box_observation",
    "is_vectorized_dict_observation",
    "is_vectorized_discrete_observation",
    "is_vectorized_multibinary_observation",
    "is_vectorized_multidiscrete_observation",
    "is_vectorized_observation",
    "obs_as_tensor",
    "polyak_update",
    "quantile_huber_loss",
    "safe_mean",
    "set_random_seed",
    "should_collect_more_steps",
    "update_learning_rate",
    "zip_strict",
]


# seeding and devices --------------------------------------------------------------------------------
def set_random_seed(seed: int, using_cuda: bool = False) -> None:
    """Seed python's, numpy's and torch's generators (CUDA's too: torch seeds every device)."""
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)
    if using_cuda:
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False


def get_device(device: torch.device | str = "auto") -> torch.device:
    """The torch device for ``device``: ``"auto"`` is CUDA when available, else the CPU (as in SB3)."""
    if device == "auto":
        device = "cuda"
    device = torch.device(device)
    if device.type == "cuda" and not torch.cuda.is_available():
        return torch.device("cpu")
    return device


def get_latest_run_id(log_path: str = "", log_name: str = "") -> int:
    """The largest N among ``<log_path>/<log_name>_<N>`` folders (0 when there are none)."""
    from lit_sb3_core.foundation.files import next_run_id

    return next_run_id(Path(log_path), log_name) - 1


def get_system_info(print_info: bool = True) -> tuple[dict[str, str], str]:
    """Versions of the system and the libraries that matter for reproducing a run.

    SB3's keys; ``"Stable-Baselines3"`` is the version of the package that provides SB3's API here
    (``lit_sb3.__version__``), and the text names it lit-sb3.
    """
    info = {
        "OS": re.sub(r"#(\d)", r"# \1", f"{platform.platform()} {platform.version()}"),
        "Python": platform.python_version(),
        "Stable-Baselines3": __version__,
        "PyTorch": torch.__version__,
        "GPU Enabled": str(torch.cuda.is_available()),
        "Numpy": np.__version__,
        "Gymnasium": gym.__version__,
    }
    names = {"Stable-Baselines3": "lit-sb3"}
    text = "".join(f"- {names.get(key, key)}: {value}\n" for key, value in info.items())
    if print_info:
        print(text)
    return info, text


# schedules (functions of progress_remaining: 1 at the start of training, 0 at the end): ConstantSchedule,
# LinearSchedule and FloatSchedule are the core's classes (imported above), the ones models hold.


def get_schedule_fn(value_schedule: Schedule | float) -> Schedule:
    """Deprecated in SB3 (use ``FloatSchedule``): a constant or schedule as a float schedule."""
    warnings.warn(
        "get_schedule_fn() is deprecated, use FloatSchedule() instead.", DeprecationWarning, stacklevel=2
    )
    return FloatSchedule(value_schedule)


def get_linear_fn(start: float, end: float, end_fraction: float) -> Schedule:
    """Deprecated in SB3 (use ``LinearSchedule``)."""
    warnings.warn(
        "get_linear_fn() is deprecated, use LinearSchedule() instead.", DeprecationWarning, stacklevel=2
    )
    return LinearSchedule(start, end, end_fraction)


def constant_fn(val: float) -> Schedule:
    """Deprecated in SB3 (use ``ConstantSchedule``)."""
    warnings.warn(
        "constant_fn() is deprecated, use ConstantSchedule() instead.", DeprecationWarning, stacklevel=2
    )
    return ConstantSchedule(val)


def update_learning_rate(optimizer: torch.optim.Optimizer, learning_rate: float) -> None:
    """Set the learning rate of every parameter group of ``optimizer``."""
    for group in optimizer.param_groups:
        group["lr"] = learning_rate


# math --------------------------------------------------------------------------------------------------
def explained_variance(y_pred: np.ndarray, y_true: np.ndarray) -> float:
    """1 - Var[y_true - y_pred] / Var[y_true] (NaN when y_true is constant)."""
    from lit_sb3_core.sdk import explained_variance as _explained_variance  # lightning: when asked

    pred = torch.as_tensor(np.asarray(y_pred, dtype=np.float64))
    true = torch.as_tensor(np.asarray(y_true, dtype=np.float64))
    return _explained_variance(pred, true)


def safe_mean(arr: Any) -> float:
    """The mean, or NaN for an empty sequence (for logging)."""
    return float("nan") if len(arr) == 0 else float(np.mean(arr))


def get_parameters_by_name(model: torch.nn.Module, included_names: Iterable[str]) -> list[torch.Tensor]:
    """The state-dict tensors of ``model`` whose name contains one of ``included_names``."""
    names = list(included_names)
    return [value for name, value in model.state_dict().items() if any(key in name for key in names)]


def zip_strict(*iterables: Iterable) -> Iterator:
    """``zip`` that raises ValueError when the iterables have different lengths."""
    return zip(*iterables, strict=True)


def obs_as_tensor(obs: np.ndarray | dict[str, np.ndarray], device: torch.device) -> Any:
    """Observations (an array or a dict of them) as tensors on ``device``."""
    if not isinstance(obs, (np.ndarray, dict)):
        raise TypeError(
            f"Unrecognized observation type {type(obs).__name__}: pass an array or a dict of arrays."
        )
    return obs_to_tensor(obs, device)


def conjugate_gradient_solver(
    matrix_vector_dot_fn: Callable[[torch.Tensor], torch.Tensor],
    b: torch.Tensor,
    max_iter: int = 10,
    residual_tol: float = 1e-10,
) -> torch.Tensor:
    """Approximately solve ``A x = b`` for symmetric positive-definite ``A`` given as ``v -> A v`` (TRPO's)."""
    try:
        from lit_sb3_trpo.trust_region import conjugate_gradient
    except ImportError as exc:
        raise ImportError("conjugate_gradient_solver comes with TRPO: pip install lit-sb3-trpo.") from exc
    return conjugate_gradient(matrix_vector_dot_fn, b, max_iter=max_iter, residual_tol=residual_tol)


def flat_grad(
    output: torch.Tensor,
    parameters: Iterable[torch.nn.Parameter],
    create_graph: bool = False,
    retain_graph: bool = False,
) -> torch.Tensor:
    """The gradient of ``output`` with respect to ``parameters``, as one flat vector."""
    grads = torch.autograd.grad(
        output, list(parameters), create_graph=create_graph, retain_graph=retain_graph, allow_unused=True
    )
    return torch.cat([grad.reshape(-1) for grad in grads if grad is not None])


# spaces --------------------------------------------------------------------------------------------------
def check_for_correct_spaces(env: Any, observation_space: spaces.Space, action_space: spaces.Space) -> None:
    """Raise ValueError unless ``env`` has these observation and action spaces."""
    if observation_space != env.observation_space:
        raise ValueError(f"Observation spaces do not match: {observation_space} != {env.observation_space}")
    if action_space != env.action_space:
        raise ValueError(f"Action spaces do not match: {action_space} != {env.action_space}")


class _SpaceShapeError(ConfigurationError, AssertionError):
    """Two spaces that should have the same shapes do not (SB3 asserts it)."""


def check_shape_equal(space1: spaces.Space, space2: spaces.Space) -> None:
    """Raise an AssertionError (as SB3; a ConfigurationError too) unless two Box spaces (or Dicts of them, key
    by key) have the same shapes."""
    if isinstance(space1, spaces.Dict):
        if not isinstance(space2, spaces.Dict) or space1.spaces.keys() != space2.spaces.keys():
            raise _SpaceShapeError(f"The spaces have different keys or types: {space1} and {space2}.")
        for key in space1.spaces:
            check_shape_equal(space1.spaces[key], space2.spaces[key])
    elif isinstance(space1, spaces.Box) and space1.shape != space2.shape:
        raise _SpaceShapeError(f"The spaces have different shapes: {space1.shape} and {space2.shape}.")


def _vectorized(observation: Any, shape: tuple[int, ...], space: spaces.Space) -> bool:
    found = np.shape(observation)
    if found == shape:
        return False
    if len(found) == len(shape) + 1 and found[1:] == shape:
        return True
    expected = ", ".join(map(str, shape))
    raise ValueError(
        f"Unexpected observation shape {found} for {space}: use {shape} for one observation or "
        f"(n_envs{', ' + expected if expected else ''}) for a batch."
    )


def is_vectorized_box_observation(observation: np.ndarray, observation_space: spaces.Box) -> bool:
    """Whether ``observation`` is a batch of ``observation_space`` observations (raises for other shapes)."""
    return _vectorized(observation, observation_space.shape, observation_space)


def is_vectorized_discrete_observation(observation: Any, observation_space: spaces.Discrete) -> bool:
    if isinstance(observation, (int, np.integer)) or np.shape(observation) == ():
        return False
    return _vectorized(observation, (), observation_space)


def is_vectorized_multidiscrete_observation(
    observation: np.ndarray, observation_space: spaces.MultiDiscrete
) -> bool:
    return _vectorized(observation, observation_space.shape, observation_space)


def is_vectorized_multibinary_observation(
    observation: np.ndarray, observation_space: spaces.MultiBinary
) -> bool:
    return _vectorized(observation, observation_space.shape, observation_space)


def is_vectorized_dict_observation(observation: dict[str, Any], observation_space: spaces.Dict) -> bool:
    answers = {
        key: is_vectorized_observation(observation[key], sub) for key, sub in observation_space.spaces.items()
    }
    if len(set(answers.values())) > 1:
        raise ValueError(f"Some keys of the observation are batched and others are not: {answers}.")
    return next(iter(answers.values()))


def is_vectorized_observation(observation: Any, observation_space: spaces.Space) -> bool:
    """Whether ``observation`` is a batch (one observation per env) of ``observation_space``."""
    checks: dict[type, Callable[..., bool]] = {
        spaces.Box: is_vectorized_box_observation,
        spaces.Discrete: is_vectorized_discrete_observation,
        spaces.MultiDiscrete: is_vectorized_multidiscrete_observation,
        spaces.MultiBinary: is_vectorized_multibinary_observation,
        spaces.Dict: is_vectorized_dict_observation,
    }
    for space_type, check in checks.items():
        if isinstance(observation_space, space_type):
            return check(observation, observation_space)
    raise ValueError(f"Cannot tell whether an observation of {observation_space} is batched.")


def should_collect_more_steps(train_freq: Any, num_collected_steps: int, num_collected_episodes: int) -> bool:
    """Whether an off-policy collection of ``train_freq`` (``frequency``, ``unit`` "step"/"episode") goes on."""
    unit = getattr(train_freq.unit, "value", train_freq.unit)
    if unit == "step":
        return num_collected_steps < train_freq.frequency
    if unit == "episode":
        return num_collected_episodes < train_freq.frequency
    raise ValueError(f"train_freq.unit must be 'step' or 'episode', not {train_freq.unit!r}.")
