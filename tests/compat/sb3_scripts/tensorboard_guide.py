# SB3 docs, guide/tensorboard.md (basic usage, several runs, custom scalars, figures, hyperparameters, direct
# access to the summary writer) and common/logger.md (configure + set_logger), with stable_baselines3 renamed
# lit_sb3. Changed for the test: budgets (10_000 / 50_000 -> 1_000 / 300 timesteps), /tmp/... -> folders
# in the working directory, "log every 1000 calls" -> 100. Not included: the image and video recorders, which
# call env.render(mode="rgb_array") on envs made without a render mode (gymnasium refuses that in SB3 too).
import numpy as np
import matplotlib.pyplot as plt

from lit_sb3 import A2C, SAC
from lit_sb3.common.callbacks import BaseCallback
from lit_sb3.common.logger import Figure, HParam, TensorBoardOutputFormat, configure

model = A2C("MlpPolicy", "CartPole-v1", verbose=1, tensorboard_log="./a2c_cartpole_tensorboard/")
model.learn(total_timesteps=1_000)

model = A2C("MlpPolicy", "CartPole-v1", verbose=1, tensorboard_log="./a2c_cartpole_tensorboard/")
model.learn(total_timesteps=1_000, tb_log_name="first_run")
# Pass reset_num_timesteps=False to continue the training curve in tensorboard
# By default, it will create a new curve
# Keep tb_log_name constant to have continuous curve (see note below)
model.learn(total_timesteps=1_000, tb_log_name="second_run", reset_num_timesteps=False)
model.learn(total_timesteps=1_000, tb_log_name="third_run", reset_num_timesteps=False)
assert model.num_timesteps == 3_000

model = SAC("MlpPolicy", "Pendulum-v1", tensorboard_log="./sac/", verbose=1)


class TensorboardCallback(BaseCallback):
    """
    Custom callback for plotting additional values in tensorboard.
    """

    def __init__(self, verbose=0):
        super().__init__(verbose)

    def _on_step(self) -> bool:
        # Log scalar value (here a random variable)
        value = np.random.random()
        self.logger.record("random_value", value)
        return True


model.learn(300, callback=TensorboardCallback())


class FigureRecorderCallback(BaseCallback):
    def __init__(self, verbose=0):
        super().__init__(verbose)

    def _on_step(self):
        # Plot values (here a random variable)
        figure = plt.figure()
        figure.add_subplot().plot(np.random.random(3))
        # Close the figure after logging it
        self.logger.record("trajectory/figure", Figure(figure, close=True), exclude=("stdout", "log", "json", "csv"))
        plt.close()
        return True


model = SAC("MlpPolicy", "Pendulum-v1", tensorboard_log="./sac/", verbose=1)
model.learn(300, callback=FigureRecorderCallback())


class HParamCallback(BaseCallback):
    """
    Saves the hyperparameters and metrics at the start of the training, and logs them to TensorBoard.
    """

    def _on_training_start(self) -> None:
        hparam_dict = {
            "algorithm": self.model.__class__.__name__,
            "learning rate": self.model.learning_rate,
            "gamma": self.model.gamma,
        }
        # define the metrics that will appear in the `HPARAMS` Tensorboard tab by referencing their tag
        # Tensorbaord will find & display metrics from the `SCALARS` tab
        metric_dict = {
            "rollout/ep_len_mean": 0,
            "train/value_loss": 0.0,
        }
        self.logger.record(
            "hparams",
            HParam(hparam_dict, metric_dict),
            exclude=("stdout", "log", "json", "csv"),
        )

    def _on_step(self) -> bool:
        return True


model = A2C("MlpPolicy", "CartPole-v1", tensorboard_log="runs/", verbose=1)
model.learn(total_timesteps=1_000, callback=HParamCallback())

model = SAC("MlpPolicy", "Pendulum-v1", tensorboard_log="./sac/", verbose=1)


class SummaryWriterCallback(BaseCallback):

    def _on_training_start(self):
        self._log_freq = 100  # log every 1000 calls

        output_formats = self.logger.output_formats
        # Save reference to tensorboard formatter object
        # note: the failure case (not formatter found) is not handled here, should be done with try/except.
        self.tb_formatter = next(formatter for formatter in output_formats if isinstance(formatter, TensorBoardOutputFormat))

    def _on_step(self) -> bool:
        if self.n_calls % self._log_freq == 0:
            self.tb_formatter.writer.add_text("direct_access", "this is a value", self.num_timesteps)
            self.tb_formatter.writer.flush()


model.learn(300, callback=SummaryWriterCallback())
assert model.num_timesteps == 1  # the page's _on_step returns None, which stops training at once in SB3 too

tmp_path = "./sb3_log/"
# set up logger
new_logger = configure(tmp_path, ["stdout", "csv", "tensorboard"])

model = A2C("MlpPolicy", "CartPole-v1", verbose=1)
# Set new logger
model.set_logger(new_logger)
model.learn(1_000)

import os

assert os.path.exists(os.path.join(tmp_path, "progress.csv"))
