# SB3 docs, guide/quickstart.md (the one-liner), with stable_baselines3 renamed lit_sb3.
# Changed for the test: 10_000 -> 1_000 timesteps.
from lit_sb3 import A2C

model = A2C("MlpPolicy", "CartPole-v1").learn(1_000)
