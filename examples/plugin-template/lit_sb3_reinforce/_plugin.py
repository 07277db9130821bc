"""Registers REINFORCE with lit-sb3.

Discovery imports this module whenever the registry is first used, so it registers an import string and
imports nothing heavy (no torch, lightning or gymnasium); the class loads on first use.
"""

from lit_sb3_core.hookspecs import hookimpl


@hookimpl
def lit_sb3_register_algorithms(registry):
    registry.add(
        "reinforce",
        "lit_sb3_reinforce.reinforce:REINFORCE",
        description="REINFORCE: Monte-Carlo policy gradient with an optional value baseline, on-policy",
    )
