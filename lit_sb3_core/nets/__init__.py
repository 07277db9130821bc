"""Networks: feature extractors, action distributions, actor-critic and off-policy policies.

Internal layer: plugin authors import these through :mod:`lit_sb3_core.sdk`. See docs/architecture.md.
"""
