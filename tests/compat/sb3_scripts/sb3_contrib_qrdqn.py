# SB3 docs, guide/sb3_contrib.md (also sb3-contrib's guide/examples.md), with sb3_contrib renamed lit_sb3.
# Changed for the test: 10000 -> 1000 timesteps.
from lit_sb3 import QRDQN

policy_kwargs = dict(n_quantiles=50)
model = QRDQN("MlpPolicy", "CartPole-v1", policy_kwargs=policy_kwargs, verbose=1)
model.learn(total_timesteps=1000, log_interval=4)
model.save("qrdqn_cartpole")
