"""Stable-Baselines3's and sb3-contrib's ``common`` modules, as views over lit-sb3.

``from stable_baselines3.common.env_util import make_vec_env`` becomes
``from lit_sb3.common.env_util import make_vec_env``; where SB3 and sb3-contrib both have a module of one
name (``vec_env``, ``utils``, ``wrappers``, ``envs``, ...), the module here holds the names of both.
See docs/sb3-migration.md for every name and the few deliberate differences.
"""
