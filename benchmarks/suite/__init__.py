"""The lit-sb3 benchmark suite: lit-sb3 beside Stable-Baselines3 / sb3-contrib, case by case.

One module per job:

* ``cases``     the benchmark cases: plain data (algorithm, env, hyperparameters shared by both libraries,
                budgets).
* ``envs``      the benchmark-only environments and wrappers the cases name.
* ``measure``   library-agnostic measurement inside a run: the episode recorder (learning curves), the
                deterministic evaluator, peak memory.
* ``libraries`` how each library is called: building a model from a case, hyperparameter translation
                (rl-zoo3 ``lin_x`` schedules and action-noise specs become SB3 objects), prediction.
* ``worker``    one run (one library, one case, one seed) in its own process.
* ``timing``    CPU time of short calls taking turns, for the in-process micro-benchmarks.
* ``runner``    the loop over cases, seeds and repeats; fresh processes, alternating library order.
* ``report``    the Markdown table, ``results.json`` and the learning-curve plots.

``benchmarks/run.py`` is the command line. Nothing here imports SB3 or lit-sb3 at module level: each run
imports only its own library, in its own process.
"""
