# SB3 docs, guide/vec_envs.md ("Vectorized Environments Wrappers"), with stable_baselines3 renamed
# lit_sb3. Unchanged otherwise.
from gymnasium.wrappers import RescaleAction
from lit_sb3.common.env_util import make_vec_env

# Use gym wrapper for each sub-env of the VecEnv
wrapper_kwargs = dict(min_action=-1.0, max_action=1.0)
vec_env = make_vec_env(
    "Pendulum-v1", n_envs=2, wrapper_class=RescaleAction, wrapper_kwargs=wrapper_kwargs
)
assert (vec_env.action_space.high == 1.0).all()  # added for the test
