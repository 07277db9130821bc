"""``sb3_contrib.common.maskable``: action masking for MaskablePPO."""
