"""The HER plugin passes the conformance kit's plugin checks exactly as a third-party plugin would use them.

It registers a replay buffer, for which the kit has no dedicated base: ``PluginConformance`` checks that it
is installed, discovered, cheap to import and that its hooks match the specifications.
"""

from lit_sb3_core.testing import PluginConformance


class TestHerPluginConformance(PluginConformance):
    distribution = "lit-sb3-her"
