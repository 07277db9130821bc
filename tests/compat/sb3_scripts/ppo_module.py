# SB3 docs, modules/ppo.md (both examples), with stable_baselines3 renamed lit_sb3. Changed for the test:
# 25000 -> 2048 timesteps; the endless prediction loop runs 100 steps; vec_env.render("human") removed
# (it opens an OpenCV window).
import gymnasium as gym

from lit_sb3 import PPO
from lit_sb3.common.env_util import make_vec_env

# Parallel environments
vec_env = make_vec_env("CartPole-v1", n_envs=4)

model = PPO("MlpPolicy", vec_env, verbose=1, n_steps=256)
model.learn(total_timesteps=2048)
model.save("ppo_cartpole")

del model # remove to demonstrate saving and loading

model = PPO.load("ppo_cartpole")

obs = vec_env.reset()
for _ in range(100):
    action, _states = model.predict(obs)
    obs, rewards, dones, info = vec_env.step(action)

from lit_sb3 import PPO
from lit_sb3.common.env_util import make_vec_env
from lit_sb3.common.vec_env import SubprocVecEnv

if __name__=="__main__":
    env = make_vec_env("CartPole-v1", n_envs=8, vec_env_cls=SubprocVecEnv)
    model = PPO("MlpPolicy", env, device="cpu", n_steps=128)
    model.learn(total_timesteps=1_024)
