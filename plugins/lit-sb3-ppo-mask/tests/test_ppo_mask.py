"""MaskablePPO behaves like sb3-contrib's: its defaults, masks from the env, and it never acts invalidly."""

import inspect
import warnings

import _ppo_mask_envs as envs
import gymnasium as gym
import numpy as np
import pytest
import torch

from lit_sb3 import MaskablePPO, RLEnvDataModule, RLTrainer, evaluate_policy, make_algo
from lit_sb3_core.errors import ConfigurationError
from lit_sb3_ppo_mask import ActionMasker, MaskableActorCriticPolicy, get_action_masks, is_masking_supported

SMALL = {"n_steps": 64, "batch_size": 64, "n_epochs": 2}

CONTRIB_DEFAULTS = {
    "learning_rate": 3e-4, "n_steps": 2048, "batch_size": 64, "n_epochs": 10, "gamma": 0.99, "gae_lambda": 0.95,
    "clip_range": 0.2, "clip_range_vf": None, "normalize_advantage": True, "ent_coef": 0.0, "vf_coef": 0.5,
    "max_grad_norm": 0.5, "target_kl": None, "stats_window_size": 100, "tensorboard_log": None,
    "policy_kwargs": None, "verbose": 0, "seed": None, "device": "auto",
}  # fmt: skip


@pytest.fixture(autouse=True)
def _setup() -> None:
    torch.set_num_threads(1)
    envs.MaskedChoicesEnv.invalid_actions = 0
    envs.MaskedChoicesEnv.steps = 0


def _quiet_trainer(steps: int, **kwargs: object) -> RLTrainer:
    return RLTrainer(
        max_steps=steps, logger=False, enable_progress_bar=False, enable_checkpointing=False, **kwargs
    )


def test_defaults_match_the_installed_sb3_contrib() -> None:
    contrib = pytest.importorskip("sb3_contrib")
    theirs = {k: p.default for k, p in inspect.signature(contrib.MaskablePPO.__init__).parameters.items()}
    ours = {k: p.default for k, p in inspect.signature(MaskablePPO.__init__).parameters.items()}
    assert {k: ours[k] for k in CONTRIB_DEFAULTS} == CONTRIB_DEFAULTS
    assert {k: theirs[k] for k in CONTRIB_DEFAULTS if k != "device"} == {
        k: v for k, v in CONTRIB_DEFAULTS.items() if k != "device"
    }
    assert "use_sde" not in ours and "use_sde" not in MaskablePPO(**SMALL).hparams


def test_registry_facade_and_policy_aliases() -> None:
    model = make_algo("MASKABLE_PPO", **SMALL)
    assert type(model) is MaskablePPO
    assert set(MaskablePPO.policy_aliases) == {"MlpPolicy", "CnnPolicy", "MultiInputPolicy"}
    assert all(issubclass(cls, MaskableActorCriticPolicy) for cls in MaskablePPO.policy_aliases.values())


def test_same_seed_gives_sb3_contribs_initial_weights() -> None:
    contrib = pytest.importorskip("sb3_contrib")
    for env_id in (envs.ARMS, envs.MULTI_ARMS, envs.BITS):
        ours = MaskablePPO(env=env_id, seed=3)
        theirs = contrib.MaskablePPO("MlpPolicy", gym.make(env_id), seed=3, device="cpu")
        for (name, a), b in zip(ours.policy.named_parameters(), theirs.policy.parameters()):
            assert torch.equal(a, b), f"{env_id}: {name}"


def test_box_actions_are_refused_with_a_hint() -> None:
    with pytest.raises(
        ConfigurationError, match=r"The algorithm only supports Discrete.*Box.*Use PPO"
    ) as info:
        MaskablePPO(env="Pendulum-v1")
    assert isinstance(info.value, AssertionError)  # sb3-contrib asserts


@pytest.mark.parametrize("vec_env_cls", ["DummyVecEnv", "SubprocVecEnv"])
def test_masks_are_read_through_monitor_and_a_missing_method_is_a_value_error(vec_env_cls: str) -> None:
    from lit_sb3.common import vec_env
    from lit_sb3.common.env_util import make_vec_env

    cls = getattr(vec_env, vec_env_cls)
    masked = make_vec_env(
        envs.MaskedChoicesEnv, 2, env_kwargs={"kind": "discrete"}, vec_env_cls=cls
    )  # in Monitor
    try:
        assert is_masking_supported(masked) and get_action_masks(masked).shape == (2, 6)
    finally:
        masked.close()
    plain = make_vec_env("CartPole-v1", n_envs=2, vec_env_cls=cls)
    try:
        assert not is_masking_supported(plain)  # asked without an error: the workers keep running
        model = MaskablePPO(env="CartPole-v1", **SMALL)
        with pytest.raises(ValueError, match=r"action_masks\(\) method.*ActionMasker.*use_masking=False"):
            evaluate_policy(model, plain, n_eval_episodes=1, warn=False, use_masking=True)
        mean, _ = evaluate_policy(model, plain, n_eval_episodes=1, warn=False, use_masking=False)
        assert mean > 0
    finally:
        plain.close()


