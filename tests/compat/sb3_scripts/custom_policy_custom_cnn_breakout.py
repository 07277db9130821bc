# SB3 docs, guide/custom_policy.md ("Custom Feature Extractor": CustomCNN with PPO on Breakout; atari extra:
# ale-py ships the ROMs), with stable_baselines3 renamed lit_sb3. The budget is the page's (learn(1000) runs
# one PPO rollout of 2048 steps and its 10 epochs: a few minutes on a CPU). Changed for the test: "import
# ale_py" added, which registers the ALE envs (SB3's own Atari example imports it too); a check at the end.
import torch as th
import torch.nn as nn
from gymnasium import spaces

import ale_py

from lit_sb3 import PPO
from lit_sb3.common.torch_layers import BaseFeaturesExtractor


class CustomCNN(BaseFeaturesExtractor):
    """
    :param observation_space: (gym.Space)
    :param features_dim: (int) Number of features extracted.
        This corresponds to the number of unit for the last layer.
    """

    def __init__(self, observation_space: spaces.Box, features_dim: int = 256):
        super().__init__(observation_space, features_dim)
        # We assume CxHxW images (channels first)
        # Re-ordering will be done by pre-preprocessing or wrapper
        n_input_channels = observation_space.shape[0]
        self.cnn = nn.Sequential(
            nn.Conv2d(n_input_channels, 32, kernel_size=8, stride=4, padding=0),
            nn.ReLU(),
            nn.Conv2d(32, 64, kernel_size=4, stride=2, padding=0),
            nn.ReLU(),
            nn.Flatten(),
        )

        # Compute shape by doing one forward pass
        with th.no_grad():
            n_flatten = self.cnn(
                th.as_tensor(observation_space.sample()[None]).float()
            ).shape[1]

        self.linear = nn.Sequential(nn.Linear(n_flatten, features_dim), nn.ReLU())

    def forward(self, observations: th.Tensor) -> th.Tensor:
        return self.linear(self.cnn(observations))

policy_kwargs = dict(
    features_extractor_class=CustomCNN,
    features_extractor_kwargs=dict(features_dim=128),
)
model = PPO("CnnPolicy", "BreakoutNoFrameskip-v4", policy_kwargs=policy_kwargs, verbose=1)
model.learn(1000)

assert isinstance(model.policy.features_extractor, CustomCNN)  # added for the test
