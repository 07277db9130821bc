# sb3-contrib docs, guide/examples.md (TQC, QR-DQN, MaskablePPO, TRPO, ARS, CrossQ), with sb3_contrib
# renamed lit_sb3. Changed for the test: every total_timesteps cut to a few hundred (TRPO: n_steps 256).
from lit_sb3 import TQC

model = TQC("MlpPolicy", "Pendulum-v1", top_quantiles_to_drop_per_net=2, verbose=1)
model.learn(total_timesteps=300, log_interval=4)
model.save("tqc_pendulum")

from lit_sb3 import QRDQN

policy_kwargs = dict(n_quantiles=50)
model = QRDQN("MlpPolicy", "CartPole-v1", policy_kwargs=policy_kwargs, verbose=1)
model.learn(total_timesteps=300, log_interval=4)
model.save("qrdqn_cartpole")

from lit_sb3 import MaskablePPO
from lit_sb3.common.envs import InvalidActionEnvDiscrete

env = InvalidActionEnvDiscrete(dim=80, n_invalid_actions=60)
model = MaskablePPO("MlpPolicy", env, verbose=1, n_steps=256)
model.learn(512)
model.save("maskable_toy_env")

from lit_sb3 import TRPO

model = TRPO("MlpPolicy", "Pendulum-v1", gamma=0.9, verbose=1, n_steps=256)
model.learn(total_timesteps=512, log_interval=4)
model.save("trpo_pendulum")

from lit_sb3 import ARS

model = ARS("LinearPolicy", "Pendulum-v1", verbose=1)
model.learn(total_timesteps=2000, log_interval=4)
model.save("ars_pendulum")

from lit_sb3 import CrossQ

model = CrossQ(
    "MlpPolicy",
    "Pendulum-v1",
    verbose=1,
    policy_kwargs=dict(
        net_arch=dict(
            pi=[256, 256],
            qf=[1024, 1024],
        )
    ),
)
model.learn(total_timesteps=200, log_interval=4)
model.save("crossq_pendulum")
