"""The Lightning engine: RLTrainer, RLEnvDataModule, the evaluation loop, checkpoint IO, model files and
exports, fault handling, the progress bar, and the protocol through which the trainer talks to an algorithm.

Internal layer: users import these names from :mod:`lit_sb3_core`. See docs/architecture.md.
"""
