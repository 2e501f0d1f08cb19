-- Shared rate-limit counters are written on every request and worth nothing after a crash
-- (losing them resets the current windows), so they skip the WAL.
ALTER TABLE "rate_limit_windows" SET UNLOGGED;
