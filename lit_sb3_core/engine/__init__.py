"""The engine: RLTrainer, RLEnvDataModule, environments and their guards, evaluation, model files,
fault handling, and the protocol through which the trainer talks to an algorithm.

Internal layer: users import these names from :mod:`lit_sb3_core`. See docs/architecture.md.
"""
