# SB3 docs, guide/plotting.md (its three examples in one script: the third and second reuse log_dir),
# with stable_baselines3 renamed lit_sb3. Changed for the test: 20_000 -> 3_000 timesteps; plt.show()
# runs with matplotlib's Agg backend (the test sets MPLBACKEND).
import os
import gymnasium as gym
import matplotlib.pyplot as plt

from lit_sb3 import PPO
from lit_sb3.common.monitor import Monitor
from lit_sb3.common.results_plotter import plot_results
from lit_sb3.common import results_plotter

# Create log directory
log_dir = "tmp/"
os.makedirs(log_dir, exist_ok=True)

# Create and wrap the environment with Monitor
env = gym.make("CartPole-v1")
env = Monitor(env, log_dir)

# Train the agent
model = PPO("MlpPolicy", env, verbose=1, n_steps=512)
model.learn(total_timesteps=3_000)

# Plot the results
plot_results([log_dir], 3_000, results_plotter.X_TIMESTEPS, "PPO CartPole")
plt.show()

import matplotlib.pyplot as plt
from lit_sb3.common import results_plotter

# Plot by timesteps (shows sample efficiency)
# plot_results([log_dir], None, results_plotter.X_TIMESTEPS, "Rewards vs Timesteps")
# By Episodes
plot_results([log_dir], None, results_plotter.X_EPISODES, "Rewards vs Episodes")
# plot_results([log_dir], None, results_plotter.X_WALLTIME, "Rewards vs Time")

plt.tight_layout()
plt.show()

import numpy as np
import matplotlib.pyplot as plt
from lit_sb3.common.monitor import load_results
from lit_sb3.common.results_plotter import ts2xy, window_func

# Load the results
df = load_results(log_dir)

# Convert dataframe (x=timesteps, y=episodic return)
x, y = ts2xy(df, "timesteps")

# Plot raw data
plt.figure(figsize=(10, 6))
plt.subplot(2, 1, 1)
plt.scatter(x, y, s=2, alpha=0.6)
plt.xlabel("Timesteps")
plt.ylabel("Episode Reward")
plt.title("Raw Episode Rewards")

# Plot smoothed data with custom window
plt.subplot(2, 1, 2)
if len(x) >= 50:  # Only smooth if we have enough data
    x_smooth, y_smooth = window_func(x, y, 50, np.mean)
    plt.plot(x_smooth, y_smooth, linewidth=2)
    plt.xlabel("Timesteps")
    plt.ylabel("Average Episode Reward (50-episode window)")
    plt.title("Smoothed Episode Rewards")

plt.tight_layout()
plt.show()

assert len(x) > 50 and x[-1] <= model.num_timesteps  # added for the test: the training episodes were logged
