# SB3 docs, guide/examples.md ("Dict Observations"), with stable_baselines3 renamed lit_sb3.
# Changed for the test: 100_000 -> 256 timesteps, n_steps=64.
from lit_sb3 import PPO
from lit_sb3.common.envs import SimpleMultiObsEnv


# Stable Baselines provides SimpleMultiObsEnv as an example environment with Dict observations
env = SimpleMultiObsEnv(random_start=False)

model = PPO("MultiInputPolicy", env, verbose=1, n_steps=64, batch_size=32)
model.learn(total_timesteps=256)
