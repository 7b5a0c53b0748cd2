-- flashtune database schema, version 3 (migration 3: applied after the earlier ones, in the
-- same transaction as any other pending migration; never edit it once shipped).
-- The CUBIN cache keeps what each CUBIN was compiled from beside it: arch and nvrtc_version
-- were there, compile_options and the kernel's full source are added. cache_key, a 64-bit
-- hash of the four, only finds the row; a lookup (db_binary_lookup) compares them all, so a
-- collision or a forged row cannot load another kernel. Rows stored before have NULL here:
-- no lookup uses them, and the next compile of their kernel replaces them in place.
ALTER TABLE binaries ADD COLUMN compile_options TEXT;
ALTER TABLE binaries ADD COLUMN source TEXT;
