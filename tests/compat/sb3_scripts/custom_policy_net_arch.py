# SB3 docs, guide/custom_policy.md ("Custom Network Architecture", PPO and SAC), with stable_baselines3
# renamed lit_sb3. Changed for the test: 20_000 and 5000 -> 1_024 and 300 timesteps.
import gymnasium as gym
import torch as th

from lit_sb3 import PPO

# Custom actor (pi) and value function (vf) networks
# of two layers of size 32 each with Relu activation function
# Note: an extra linear layer will be added on top of the pi and the vf nets, respectively
policy_kwargs = dict(activation_fn=th.nn.ReLU,
                     net_arch=dict(pi=[32, 32], vf=[32, 32]))
# Create the agent
model = PPO("MlpPolicy", "CartPole-v1", policy_kwargs=policy_kwargs, verbose=1, n_steps=256)
# Retrieve the environment
env = model.get_env()
# Train the agent
model.learn(total_timesteps=1_024)
# Save the agent
model.save("ppo_cartpole")

del model
# the policy_kwargs are automatically loaded
model = PPO.load("ppo_cartpole", env=env)

from lit_sb3 import SAC

# Custom actor architecture with two layers of 64 units each
# Custom critic architecture with two layers of 400 and 300 units
policy_kwargs = dict(net_arch=dict(pi=[64, 64], qf=[400, 300]))
# Create the agent
model = SAC("MlpPolicy", "Pendulum-v1", policy_kwargs=policy_kwargs, verbose=1)
model.learn(300)
