"""Registers the HER replay buffer with lit-sb3. Imports nothing heavy: discovery stays cheap."""

from lit_sb3_core.hookspecs import hookimpl


@hookimpl
def lit_sb3_register_buffers(registry):
    registry.add(
        "her",
        "lit_sb3_her.buffer:HerReplayBuffer",
        description="Hindsight Experience Replay: relabels goals for off-policy algorithms (Dict goal envs)",
    )
