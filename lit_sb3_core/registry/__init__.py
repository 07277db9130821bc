"""Registry: plugin discovery (pluggy hooks over ``lit_sb3`` entry points) and the name -> import-string
tables it fills. Stays free of torch, lightning and gymnasium so ``lit-sb3 algos`` is cheap.

Internal layer: users call the registry through :mod:`lit_sb3_core`'s exports. See docs/architecture.md.
"""
