"""Registers RecurrentPPO with lit-sb3. Imports nothing heavy: discovery stays cheap."""

from lit_sb3_core.hookspecs import hookimpl


@hookimpl
def lit_sb3_register_algorithms(registry):
    registry.add(
        "recurrent_ppo",
        "lit_sb3_ppo_recurrent.ppo_recurrent:RecurrentPPO",
        description="PPO with LSTM policies (memory for partially observed tasks), on-policy",
        aliases=("ppo_lstm",),
    )
