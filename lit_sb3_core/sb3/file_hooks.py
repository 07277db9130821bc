"""How an algorithm reads a model file written by Stable-Baselines3 or sb3-contrib: ``PPO.load("sb3.zip")``.

``lit_sb3_core.sb3.model_zip`` opens the file without unpickling anything and calls the class methods
below; :class:`SB3FileHooks` (a base of ``RLAlgorithm``) gives defaults that fit any algorithm whose
constructor arguments and weight names are SB3's, as lit-sb3's are. A plugin overrides only what
differs, for example::

    class QRDQN(OffPolicyAlgorithm):
        sb3_policy_classes = {"QRDQNPolicy": "MlpPolicy", "CnnPolicy": "CnnPolicy",
                              "MultiInputPolicy": "MultiInputPolicy"}

        @classmethod
        def state_dict_from_sb3(cls, file, model):
            return super().state_dict_from_sb3(file, model, renames={"quantile_net": "q_net"})
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any, ClassVar

import torch

from lit_sb3_core.sb3.model_zip import NotReadable, SB3Fields, SB3File, load_sb3_model

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["SB3FileHooks", "rename_sb3_keys"]

# Constructor arguments that are not hyperparameters read from a file, or that need their own reader.
_NOT_FROM_FILE = frozenset({"self", "policy", "env", "device", "policy_kwargs", "_init_setup_model"})
# Constructor arguments SB3 stores under another (private) name.
_SB3_FIELD_NAMES = {"stats_window_size": "_stats_window_size"}
_SCHEDULES = frozenset({"learning_rate", "clip_range", "clip_range_vf", "delta_std"})
_MISSING = object()


def rename_sb3_keys(state: dict[str, torch.Tensor], renames: dict[str, str]) -> dict[str, torch.Tensor]:
    """``state`` with dotted key parts renamed (``{"quantile_net": "q_net"}``)."""
    if not renames:
        return dict(state)
    renamed = {}
    for key, value in state.items():
        parts = [renames.get(part, part) for part in key.split(".")]
        renamed[".".join(parts)] = value
    return renamed


def _storage(tensor: torch.Tensor) -> tuple[int, int, tuple[int, ...]]:
    return tensor.untyped_storage().data_ptr(), int(tensor.storage_offset()), tuple(tensor.shape)


class SB3FileHooks:
    """Class methods that turn an SB3 file's fields and weights into this algorithm's.

    Attributes:
        sb3_policy_classes: SB3's policy classes -> this algorithm's policy aliases. Keys are class names
            (``"SACPolicy"``) or, where SB3 reuses a name across algorithms, ``"module.Name"``
            (``"stable_baselines3.sac.policies.CnnPolicy"``). A file whose policy class is not listed is
            refused with a message naming it.
    """

    sb3_policy_classes: ClassVar[dict[str, str]] = {}

    @classmethod
    def load_sb3(
        cls,
        path: str | Path,
        env: Any = None,
        device: str = "auto",
        custom_objects: dict[str, Any] | None = None,
        print_system_info: bool = False,
        **kwargs: Any,
    ) -> Any:
        """Load an SB3 / sb3-contrib model file (what ``load`` does when given one)."""
        return load_sb3_model(path, cls, env, device, custom_objects, print_system_info, **kwargs)

    @classmethod
    def hyperparameters_from_sb3(cls, fields: SB3Fields) -> dict[str, Any]:
        """Constructor arguments from the file's readable fields: every argument SB3 stores by its name.

        Schedules become numbers (or SB3's linear schedule), classes in ``policy_kwargs`` lit-sb3's names;
        arguments stored only as pickles are left out (their defaults apply; ``fields.unread`` says which).
        """
        parameters = inspect.signature(cls.__init__).parameters
        hyperparameters: dict[str, Any] = {}
        for name in parameters:
            if name in _NOT_FROM_FILE:
                continue
            key = _SB3_FIELD_NAMES.get(name, name)
            if not fields.has(key):
                continue
            if name in _SCHEDULES:
                value = fields.schedule(key, _MISSING)
                if value is _MISSING and name == "learning_rate":  # a callable: its schedule may say more
                    value = fields.schedule("lr_schedule", _MISSING)
                    if value is not _MISSING or "lr_schedule" in fields.unread:
                        fields.unread.pop("lr_schedule", None)
                    if value is not _MISSING:
                        fields.unread.pop(key, None)
            elif name == "action_noise":
                value = fields.noise(key)
            elif name == "replay_buffer_class":
                value = cls._sb3_buffer_class(fields)
            else:
                value = fields.value(key, _MISSING)
            if value is not _MISSING:
                hyperparameters[name] = value
        policy_kwargs = fields.policy_kwargs()
        if "use_sde" in parameters:
            policy_kwargs.pop("use_sde", None)  # SB3 copies the algorithm's use_sde into policy_kwargs
        hyperparameters["policy_kwargs"] = policy_kwargs or None
        return hyperparameters

    @classmethod
    def _sb3_buffer_class(cls, fields: SB3Fields) -> Any:
        if "replay_buffer_class" in fields.custom_objects:
            return fields.custom_objects["replay_buffer_class"]
        entry = fields.data.get("replay_buffer_class")
        if entry is None:
            return None
        try:
            name = fields.class_name("replay_buffer_class")
        except NotReadable:
            fields.unread["replay_buffer_class"] = "a pickled class"
            return _MISSING
        if name in ("ReplayBuffer", "DictReplayBuffer"):
            return None
        if name == "HerReplayBuffer":
            return "her"
        fields.unread["replay_buffer_class"] = f"the class {name}"
        return _MISSING

    @classmethod
    def state_dict_from_sb3(
        cls, file: SB3File, model: Any, renames: dict[str, str] | None = None
    ) -> dict[str, torch.Tensor]:
        """Entries of ``model.state_dict()`` from the file's weights.

        SB3's policy keys go under ``policy.`` (renamed by ``renames``), keys SB3 keeps twice for one module
        (``pi_features_extractor`` beside ``features_extractor``, a critic's shared extractor) are dropped
        when lit-sb3 has no such alias, and ``pytorch_variables.pth`` entries fill ``policy.<name>`` where
        the model has that parameter (SAC's ``log_ent_coef``).
        """
        ours = model.state_dict()
        state = {f"policy.{k}": v for k, v in rename_sb3_keys(file.policy_state, renames or {}).items()}
        kept_storages = {_storage(v) for k, v in state.items() if k in ours}
        for key in [k for k in state if k not in ours]:
            if _storage(state[key]) in kept_storages:
                del state[key]  # the same tensor under one of SB3's aliases
        for name, value in file.pytorch_variables.items():
            if isinstance(value, torch.Tensor) and f"policy.{name}" in ours:
                state[f"policy.{name}"] = value
        return state
