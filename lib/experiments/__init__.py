"""The papers' experiments, run live in fast mode and stored at full scale (see :mod:`.store`)."""
