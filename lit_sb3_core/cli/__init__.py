"""The ``lit-sb3`` command (``lit_sb3_core.cli.main:main``): one module per sub-command, ``main`` parses
the command line and imports a sub-command's module only when it runs."""
