"""``python -m lit_sb3_core``: the ``lit-sb3`` command without the console script."""

from __future__ import annotations

from lit_sb3_core.cli.main import main

raise SystemExit(main())
