"""Core's own plugin: the built-ins core registers through the same hooks as any other plugin.

Discovery always loads this module under the plugin name ``core`` (directly, so a source checkout works
without installed entry points; the ``core`` entry point in ``pyproject.toml`` is then skipped), and
``LIT_SB3_BLOCK_PLUGINS`` cannot block it.

Core has nothing to register yet. To add a built-in, define the hook here with import strings only, since
this module is imported whenever the registry is first used and must stay free of torch, lightning and
gymnasium::

    from lit_sb3_core.hookspecs import hookimpl

    @hookimpl
    def lit_sb3_register_callbacks(registry):
        registry.add("eval", "lit_sb3_core.callbacks:EvalCallback", description="...")
"""

from __future__ import annotations
