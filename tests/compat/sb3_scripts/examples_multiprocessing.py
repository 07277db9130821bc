# SB3 docs, guide/examples.md ("Multiprocessing: Unleashing the Power of Vectorized Environments"), with
# stable_baselines3 renamed lit_sb3. Changed for the test: 25_000 -> 2_048 timesteps; the prediction
# loop runs 50 steps instead of 1000 (each sub-env renders in "human" mode: the test sets SDL's dummy
# video driver).
import gymnasium as gym

from lit_sb3 import PPO
from lit_sb3.common.vec_env import DummyVecEnv, SubprocVecEnv
from lit_sb3.common.env_util import make_vec_env
from lit_sb3.common.utils import set_random_seed

def make_env(env_id: str, rank: int, seed: int = 0):
    """
    Utility function for multiprocessed env.

    :param env_id: the environment ID
    :param num_env: the number of environments you wish to have in subprocesses
    :param seed: the initial seed for RNG
    :param rank: index of the subprocess
    """
    def _init():
        env = gym.make(env_id, render_mode="human")
        env.reset(seed=seed + rank)
        return env
    set_random_seed(seed)
    return _init

if __name__ == "__main__":
    env_id = "CartPole-v1"
    num_cpu = 4  # Number of processes to use
    # Create the vectorized environment
    vec_env = SubprocVecEnv([make_env(env_id, i) for i in range(num_cpu)])

    # Stable Baselines provides you with make_vec_env() helper
    # which does exactly the previous steps for you.
    # You can choose between `DummyVecEnv` (usually faster) and `SubprocVecEnv`
    # env = make_vec_env(env_id, n_envs=num_cpu, seed=0, vec_env_cls=SubprocVecEnv)

    model = PPO("MlpPolicy", vec_env, verbose=1)
    model.learn(total_timesteps=2_048)

    obs = vec_env.reset()
    for _ in range(50):
        action, _states = model.predict(obs)
        obs, rewards, dones, info = vec_env.step(action)
        vec_env.render()
