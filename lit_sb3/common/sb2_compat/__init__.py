"""SB3's ``common.sb2_compat``."""
