# SB3 docs, guide/algos.md, with stable_baselines3 renamed lit_sb3. Unchanged otherwise.
from lit_sb3 import PPO

model = PPO("MlpPolicy", "CartPole-v1").learn(total_timesteps=1_000)
