"""``sb3_contrib.common.recurrent``: RecurrentPPO's policies."""
