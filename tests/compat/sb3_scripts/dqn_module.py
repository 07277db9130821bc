# SB3 docs, modules/dqn.md, with stable_baselines3 renamed lit_sb3. Changed for the test: 10000 -> 1000
# timesteps; the endless loop runs 100 steps ("human" rendering works headless: SDL's dummy driver).
import gymnasium as gym

from lit_sb3 import DQN

env = gym.make("CartPole-v1", render_mode="human")

model = DQN("MlpPolicy", env, verbose=1)
model.learn(total_timesteps=1000, log_interval=4)
model.save("dqn_cartpole")

del model # remove to demonstrate saving and loading

model = DQN.load("dqn_cartpole")

obs, info = env.reset()
for _ in range(100):
    action, _states = model.predict(obs, deterministic=True)
    obs, reward, terminated, truncated, info = env.step(action)
    if terminated or truncated:
        obs, info = env.reset()
