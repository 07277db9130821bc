# SB3 docs, guide/tensorboard.md (the first two examples), with stable_baselines3 renamed lit_sb3.
# Changed for the test: 10_000 -> 500 timesteps per learn call.
from lit_sb3 import A2C

model = A2C("MlpPolicy", "CartPole-v1", verbose=1, tensorboard_log="./a2c_cartpole_tensorboard/")
model.learn(total_timesteps=500)

from lit_sb3 import A2C

model = A2C("MlpPolicy", "CartPole-v1", verbose=1, tensorboard_log="./a2c_cartpole_tensorboard/")
model.learn(total_timesteps=500, tb_log_name="first_run")
# Pass reset_num_timesteps=False to continue the training curve in tensorboard
# By default, it will create a new curve
# Keep tb_log_name constant to have continuous curve (see note below)
model.learn(total_timesteps=500, tb_log_name="second_run", reset_num_timesteps=False)
model.learn(total_timesteps=500, tb_log_name="third_run", reset_num_timesteps=False)

import glob  # added for the test: one TensorBoard run folder per learn call
assert len(glob.glob("a2c_cartpole_tensorboard/**/events.out.tfevents.*", recursive=True)) >= 4
