# sb3-contrib docs, modules/crossq.rst (example), with sb3_contrib renamed lit_sb3. Changed for the test:
# 1_000_000 -> 150 timesteps (CrossQ learns from step 100, and its 2048-unit critics take about a second
# per gradient step on a CPU); a check that the saved model loads.
from lit_sb3 import CrossQ

model = CrossQ("MlpPolicy", "Walker2d-v4")
model.learn(total_timesteps=150)
model.save("crossq_walker")

assert CrossQ.load("crossq_walker").num_timesteps == 150
