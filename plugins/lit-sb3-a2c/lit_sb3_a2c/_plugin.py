"""Registers A2C with lit-sb3. Imports nothing heavy: discovery stays cheap."""

from lit_sb3_core.hookspecs import hookimpl


@hookimpl
def lit_sb3_register_algorithms(registry):
    registry.add(
        "a2c",
        "lit_sb3_a2c.a2c:A2C",
        description="Advantage Actor-Critic (synchronous A3C), on-policy",
    )


@hookimpl
def lit_sb3_register_optimizers(registry):
    target = "lit_sb3_a2c.rmsprop_tf_like:RMSpropTFLike"
    description = "RMSprop as TensorFlow computes it (epsilon inside the square root), for A2C on Atari"
    registry.add("rmsprop_tf_like", target, description=description)
    registry.add("rmsproptflike", target, description=description)
