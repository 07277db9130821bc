"""The SDK: everything a plugin author builds an algorithm from, under public names, in one place.

A plugin imports from here, from :mod:`lit_sb3_core.hookspecs` (``hookimpl``) and from
:mod:`lit_sb3_core.errors`; its tests add :mod:`lit_sb3_core.testing`. These four modules are what the
compatibility policy in CONTRIBUTING.md covers: a name exported here changes only with a deprecation
period. Where the names are implemented (``lit_sb3_core.nets``, ``.data``, ``.engine``, ...) is internal.

Base algorithms
    :class:`RLAlgorithm` (anything), :class:`OnPolicyAlgorithm` (rollout, then update),
    :class:`OffPolicyAlgorithm` (replay buffer), with their helpers; :class:`EntropyTemperature`, the
    learned entropy temperature of the SAC family, and :class:`StateDependentExploration`, when their
    gSDE actors draw new exploration noise, both mixed into an off-policy algorithm.
Policies and networks
    :class:`ActorCriticPolicy` and its CNN / multi-input variants, feature extractors, the MLP extractor,
    the off-policy networks (Q-networks, critics, actors), target-network updates and shared losses
    (:func:`quantile_huber_loss`).
Distributions, buffers, noise, normalization, schedules, spaces, validators
    The building blocks the base classes use themselves.
Engine
    :class:`RLTrainer`, :class:`RLEnvDataModule`, :func:`evaluate_policy`, :func:`load`: what a plugin's
    own examples and tests train and evaluate with; :class:`PolicyModule` and
    :class:`DeterministicPolicy`, what ``RLAlgorithm.export_policy_module`` returns.
"""

from __future__ import annotations

from lit_sb3_core.data.noise import (
    ActionNoise,
    NormalActionNoise,
    OrnsteinUhlenbeckActionNoise,
    make_action_noise,
)
from lit_sb3_core.data.normalization import ObservationNormalizer, RewardNormalizer, RunningMeanStd
from lit_sb3_core.data.replay_buffer import DictReplayBuffer, ReplayBuffer, ReplaySamples
from lit_sb3_core.data.rollout_buffer import RolloutBatch, RolloutBuffer, compute_gae, sb3_shuffle
from lit_sb3_core.engine.datamodule import RLEnvDataModule
from lit_sb3_core.engine.evaluation import evaluate_policy
from lit_sb3_core.engine.exporters import DeterministicPolicy, PolicyModule
from lit_sb3_core.engine.trainer import RLTrainer
from lit_sb3_core.engine.tuned import tuned_hyperparameters
from lit_sb3_core.envs.masks import MASK_METHOD, get_action_masks, is_masking_supported
from lit_sb3_core.errors import (
    ConfigurationError,
    ConflictingOptionsError,
    InvalidArgumentError,
    LitSb3Error,
    UnknownNameError,
)
from lit_sb3_core.foundation.checks import (
    check_at_most,
    check_below,
    check_bool,
    check_choice,
    check_fraction,
    check_int,
    check_layer_sizes,
    check_non_negative_int,
    check_number,
    check_numbers,
    check_positive_int,
    check_positive_number,
)
from lit_sb3_core.foundation.schedules import (
    Schedule,
    ScheduleLike,
    checked_schedule,
    constant_schedule,
    linear_schedule,
    make_schedule,
)
from lit_sb3_core.foundation.spaces import (
    ObsPreprocessor,
    action_dim,
    describe_space,
    flat_feature_dim,
    is_image_space,
    obs_to_tensor,
    preprocess_obs,
    scale_action,
    to_numpy,
    unscale_action,
)
from lit_sb3_core.hookspecs import hookimpl
from lit_sb3_core.nets.actor_critic import (
    ACTOR_CRITIC_ALIASES,
    ActorCriticCnnPolicy,
    ActorCriticPolicy,
    MultiInputActorCriticPolicy,
    class_to_string,
    resolve_class,
    resolve_subclass,
)
from lit_sb3_core.nets.direct_forward import NumpyMlp, TorchMlp
from lit_sb3_core.nets.distributions import (
    BernoulliDistribution,
    CategoricalDistribution,
    DiagGaussianDistribution,
    Distribution,
    MultiCategoricalDistribution,
    StateDependentNoise,
    StateDependentNoiseDistribution,
    kl_divergence,
    make_distribution,
)
from lit_sb3_core.nets.losses import quantile_huber_loss
from lit_sb3_core.nets.off_policy_policies import (
    LOG_STD_MAX,
    LOG_STD_MIN,
    ContinuousCritic,
    DeterministicActor,
    OffPolicyNetArch,
    OffPolicyPolicy,
    QNetwork,
    SquashedGaussianActor,
    actor_critic_arch,
    create_mlp,
    freeze,
    polyak_update,
    update_target,
)
from lit_sb3_core.nets.policy_api import PolicyAPI
from lit_sb3_core.nets.torch_layers import (
    BaseFeaturesExtractor,
    CombinedExtractor,
    FlattenExtractor,
    MlpExtractor,
    NatureCNN,
    NetArch,
    evaluation_mode,
)
from lit_sb3_core.registry.names import resolve_named_class
from lit_sb3_core.sb3.callbacks import RLCallback
from lit_sb3_core.sb3.file_hooks import SB3FileHooks, rename_sb3_keys
from lit_sb3_core.sb3.model_zip import SB3Fields, SB3File
from lit_sb3_core.sdk.algorithm import RLAlgorithm, make_optimizer, set_random_seed
from lit_sb3_core.sdk.compile_choice import CompileChoice, init_compile
from lit_sb3_core.sdk.compiled_update import CompiledStep, compile_cache_dir
from lit_sb3_core.sdk.entropy_temperature import EntropyTemperature, parse_ent_coef
from lit_sb3_core.sdk.loading import load
from lit_sb3_core.sdk.off_policy import OffPolicyAlgorithm, TrainFreq, clip_grad_norm, parse_train_freq
from lit_sb3_core.sdk.on_policy import OnPolicyAlgorithm, explained_variance
from lit_sb3_core.sdk.sb3_glue import swapped_env
from lit_sb3_core.sdk.state_dependent_exploration import StateDependentExploration
from lit_sb3_core.sdk.update_program import GradientSteps, UpdateProgram

