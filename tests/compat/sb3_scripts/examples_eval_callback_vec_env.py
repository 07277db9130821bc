# SB3 docs, guide/examples.md ("Callbacks: Evaluate Agent Performance"), with stable_baselines3 renamed
# lit_sb3. Changed for the test: 5000 -> 300 timesteps, eval_freq 500 -> 100, 5 -> 2 evaluation episodes.
import os
import gymnasium as gym

from lit_sb3 import SAC
from lit_sb3.common.callbacks import EvalCallback
from lit_sb3.common.env_util import make_vec_env

env_id = "Pendulum-v1"
n_training_envs = 1
n_eval_envs = 5

# Create log dir where evaluation results will be saved
eval_log_dir = "./eval_logs/"
os.makedirs(eval_log_dir, exist_ok=True)

# Initialize a vectorized training environment with default parameters
train_env = make_vec_env(env_id, n_envs=n_training_envs, seed=0)

# Separate evaluation env, with different parameters passed via env_kwargs
# Eval environments can be vectorized to speed up evaluation.
eval_env = make_vec_env(env_id, n_envs=n_eval_envs, seed=0,
                        env_kwargs={'g':0.7})

# Create a callback that evaluates an agent for 5 episodes every 500 training environment steps.
# When using multiple training environments, agent will be evaluated every
# eval_freq calls to train_env.step(), thus it will be evaluated every
# (eval_freq * n_envs) training steps. See EvalCallback doc for more information.
eval_callback = EvalCallback(eval_env, best_model_save_path=eval_log_dir,
                              log_path=eval_log_dir, eval_freq=max(100 // n_training_envs, 1),
                              n_eval_episodes=2, deterministic=True,
                              render=False)

model = SAC("MlpPolicy", train_env)
model.learn(300, callback=eval_callback)

import numpy as np

assert np.load(os.path.join(eval_log_dir, "evaluations.npz"))["timesteps"].tolist() == [100, 200, 300]
