"""ActorCriticPolicy and its extractors: SB3's architectures and initial weights, policy_kwargs, errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from gymnasium import spaces
from torch import nn

from lit_sb3_core.errors import ConfigurationError
from lit_sb3_core.foundation.spaces import channels_first_space
from lit_sb3_core.nets.actor_critic import (
    ACTOR_CRITIC_ALIASES,
    ActorCriticCnnPolicy,
    ActorCriticPolicy,
    MultiInputActorCriticPolicy,
    class_to_string,
    resolve_class,
)
from lit_sb3_core.nets.torch_layers import BaseFeaturesExtractor, CombinedExtractor, NatureCNN
from lit_sb3_core.registry.names import resolve_named_class

torch.set_num_threads(1)

VEC = spaces.Box(-1, 1, (4,), np.float32)
IMG = spaces.Box(0, 255, (36, 36, 3), np.uint8)  # channel-last
IMG_CHW = spaces.Box(0, 255, (1, 40, 36), np.uint8)
DICT = spaces.Dict({"img": IMG, "vec": spaces.Box(-1, 1, (3,), np.float32), "d": spaces.Discrete(4)})
BOX2 = spaces.Box(-2, 2, (2,), np.float32)


def _batch(space: spaces.Space, n: int = 3) -> Any:
    space.seed(0)
    if isinstance(space, spaces.Dict):
        return {
            key: torch.as_tensor(np.stack([sub.sample() for _ in range(n)]))
            for key, sub in space.spaces.items()
        }
    return torch.as_tensor(np.stack([space.sample() for _ in range(n)]))


def _n_params(module: nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


# SB3 parity -----------------------------------------------------------------------------------------
PARITY = [
    ("MlpPolicy", VEC, spaces.Discrete(3), {}),
    ("MlpPolicy", VEC, BOX2, {"use_sde": True}),
    ("MlpPolicy", VEC, BOX2, {"use_sde": True, "full_std": False, "use_expln": True}),
    ("MlpPolicy", VEC, spaces.MultiDiscrete([2, 3]), {"share_features_extractor": False}),
    ("CnnPolicy", IMG, spaces.Discrete(3), {}),
    ("CnnPolicy", IMG_CHW, BOX2, {"share_features_extractor": False}),
    ("MultiInputPolicy", DICT, spaces.MultiBinary(3), {}),
]


@pytest.mark.parametrize(
    "alias, obs_space, act_space, kwargs", PARITY, ids=[f"{p[0]}-{i}" for i, p in enumerate(PARITY)]
)
def test_same_seed_same_weights_and_outputs_as_sb3(
    alias: str, obs_space: spaces.Space, act_space: spaces.Space, kwargs: dict[str, Any]
) -> None:
    sb3_policies = pytest.importorskip("stable_baselines3.common.policies")
    sb3_cls = {
        "MlpPolicy": sb3_policies.ActorCriticPolicy,
        "CnnPolicy": sb3_policies.ActorCriticCnnPolicy,
        "MultiInputPolicy": sb3_policies.MultiInputActorCriticPolicy,
    }[alias]
    torch.manual_seed(0)
    # SB3 sees channel-first images (its VecTransposeImage transposes them in the env).
    reference = sb3_cls(channels_first_space(obs_space), act_space, lambda _: 3e-4, **kwargs)
    torch.manual_seed(0)
    policy = ACTOR_CRITIC_ALIASES[alias](obs_space, act_space, **kwargs)

    ours = policy.state_dict()
    skip = ("pi_features_extractor",) + (
        ("vf_features_extractor",) if policy.share_features_extractor else ()
    )
    theirs = {k: v for k, v in reference.state_dict().items() if not k.startswith(skip)}
    assert set(ours) == set(theirs)
    for key, value in theirs.items():
        assert torch.equal(ours[key], value), key

    obs = _batch(obs_space)
    sb3_obs = (
        {k: v.permute(0, 3, 1, 2) if k == "img" else v for k, v in obs.items()}
        if isinstance(obs, dict)
        else obs
    )
    if obs_space is IMG:
        sb3_obs = obs.permute(0, 3, 1, 2)
    with torch.no_grad():
        actions, values, log_prob = policy(obs, deterministic=True)
        ref_actions, ref_values, ref_log_prob = reference(sb3_obs, deterministic=True)
        torch.testing.assert_close(values, ref_values.squeeze(-1))
        torch.testing.assert_close(actions.reshape(ref_actions.shape).float(), ref_actions.float())
        torch.testing.assert_close(log_prob, ref_log_prob)
        _, log_prob2, entropy = policy.evaluate_actions(obs, actions)
        _, ref_log_prob2, ref_entropy = reference.evaluate_actions(sb3_obs, ref_actions)
        torch.testing.assert_close(log_prob2, ref_log_prob2)
        torch.testing.assert_close(entropy, ref_entropy)
    if kwargs.get("use_sde"):
        torch.manual_seed(1)
        reference.reset_noise(3)
        torch.manual_seed(1)
        policy.reset_noise(3)
        with torch.no_grad():
            torch.testing.assert_close(policy(obs)[0], reference(obs)[0])


# architecture defaults -------------------------------------------------------------------------------
def test_cnn_policy_defaults() -> None:
    policy = ActorCriticCnnPolicy(IMG, spaces.Discrete(2))
    assert isinstance(policy.features_extractor, NatureCNN) and policy.features_extractor.features_dim == 512
    assert policy.net_arch == [] and policy.mlp_extractor.latent_dim_pi == 512
    assert policy.features_extractor.observation_space.shape == (3, 36, 36)
    actions, values, log_prob = policy(_batch(IMG, 5))
    assert actions.shape == values.shape == log_prob.shape == (5,)


def test_multi_input_policy_defaults() -> None:
    policy = MultiInputActorCriticPolicy(DICT, spaces.Discrete(2))
    extractor = policy.features_extractor
    assert isinstance(extractor, CombinedExtractor)
    assert (
        isinstance(extractor.extractors["img"], NatureCNN) and extractor.extractors["img"].features_dim == 256
    )
    assert extractor.features_dim == 256 + 3 + 4
    assert policy.net_arch == {"pi": [64, 64], "vf": [64, 64]}
    assert policy(_batch(DICT, 2))[0].shape == (2,)


def test_cnn_on_already_normalized_float_images() -> None:
    space = spaces.Box(0.0, 1.0, (3, 36, 36), np.float32)
    policy = ActorCriticCnnPolicy(space, spaces.Discrete(2), normalize_images=False)
    assert policy.features_extractor_kwargs["normalized_image"] is True
    obs = _batch(space, 2)
    torch.testing.assert_close(policy.obs_preprocessor(obs), obs)  # no scaling


def test_normalize_images_false_keeps_pixel_values() -> None:
    policy = ActorCriticCnnPolicy(IMG, spaces.Discrete(2), normalize_images=False)
    obs = _batch(IMG, 2)
    assert policy.obs_preprocessor(obs).max() > 1.0
    scaled = ActorCriticCnnPolicy(IMG, spaces.Discrete(2))
    assert scaled.obs_preprocessor(obs).max() <= 1.0


# policy_kwargs ---------------------------------------------------------------------------------------
def test_net_arch_forms() -> None:
    shared = ActorCriticPolicy(VEC, spaces.Discrete(2), net_arch=[32])
    assert [m.out_features for m in shared.mlp_extractor.policy_net if isinstance(m, nn.Linear)] == [32]
    assert [m.out_features for m in shared.mlp_extractor.value_net if isinstance(m, nn.Linear)] == [32]
    split = ActorCriticPolicy(VEC, spaces.Discrete(2), net_arch={"pi": [16], "vf": [8, 8]})
    assert split.mlp_extractor.latent_dim_pi == 16 and split.mlp_extractor.latent_dim_vf == 8
    linear = ActorCriticPolicy(VEC, spaces.Discrete(2), net_arch={"pi": []})
    assert linear.mlp_extractor.latent_dim_pi == 4 and linear.mlp_extractor.latent_dim_vf == 4
    with pytest.warns(UserWarning, match="net_arch=dict"):
        legacy = ActorCriticPolicy(VEC, spaces.Discrete(2), net_arch=[{"pi": [16], "vf": [8]}])
    assert legacy.mlp_extractor.latent_dim_pi == 16


@pytest.mark.parametrize("net_arch", [{"actor": [64]}, [64, "wide"], [0], 64])
def test_bad_net_arch_is_explained(net_arch: Any) -> None:
    with pytest.raises(ConfigurationError, match="net_arch"):
        ActorCriticPolicy(VEC, spaces.Discrete(2), net_arch=net_arch)


def test_activation_fn_by_class_or_name() -> None:
    for value in (nn.ReLU, "relu", "torch.nn:ReLU"):
        policy = ActorCriticPolicy(VEC, spaces.Discrete(2), activation_fn=value)
        assert isinstance(policy.mlp_extractor.policy_net[1], nn.ReLU)
    with pytest.raises(ConfigurationError, match="activation_fn"):
        ActorCriticPolicy(VEC, spaces.Discrete(2), activation_fn="no_such_activation")
    with pytest.raises(ConfigurationError, match="activation_fn must be a subclass"):
        ActorCriticPolicy(VEC, spaces.Discrete(2), activation_fn=torch.optim.Adam)


class TinyExtractor(BaseFeaturesExtractor):
    """A user-defined extractor: one linear layer on the flat observation."""

    def __init__(self, observation_space: spaces.Space, features_dim: int = 8) -> None:
        super().__init__(observation_space, features_dim)
        self.linear = nn.Linear(int(np.prod(observation_space.shape)), features_dim)

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.linear(observations.flatten(1)))


def test_features_extractor_class_and_kwargs() -> None:
    policy = ActorCriticPolicy(
        VEC,
        spaces.Discrete(2),
        features_extractor_class=TinyExtractor,
        features_extractor_kwargs={"features_dim": 5},
    )
    assert (
        isinstance(policy.features_extractor, TinyExtractor) and policy.features_extractor.features_dim == 5
    )
    by_name = ActorCriticPolicy(
        IMG,
        spaces.Discrete(2),
        features_extractor_class="NatureCNN",
        features_extractor_kwargs={"features_dim": 64},
    )
    assert isinstance(by_name.features_extractor, NatureCNN) and by_name.mlp_extractor.latent_dim_pi == 64
    by_path = ActorCriticPolicy(
        VEC, spaces.Discrete(2), features_extractor_class=class_to_string(TinyExtractor)
    )
    assert isinstance(by_path.features_extractor, TinyExtractor)
    with pytest.raises(ConfigurationError, match="features_extractor_kwargs"):
        ActorCriticPolicy(
            VEC,
            spaces.Discrete(2),
            features_extractor_class=TinyExtractor,
            features_extractor_kwargs={"bad": 1},
        )
    dict_kwargs = MultiInputActorCriticPolicy(
        DICT, spaces.Discrete(2), features_extractor_kwargs={"cnn_output_dim": 32}
    )
    assert dict_kwargs.features_extractor.features_dim == 32 + 3 + 4


def test_share_features_extractor() -> None:
    shared = ActorCriticCnnPolicy(IMG, spaces.Discrete(2))
    separate = ActorCriticCnnPolicy(IMG, spaces.Discrete(2), share_features_extractor=False)
    # SB3's names: pi_ is features_extractor, vf_ the critic's own or the shared one; each module counts once.
    assert shared.pi_features_extractor is shared.vf_features_extractor is shared.features_extractor
    assert separate.pi_features_extractor is separate.features_extractor
    assert separate.vf_features_extractor is not separate.features_extractor
    assert not any(key.startswith(("pi_", "vf_")) for key in shared.state_dict())
    assert len(list(shared.parameters())) == len({id(p) for p in shared.parameters()})
    assert _n_params(separate) == _n_params(shared) + _n_params(shared.features_extractor)
    obs = _batch(IMG, 2)
    pi, vf = separate.extract_features(obs)
    assert not torch.equal(pi, vf)


def test_ortho_init() -> None:
    torch.manual_seed(0)
    ortho = ActorCriticPolicy(VEC, spaces.Discrete(2))
    torch.manual_seed(0)
    default = ActorCriticPolicy(VEC, spaces.Discrete(2), ortho_init=False)
    weight = ortho.mlp_extractor.policy_net[0].weight
    torch.testing.assert_close(weight.T @ weight, 2.0 * torch.eye(4), atol=1e-5, rtol=1e-5)  # gain sqrt(2)
    assert ortho.action_net.weight.norm(dim=1).max() < 0.011  # gain 0.01
    assert default.action_net.weight.norm(dim=1).max() > 0.1
    assert default.mlp_extractor.policy_net[0].bias.abs().sum() > 0


def test_log_std_init() -> None:
    policy = ActorCriticPolicy(VEC, BOX2, log_std_init=-1.5)
    assert policy.log_std is not None and torch.equal(policy.log_std.data, torch.full((2,), -1.5))
    sde = ActorCriticPolicy(VEC, BOX2, use_sde=True, log_std_init=-1.0)
    assert sde.log_std is not None and sde.log_std.shape == (64, 2) and torch.all(sde.log_std == -1.0)


def test_optimizer_class_and_kwargs() -> None:
    assert ActorCriticPolicy(VEC, spaces.Discrete(2)).optimizer_kwargs == {"eps": 1e-5}
    rms = ActorCriticPolicy(
        VEC,
        spaces.Discrete(2),
        optimizer_class="torch.optim:RMSprop",
        optimizer_kwargs={"alpha": 0.99, "eps": 1e-5},
    )
    assert rms.optimizer_class is torch.optim.RMSprop and rms.optimizer_kwargs == {"alpha": 0.99, "eps": 1e-5}
    assert ActorCriticPolicy(VEC, spaces.Discrete(2), optimizer_class=torch.optim.SGD).optimizer_kwargs == {}
    with pytest.raises(ConfigurationError, match="optimizer_class"):
        ActorCriticPolicy(VEC, spaces.Discrete(2), optimizer_class=nn.ReLU)


@pytest.mark.parametrize(
    ("optimizer_class", "kwargs", "chosen"),
    [
        (torch.optim.Adam, {}, {"fused": True}),
        (torch.optim.RMSprop, {}, {"foreach": True}),
        (torch.optim.SGD, {}, {"foreach": True}),
        (torch.optim.RMSprop, {"foreach": False}, {"foreach": False}),
        (torch.optim.Adam, {"foreach": True}, {"foreach": True, "fused": None}),
    ],
)
def test_make_optimizer_picks_the_multi_tensor_implementation_unless_told(
    optimizer_class: type, kwargs: dict[str, Any], chosen: dict[str, Any]
) -> None:
    from lit_sb3_core.sdk.algorithm import make_optimizer

    optimizer = make_optimizer(optimizer_class, nn.Linear(3, 2).parameters(), 1e-3, kwargs)
    assert {key: optimizer.defaults[key] for key in chosen} == chosen


@pytest.mark.parametrize(
    ("kind", "cls"),
    [
        ("activation", nn.ReLU),
        ("activation", nn.Softplus),
        ("features_extractor", NatureCNN),
        ("features_extractor", CombinedExtractor),
        ("features_extractor", TinyExtractor),  # defined here: this module is imported
        ("optimizer", torch.optim.RMSprop),
    ],
)
def test_class_names_round_trip(kind: str, cls: type) -> None:
    assert resolve_named_class(kind, class_to_string(cls), field="f") is cls


def test_the_deprecated_resolve_class_goes_through_the_allow_list() -> None:
    with pytest.warns(DeprecationWarning, match="resolve_named_class"):
        assert resolve_class("relu", "activation_fn") is nn.ReLU
    with pytest.warns(DeprecationWarning), pytest.raises(ConfigurationError, match="not allowed"):
        resolve_class("tempfile:mkdtemp", "activation_fn")


# gSDE -----------------------------------------------------------------------------------------------
def test_gsde_policy_and_squashing() -> None:
    policy = ActorCriticPolicy(VEC, BOX2, use_sde=True, squash_output=True)
    obs = _batch(VEC, 6)
    actions, _, log_prob = policy(obs)
    assert actions.shape == (6, 2) and actions.abs().max() < 1 and torch.isfinite(log_prob).all()
    _, _, entropy = policy.evaluate_actions(obs, actions)
    assert entropy is None
    np.testing.assert_allclose(policy.unscale_action(np.array([[-1.0, 1.0]])), [[-2.0, 2.0]])
    np.testing.assert_allclose(policy.scale_action(np.array([[-2.0, 0.0]])), [[-1.0, 0.0]])
    policy.reset_noise(6)
    assert policy.sde_noise is not None and policy.sde_noise.exploration_matrices.shape == (6, 64, 2)


def test_reset_noise_without_gsde_is_refused() -> None:
    with pytest.raises(RuntimeError, match="use_sde"):
        ActorCriticPolicy(VEC, BOX2).reset_noise()


# errors ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "make, message",
    [
        (
            lambda: ActorCriticCnnPolicy(VEC, spaces.Discrete(2)),
            "NatureCNN .*needs image observations.*MlpPolicy",
        ),
        (
            lambda: ActorCriticCnnPolicy(spaces.Box(0, 255, (32, 32, 3), np.uint8), spaces.Discrete(2)),
            "at least 36x36 pixels; got 32x32",
        ),
        (lambda: ActorCriticPolicy(DICT, spaces.Discrete(2)), "MultiInputPolicy"),
        (lambda: MultiInputActorCriticPolicy(VEC, spaces.Discrete(2)), "needs Dict observations"),
        (lambda: ActorCriticPolicy(VEC, spaces.Discrete(2), use_sde=True), "gSDE.*Box actions.*Discrete"),
        (lambda: ActorCriticPolicy(VEC, BOX2, squash_output=True), "use_sde=True"),
        (lambda: ActorCriticPolicy(VEC, spaces.Tuple((BOX2,))), r"Tuple\(Box"),
        (
            lambda: MultiInputActorCriticPolicy(
                spaces.Dict({"small": spaces.Box(0, 255, (20, 20, 1), np.uint8)}), spaces.Discrete(2)
            ),
            "at least 36x36",
        ),
    ],
    ids=[
        "cnn-on-vector",
        "image-too-small",
        "mlp-on-dict",
        "multiinput-on-box",
        "sde-discrete",
        "squash-no-sde",
        "tuple-actions",
        "dict-small-image",
    ],
)
def test_errors_name_the_problem_and_the_fix(make: Any, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        make()


def test_image_sized_exactly_at_the_minimum_works() -> None:
    policy = ActorCriticCnnPolicy(spaces.Box(0, 255, (36, 36, 1), np.uint8), spaces.Discrete(2))
    assert policy(_batch(policy.observation_space, 1))[0].shape == (1,)


@pytest.mark.parametrize(
    "module",
    [
        "lit_sb3_core.nets.actor_critic",
        "lit_sb3_core.nets.torch_layers",
        "lit_sb3_core.nets.distributions",
        "lit_sb3_core.foundation.spaces",
    ],
)
def test_all_is_honest(module: str) -> None:
    import importlib

    mod = importlib.import_module(module)
    assert mod.__all__ and all(hasattr(mod, name) for name in mod.__all__)
