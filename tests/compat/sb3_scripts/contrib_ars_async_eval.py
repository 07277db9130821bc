# sb3-contrib docs, modules/ars.rst (ARS with AsyncEval, candidates evaluated in worker processes), with
# sb3_contrib and stable_baselines3 renamed lit_sb3. Changed for the test: 200_000 -> 2_000 timesteps.
from lit_sb3 import ARS
from lit_sb3.common.vec_env import AsyncEval
from lit_sb3.common.env_util import make_vec_env

env_id = "CartPole-v1"
n_envs = 2

model = ARS("LinearPolicy", env_id, n_delta=2, n_top=1, verbose=1)
# Create env for asynchronous evaluation (run in different processes)
async_eval = AsyncEval([lambda: make_vec_env(env_id) for _ in range(n_envs)], model.policy)

model.learn(total_timesteps=2_000, log_interval=4, async_eval=async_eval)
