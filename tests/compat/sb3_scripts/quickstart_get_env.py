# SB3 docs, guide/quickstart.md (first example), with stable_baselines3 renamed lit_sb3. Changed for the test:
# 10_000 -> 2_000 timesteps; the prediction loop runs 200 steps; vec_env.render("human") removed (a window).
import gymnasium as gym

from lit_sb3 import A2C

env = gym.make("CartPole-v1", render_mode="rgb_array")

model = A2C("MlpPolicy", env, verbose=1)
model.learn(total_timesteps=2_000)

vec_env = model.get_env()
obs = vec_env.reset()
for i in range(200):
    action, _state = model.predict(obs, deterministic=True)
    obs, reward, done, info = vec_env.step(action)
    # VecEnv resets automatically
    # if done:
    #   obs = vec_env.reset()