def test_a_batch_larger_than_the_rollout_trains_on_the_whole_rollout_with_a_warning() -> None:
    model = MaskablePPO(n_steps=16, batch_size=64, n_epochs=1, seed=0)
    with pytest.warns(
        UserWarning, match=r"batch_size=64 is larger than the rollout \(16 = n_steps \* n_envs\)"
    ):
        model.learn(16, env=envs.ARMS)
    assert model.n_updates == 1


def test_env_without_masks_gets_a_clear_error_and_use_masking_false_trains() -> None:
    with pytest.raises(ConfigurationError, match=r"no action_masks\(\).*ActionMasker.*use_masking=False"):
        MaskablePPO(**SMALL).learn(64, env="CartPole-v1")
    model = MaskablePPO(**SMALL).learn(64, env="CartPole-v1", use_masking=False)
    assert model.num_timesteps >= 64 and model.use_masking  # the learn() argument applies to that call only
    unmasked = MaskablePPO(use_masking=False, **SMALL)
    _quiet_trainer(64).fit(unmasked, datamodule=RLEnvDataModule(train_env="CartPole-v1"))
    assert unmasked.num_timesteps >= 64 and unmasked.hparams["use_masking"] is False


def test_masks_of_the_wrong_size_are_refused() -> None:
    def wrong() -> gym.Env:
        return ActionMasker(gym.make("CartPole-v1"), lambda env: np.ones(3, dtype=bool))

    with pytest.raises(ConfigurationError, match=r"gives \(3,\) booleans per sub-env.*need 2"):
        MaskablePPO(**SMALL).learn(64, env=wrong)


def test_policies_that_cannot_mask_are_refused() -> None:
    with pytest.raises(ConfigurationError, match="MaskableActorCriticPolicy"):
        MaskablePPO(policy="lit_sb3_core.sdk:ActorCriticPolicy", env=envs.ARMS)


def test_action_masker_and_mask_helpers() -> None:
    env = gym.make(envs.ARMS)
    env.reset(seed=0)
    by_name = ActionMasker(env, "action_masks")
    by_function = ActionMasker(env, lambda e: e.unwrapped.action_masks())
    np.testing.assert_array_equal(by_name.action_masks(), by_function.action_masks())
    assert is_masking_supported(by_name) and not is_masking_supported(gym.make("CartPole-v1"))
    vec = gym.vector.SyncVectorEnv(
        [lambda: gym.make(envs.MULTI_ARMS)] * 3, autoreset_mode=gym.vector.AutoresetMode.SAME_STEP
    )
    observations, _ = vec.reset(seed=1)
    masks = get_action_masks(vec)
    assert masks.shape == (3, 7) and masks.dtype == bool
    np.testing.assert_array_equal(masks, observations.astype(bool))  # these envs observe their mask


def test_rollout_stores_masks_and_the_update_scores_actions_under_them() -> None:
    model = MaskablePPO(n_steps=64, batch_size=64, n_epochs=1, seed=0)
    model.learn(64, env=envs.ARMS, n_envs=2)
    buffer = model.rollout
    assert buffer.has_masks
    # The env observes its own mask, so the stored masks must equal the stored observations.
    assert torch.equal(buffer.action_masks, buffer.observations.bool())
    assert buffer.action_masks.gather(2, buffer.actions.unsqueeze(-1)).all(), "a masked action was sampled"
    # Collect a fresh rollout: with the stored masks the current policy reproduces the stored log-probs.
    model.num_timesteps = 0
    model.collect_rollout()

    def flat(t: torch.Tensor) -> torch.Tensor:
        return t.reshape(-1, *t.shape[2:])

    with torch.no_grad():
        _, masked, entropy = model.policy.evaluate_actions(
            flat(buffer.observations), flat(buffer.actions), flat(buffer.action_masks)
        )
        _, unmasked, full_entropy = model.policy.evaluate_actions(
            flat(buffer.observations), flat(buffer.actions)
        )
    torch.testing.assert_close(masked, buffer.log_probs.reshape(-1))
    assert (unmasked < masked - 1e-4).any()
    assert (entropy <= full_entropy + 1e-5).all() and (entropy < full_entropy - 1e-3).any()
    batch = next(buffer.minibatches(16))
    assert batch.action_masks.shape == (16, 6)
    torch.testing.assert_close(model.evaluate_minibatch(batch)[1], batch.old_log_prob)


