# SB3 docs, modules/a2c.md (both examples), with stable_baselines3 renamed lit_sb3. Changed for the test:
# 25000 -> 1000 timesteps; the endless prediction loop runs 100 steps; vec_env.render("human") removed
# (it opens an OpenCV window).
from lit_sb3 import A2C
from lit_sb3.common.env_util import make_vec_env

# Parallel environments
vec_env = make_vec_env("CartPole-v1", n_envs=4)

model = A2C("MlpPolicy", vec_env, verbose=1)
model.learn(total_timesteps=1000)
model.save("a2c_cartpole")

del model # remove to demonstrate saving and loading

model = A2C.load("a2c_cartpole")

obs = vec_env.reset()
for _ in range(100):
    action, _states = model.predict(obs)
    obs, rewards, dones, info = vec_env.step(action)

from lit_sb3 import A2C
from lit_sb3.common.env_util import make_vec_env
from lit_sb3.common.vec_env import SubprocVecEnv

if __name__=="__main__":
    env = make_vec_env("CartPole-v1", n_envs=8, vec_env_cls=SubprocVecEnv)
    model = A2C("MlpPolicy", env, device="cpu")
    model.learn(total_timesteps=1_000)
