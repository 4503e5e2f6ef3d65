"""Constants shared by lib modules that must stay cheap to import (no torch, no pandas)."""

#: Prefix of the glue keys under which lib.book.checks.record stores a check (its record).
CHECK_PREFIX = "check-"

#: Target value of the positions that count neither in the loss nor in the accuracy (padding), as
#: torch's cross-entropy ignores them; the training loops (lib.training) and the stacked models
#: (lib.batched) share it.
IGNORE = -100
