# SB3 docs, guide/examples.md ("Multiprocessing with off-policy algorithms"), with stable_baselines3
# renamed lit_sb3. Changed: "Pendulum-v0" (no longer in gymnasium, so the example fails with SB3 too) ->
# "Pendulum-v1"; 10_000 -> 400 timesteps.
import gymnasium as gym

from lit_sb3 import SAC
from lit_sb3.common.env_util import make_vec_env

vec_env = make_vec_env("Pendulum-v1", n_envs=4, seed=0)

# We collect 4 transitions per call to `env.step()`
# and performs 2 gradient steps per call to `env.step()`
# if gradient_steps=-1, then we would do 4 gradients steps per call to `env.step()`
model = SAC("MlpPolicy", vec_env, train_freq=1, gradient_steps=2, verbose=1)
model.learn(total_timesteps=400)