__all__ = [  # noqa: RUF022 -- grouped by topic, with comments, on purpose
    # base algorithms
    "RLAlgorithm",
    "OnPolicyAlgorithm",
    "OffPolicyAlgorithm",
    "TrainFreq",
    "parse_train_freq",
    "explained_variance",
    "make_optimizer",
    "clip_grad_norm",
    "CompileChoice",
    "CompiledStep",
    "UpdateProgram",
    "GradientSteps",
    "compile_cache_dir",
    "init_compile",
    "set_random_seed",
    "swapped_env",
    "RLCallback",
    "EntropyTemperature",
    "parse_ent_coef",
    "StateDependentExploration",
    # reading Stable-Baselines3 model files
    "SB3FileHooks",
    "SB3Fields",
    "SB3File",
    "rename_sb3_keys",
    # policies and networks
    "ACTOR_CRITIC_ALIASES",
    "ActorCriticPolicy",
    "ActorCriticCnnPolicy",
    "MultiInputActorCriticPolicy",
    "PolicyAPI",
    "BaseFeaturesExtractor",
    "FlattenExtractor",
    "CombinedExtractor",
    "NatureCNN",
    "MlpExtractor",
    "NetArch",
    "OffPolicyPolicy",
    "OffPolicyNetArch",
    "QNetwork",
    "NumpyMlp",
    "TorchMlp",
    "ContinuousCritic",
    "DeterministicActor",
    "SquashedGaussianActor",
    "LOG_STD_MIN",
    "LOG_STD_MAX",
    "actor_critic_arch",
    "create_mlp",
    "freeze",
    "polyak_update",
    "update_target",
    "quantile_huber_loss",
    # distributions
    "Distribution",
    "CategoricalDistribution",
    "MultiCategoricalDistribution",
    "BernoulliDistribution",
    "DiagGaussianDistribution",
    "StateDependentNoise",
    "StateDependentNoiseDistribution",
    "kl_divergence",
    "make_distribution",
    # buffers, noise, normalization
    "RolloutBuffer",
    "RolloutBatch",
    "compute_gae",
    "sb3_shuffle",
    "ReplayBuffer",
    "DictReplayBuffer",
    "ReplaySamples",
    "ActionNoise",
    "NormalActionNoise",
    "OrnsteinUhlenbeckActionNoise",
    "make_action_noise",
    "RunningMeanStd",
    "ObservationNormalizer",
    "RewardNormalizer",
    # schedules, spaces, validators, class names
    "Schedule",
    "ScheduleLike",
    "make_schedule",
    "checked_schedule",
    "constant_schedule",
    "linear_schedule",
    "ObsPreprocessor",
    "describe_space",
    "flat_feature_dim",
    "action_dim",
    "is_image_space",
    "obs_to_tensor",
    "preprocess_obs",
    "MASK_METHOD",
    "get_action_masks",
    "is_masking_supported",
    "scale_action",
    "unscale_action",
    "to_numpy",
    "check_positive_int",
    "check_non_negative_int",
    "check_int",
    "check_number",
    "check_numbers",
    "check_positive_number",
    "check_fraction",
    "check_bool",
    "check_choice",
    "check_at_most",
    "check_below",
    "check_layer_sizes",
    "class_to_string",
    "resolve_named_class",
    "resolve_class",  # deprecated: resolve_named_class
    "resolve_subclass",  # deprecated: resolve_named_class
    # engine, errors, hooks
    "RLTrainer",
    "RLEnvDataModule",
    "evaluate_policy",
    "evaluation_mode",
    "load",
    "tuned_hyperparameters",
    # export (RLAlgorithm.export_policy_module)
    "PolicyModule",
    "DeterministicPolicy",
    "ConfigurationError",
    "ConflictingOptionsError",
    "InvalidArgumentError",
    "LitSb3Error",
    "UnknownNameError",
    "hookimpl",
]
