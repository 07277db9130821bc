# SB3 docs, guide/integrations.md ("MLFLow": a KVWriter that logs to MLflow, set with model.set_logger; the
# loggers extra installs mlflow-skinny), with stable_baselines3 renamed lit_sb3. Changed for the test:
# 10000 -> 300 timesteps; MLflow writes to a local file store in the working directory (no server); a check
# at the end that MLflow received the metrics.
import os
os.environ.setdefault("MLFLOW_TRACKING_URI", "file:./mlruns")  # added for the test
os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")  # added: mlflow-skinny has no SQL store

import sys
from typing import Any, Dict, Tuple, Union

import mlflow
import numpy as np

from lit_sb3 import SAC
from lit_sb3.common.logger import HumanOutputFormat, KVWriter, Logger


class MLflowOutputFormat(KVWriter):
    """
    Dumps key/value pairs into MLflow's numeric format.
    """

    def write(
        self,
        key_values: Dict[str, Any],
        key_excluded: Dict[str, Union[str, Tuple[str, ...]]],
        step: int = 0,
    ) -> None:

        for (key, value), (_, excluded) in zip(
            sorted(key_values.items()), sorted(key_excluded.items())
        ):

            if excluded is not None and "mlflow" in excluded:
                continue

            if isinstance(value, np.ScalarType):
                if not isinstance(value, str):
                    mlflow.log_metric(key, value, step)


loggers = Logger(
    folder=None,
    output_formats=[HumanOutputFormat(sys.stdout), MLflowOutputFormat()],
)

with mlflow.start_run():
    model = SAC("MlpPolicy", "Pendulum-v1", verbose=2)
    # Set custom logger
    model.set_logger(loggers)
    model.learn(total_timesteps=300, log_interval=1)

# added for the test: the run holds SB3's metrics
run = mlflow.last_active_run()
assert "time/total_timesteps" in mlflow.get_run(run.info.run_id).data.metrics, mlflow.get_run(run.info.run_id).data.metrics
