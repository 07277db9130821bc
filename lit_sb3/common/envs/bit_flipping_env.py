"""SB3's ``BitFlippingEnv`` (the goal-conditioned env HER is tested on): the HER plugin's, with SB3's goal."""

from __future__ import annotations

try:
    from lit_sb3_her.envs import BitFlippingEnv as _PluginBitFlippingEnv
except ImportError as exc:  # pragma: no cover - the plugin ships with lit-sb3
    raise ImportError("BitFlippingEnv comes with the HER plugin: pip install lit-sb3-her") from exc

__all__ = ["BitFlippingEnv"]


class BitFlippingEnv(_PluginBitFlippingEnv):
    """SB3's bit-flipping env: flip the bits to reach all ones (the goal is the same every episode).

    The plugin's ``lit_sb3_her.BitFlippingEnv`` draws a new goal each episode (the HER paper's harder
    task) unless ``random_goal=False``; SB3's class, and so this name, keeps the all-ones goal.
    """

    def __init__(
        self,
        n_bits: int = 10,
        continuous: bool = False,
        max_steps: int | None = None,
        discrete_obs_space: bool = False,
        image_obs_space: bool = False,
        channel_first: bool = True,
        render_mode: str | None = None,
        random_goal: bool = False,
    ) -> None:
        super().__init__(
            n_bits=n_bits,
            continuous=continuous,
            max_steps=max_steps,
            discrete_obs_space=discrete_obs_space,
            image_obs_space=image_obs_space,
            channel_first=channel_first,
            render_mode=render_mode,
            random_goal=random_goal,
        )
