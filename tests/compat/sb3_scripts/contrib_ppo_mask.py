# sb3-contrib docs, modules/ppo_mask.md (first example), with sb3_contrib and stable_baselines3 renamed
# lit_sb3. Changed for the test: 5_000 -> 2_048 timesteps; reward_threshold 90 -> 50 (for the shorter run); the
# endless prediction loop runs 200 steps; MaskableEvalCallback (imported by the page) evaluates once.
from lit_sb3 import MaskablePPO
from lit_sb3.common.envs import InvalidActionEnvDiscrete
from lit_sb3.common.maskable.evaluation import evaluate_policy
from lit_sb3.common.maskable.utils import get_action_masks
# This is a drop-in replacement for EvalCallback
from lit_sb3.common.maskable.callbacks import MaskableEvalCallback


env = InvalidActionEnvDiscrete(dim=80, n_invalid_actions=60)
model = MaskablePPO("MlpPolicy", env, gamma=0.4, seed=32, verbose=1)
model.learn(2_048, callback=MaskableEvalCallback(InvalidActionEnvDiscrete(dim=80, n_invalid_actions=60), eval_freq=2_048))

evaluate_policy(model, env, n_eval_episodes=20, reward_threshold=50, warn=False)

model.save("ppo_mask")
del model # remove to demonstrate saving and loading

model = MaskablePPO.load("ppo_mask")

obs, _ = env.reset()
for _ in range(200):
    # Retrieve current action mask
    action_masks = get_action_masks(env)
    action, _states = model.predict(obs, action_masks=action_masks)
    obs, reward, terminated, truncated, info = env.step(action)
    if terminated or truncated:
        obs, _ = env.reset()
