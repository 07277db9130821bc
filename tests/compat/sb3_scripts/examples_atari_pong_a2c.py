# SB3 docs, guide/examples.md ("Atari Games": make_atari_env + VecFrameStack + A2C on Pong, and the note's
# Breakout env with terminal_on_life_loss=False; atari extra: ale-py ships the ROMs), with stable_baselines3
# renamed lit_sb3. Changed for the test: 25_000 -> 400 timesteps; the endless "while True" prediction loop
# runs 100 steps, without vec_env.render("human") (a window: headless OpenCV has none, in SB3 too); the
# note's Breakout env is reset and stepped once (the page only builds it); a check at the end.
from lit_sb3.common.env_util import make_atari_env

import ale_py

env = make_atari_env(
    "BreakoutNoFrameskip-v4",
    n_envs=1,
    wrapper_kwargs=dict(terminal_on_life_loss=False)
)
env.reset()  # added for the test
env.step([env.action_space.sample()])  # added for the test
env.close()  # added for the test

from lit_sb3.common.env_util import make_atari_env
from lit_sb3.common.vec_env import VecFrameStack
from lit_sb3 import A2C

import ale_py

# There already exists an environment generator
# that will make and wrap atari environments correctly.
# Here we are also multi-worker training (n_envs=4 => 4 environments)
vec_env = make_atari_env("PongNoFrameskip-v4", n_envs=4, seed=0)
# Frame-stacking with 4 frames
vec_env = VecFrameStack(vec_env, n_stack=4)

model = A2C("CnnPolicy", vec_env, verbose=1)
model.learn(total_timesteps=400)

obs = vec_env.reset()
for _ in range(100):
    action, _states = model.predict(obs, deterministic=False)
    obs, rewards, dones, info = vec_env.step(action)

assert obs.shape == (4, 84, 84, 4)  # added for the test
