"""The learning ledger: lit-sb3 beside SB3 on Atari and MuJoCo, one committed JSON record per run.

* ``cases``   the cases (budgets, eval intervals, hyperparameters shared by both libraries, cost).
* ``run.py``  one run in its own process (``--next``: the first missing record); checkpoints and resumes.
* ``report.py`` README.md, curves/ and the rliable aggregate from the records.
* ``loop.sh`` ``--next`` until nothing is missing, niced, on one core.
"""
