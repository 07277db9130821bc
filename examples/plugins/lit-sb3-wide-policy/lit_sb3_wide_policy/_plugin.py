"""Registers the ``WideMlpPolicy`` alias for PPO. Imports nothing heavy: discovery stays cheap."""

from lit_sb3_core.hookspecs import hookimpl


@hookimpl
def lit_sb3_register_policies(registry):
    registry.add(algo="ppo", alias="WideMlpPolicy", target="lit_sb3_wide_policy.policies:WideMlpPolicy")
