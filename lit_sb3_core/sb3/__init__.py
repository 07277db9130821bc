"""Everything Stable-Baselines3-shaped, in one room: SB3's ``VecEnv`` API and its views to and from
gymnasium's vector envs, SB3's model zip files, SB3's logger, and the parts of ``RLAlgorithm`` that give
it SB3's attributes, file hooks and ``self.logger``. The facade ``lit_sb3`` names SB3's modules over it.

Internal layer: users import these names from :mod:`lit_sb3` and :mod:`lit_sb3_core`. See
docs/architecture.md for why ``vec_env``/``vec_env_views`` sit lower than the rest of the package.
"""
