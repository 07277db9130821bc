# SB3 docs, guide/examples.md ("Record a Video"), with stable_baselines3 renamed lit_sb3. Unchanged
# otherwise (video_length 100; needs moviepy: lit-sb3's video extra).
import gymnasium as gym
from lit_sb3.common.vec_env import VecVideoRecorder, DummyVecEnv

env_id = "CartPole-v1"
video_folder = "logs/videos/"
video_length = 100

vec_env = DummyVecEnv([lambda: gym.make(env_id, render_mode="rgb_array")])

obs = vec_env.reset()

# Record the video starting at the first step
vec_env = VecVideoRecorder(vec_env, video_folder,
                       record_video_trigger=lambda x: x == 0, video_length=video_length,
                       name_prefix=f"random-agent-{env_id}")

vec_env.reset()
for _ in range(video_length + 1):
  action = [vec_env.action_space.sample()]
  obs, _, _, _ = vec_env.step(action)
# Save the video
vec_env.close()

import os
assert os.path.getsize(f"{video_folder}random-agent-{env_id}-step-0-to-step-100.mp4") > 0  # added for the test
