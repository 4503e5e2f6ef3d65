"""Constants shared by lib modules that must stay cheap to import (no torch, no pandas)."""

#: Prefix of the glue keys under which lib.claims.record stores a check.
CLAIM_PREFIX = "claim-"