def test_predict_respects_masks() -> None:
    model = MaskablePPO(env=envs.MULTI_ARMS, seed=0)
    rng = np.random.default_rng(0)
    obs = rng.random((50, 7)).astype(np.float32)
    masks = rng.random((50, 7)) < 0.5
    masks[:, 0] = masks[:, 3] = True  # one allowed choice per sub-action at least
    for deterministic in (True, False):
        actions, state = model.predict(obs, deterministic=deterministic, action_masks=masks)
        assert actions.shape == (50, 2) and state is None
        assert masks[np.arange(50), actions[:, 0]].all() and masks[np.arange(50), 3 + actions[:, 1]].all()
    only = np.zeros(7, dtype=bool)
    only[[2, 4]] = True
    action, _ = model.predict(obs[0], action_masks=only)
    assert action.tolist() == [2, 1]
    with pytest.raises(ValueError, match=r"expected \(1, 7\) booleans"):
        model.predict(obs[0], action_masks=np.ones(6, dtype=bool))


def test_learns_to_pick_the_best_allowed_arm_and_never_acts_invalidly() -> None:
    model = MaskablePPO(n_steps=256, batch_size=64, n_epochs=4, seed=0)
    datamodule = RLEnvDataModule(train_env=envs.ARMS, val_env=envs.ARMS, n_envs=4, seed=0)
    trainer = _quiet_trainer(8192, val_check_interval=4, num_sanity_val_steps=0)
    trainer.fit(model, datamodule=datamodule)
    assert "val/mean_reward" in trainer.callback_metrics  # validation during fit ran, with masks
    assert envs.MaskedChoicesEnv.steps >= 8192
    assert envs.MaskedChoicesEnv.invalid_actions == 0, "training or validation took a masked action"

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        masked_mean, _ = evaluate_policy(model, envs.ARMS, n_eval_episodes=20, use_masking=True)
        result = trainer.test(model, env=envs.ARMS, n_eval_episodes=10, use_masking=True, verbose=False)
    assert envs.MaskedChoicesEnv.invalid_actions == 0
    # A uniformly random allowed arm earns 4 per 8-step episode; the best allowed arm about 7.
    assert masked_mean >= 6.0, masked_mean
    assert result[0]["test/mean_reward"] >= 6.0

    vec = gym.vector.SyncVectorEnv(
        [lambda: gym.make(envs.ARMS)] * 4, autoreset_mode=gym.vector.AutoresetMode.SAME_STEP
    )
    observations, _ = vec.reset(seed=5)
    masks = get_action_masks(vec)
    actions, _ = trainer.predict(model, observation=observations, action_masks=masks)
    assert masks[np.arange(4), actions].all()
    best_allowed = np.array([np.flatnonzero(mask).max() for mask in masks])
    assert (actions == best_allowed).mean() >= 0.75


def test_normalized_observations_reach_the_masked_predict_path() -> None:
    model = MaskablePPO(**SMALL, seed=0)
    _quiet_trainer(128).fit(model, datamodule=RLEnvDataModule(train_env=envs.ARMS, normalize=True, n_envs=2))
    assert model.obs_normalizer is not None and model.obs_normalizer.rms.count > 100
    assert envs.MaskedChoicesEnv.invalid_actions == 0
    obs = np.random.default_rng(0).random((64, 6)).astype(np.float32)
    every_action = np.ones((64, 6), dtype=bool)
    np.testing.assert_array_equal(
        model.predict(obs, deterministic=True, action_masks=every_action)[0],
        model.predict(obs, deterministic=True)[0],
    )


def test_public_names_resolve() -> None:
    import lit_sb3_ppo_mask

    assert sorted(dir(lit_sb3_ppo_mask)) == sorted(lit_sb3_ppo_mask.__all__)
    for name in lit_sb3_ppo_mask.__all__:
        assert getattr(lit_sb3_ppo_mask, name).__name__ == name


def test_sb3_contrib_own_loop_collects_with_the_envs_masks_unless_told_not_to() -> None:
    model = MaskablePPO("MlpPolicy", envs.ARMS, seed=0, device="cpu", **SMALL)
    _, callback = model._setup_learn(128)
    assert model.collect_rollouts(model.get_env(), callback, model.rollout_buffer, 64)
    assert model.num_timesteps == 64 and envs.MaskedChoicesEnv.invalid_actions == 0
    # The observation is the mask of the step, and it went into the rollout with it.
    observations = model.rollout_buffer.observations.reshape(64, 6).astype(bool)
    np.testing.assert_array_equal(model.rollout.action_masks.reshape(64, 6).numpy(), observations)

    assert model.collect_rollouts(model.get_env(), callback, model.rollout_buffer, 64, use_masking=False)
    assert not model.rollout.has_masks and model.use_masking  # unmasked for that call only
