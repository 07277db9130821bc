"""Experience data: the rollout buffer, replay buffers, exploration noise and running normalization.

Internal layer: plugin authors import these through :mod:`lit_sb3_core.sdk`. See docs/architecture.md.
"""
