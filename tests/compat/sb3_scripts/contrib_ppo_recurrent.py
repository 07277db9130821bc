# sb3-contrib docs, modules/ppo_recurrent.md, with sb3_contrib and stable_baselines3 renamed lit_sb3. Changed
# for the test: 5000 -> 256 timesteps, 20 -> 5 evaluation episodes; the endless prediction loop runs 200 steps; vec_env.render("human")
# removed (a window).
import numpy as np

from lit_sb3 import RecurrentPPO
from lit_sb3.common.evaluation import evaluate_policy

model = RecurrentPPO("MlpLstmPolicy", "CartPole-v1", verbose=1)
model.learn(256)

vec_env = model.get_env()
mean_reward, std_reward = evaluate_policy(model, vec_env, n_eval_episodes=5, warn=False)
print(mean_reward)

model.save("ppo_recurrent")
del model # remove to demonstrate saving and loading

model = RecurrentPPO.load("ppo_recurrent")

obs = vec_env.reset()
# cell and hidden state of the LSTM
lstm_states = None
num_envs = 1
# Episode start signals are used to reset the lstm states
episode_starts = np.ones((num_envs,), dtype=bool)
for _ in range(200):
    action, lstm_states = model.predict(obs, state=lstm_states, episode_start=episode_starts, deterministic=True)
    obs, rewards, dones, info = vec_env.step(action)
    episode_starts = dones
