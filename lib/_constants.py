"""Constants shared by lib modules that must stay cheap to import (no torch, no pandas)."""

#: Prefix of the glue keys under which lib.book.checks.record stores a check (its record).
CHECK_PREFIX = "check-"
