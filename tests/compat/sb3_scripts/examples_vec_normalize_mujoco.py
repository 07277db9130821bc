# SB3 docs, guide/examples.md ("PyBullet: Normalizing input features": VecNormalize, save and load), run on
# the MuJoCo equivalent the page names, "HalfCheetah-v4" (the mujoco extra; PyBullet is not installed), with
# stable_baselines3 renamed lit_sb3. Changed for the test: HalfCheetahBulletEnv-v0 -> HalfCheetah-v4 (no
# "import pybullet_envs_gymnasium"); Path("/tmp/") -> the working directory. Budget unchanged (2000 steps).
from pathlib import Path

from lit_sb3.common.vec_env import VecNormalize
from lit_sb3.common.env_util import make_vec_env
from lit_sb3 import PPO

# Alternatively, you can use the MuJoCo equivalent "HalfCheetah-v4"
vec_env = make_vec_env("HalfCheetah-v4", n_envs=1)
# Automatically normalize the input features and reward
vec_env = VecNormalize(vec_env, norm_obs=True, norm_reward=True, clip_obs=10.0)

model = PPO("MlpPolicy", vec_env)
model.learn(total_timesteps=2000)

# Don't forget to save the VecNormalize statistics when saving the agent
log_dir = Path(".")
model.save(log_dir / "ppo_halfcheetah")
stats_path = log_dir / "vec_normalize.pkl"
vec_env.save(stats_path)

# To demonstrate loading
del model, vec_env

# Load the saved statistics
vec_env = make_vec_env("HalfCheetah-v4", n_envs=1)
vec_env = VecNormalize.load(stats_path, vec_env)
#  do not update them at test time
vec_env.training = False
# reward normalization is not needed at test time
vec_env.norm_reward = False

# Load the agent
model = PPO.load(log_dir / "ppo_halfcheetah", env=vec_env)

assert vec_env.obs_rms.count > 2000  # added for the test: the statistics came back from the file
