-- flashtune database schema, version 7 (migration 7: applied after the earlier ones, in the
-- same transaction as any other pending migration; never edit it once shipped).
-- Results gain the GPU's clocks while the candidate was timed, so that a time can be judged by
-- what it ran at: sm_clock_mhz, the least SM clock NVML reported as the timed runs were queued,
-- and clock_events, NVML's clock event reasons seen then (a bit set: 0x4 software power cap,
-- 0x8 hardware slowdown, 0x20 and 0x40 software and hardware thermal slowdown, 0x80 power brake;
-- the idle and application-clock bits left out; NULL where the GPU gives the clock but not the
-- reasons). Both NULL where nothing was sampled: results from before, imported ones, failed
-- candidates, a machine without NVML.
ALTER TABLE results ADD COLUMN sm_clock_mhz REAL CHECK (sm_clock_mhz IS NULL OR sm_clock_mhz > 0);
ALTER TABLE results ADD COLUMN clock_events INTEGER CHECK (clock_events IS NULL OR clock_events >= 0);
