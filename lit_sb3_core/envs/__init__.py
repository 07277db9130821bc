"""The environment stack, free of Lightning: vector envs (sync, async, envpool), guards and fault checks on
what an env returns, Atari preprocessing, episode statistics, and ``make_vector_env``, which turns an env
id, an ``Env``, a factory, a gymnasium ``VectorEnv`` or an SB3 ``VecEnv`` into one vector env.

Internal layer: users import these names from :mod:`lit_sb3_core`. See docs/architecture.md.
"""
