"""Foundation: spaces, schedules, validators, RNG states and names; depends on nothing else in core.

Internal layer: plugin authors import these through :mod:`lit_sb3_core.sdk`. See docs/architecture.md.
"""
