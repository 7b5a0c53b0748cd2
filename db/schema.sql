-- flashtune database schema, version 1 (migration 1: creates everything on an empty file).
-- Embedded into the library at build time (db/embed_sql.cmake); db_migrate.c applies it inside
-- one transaction and then sets PRAGMA user_version = 1 and PRAGMA application_id = "FTDB".
-- Later versions never edit this file: they add db/migrate_NNN.sql, applied in order.
-- Parameter columns keep the template parameters' names (BLOCK_M, NUM_STAGES...).
-- Timestamps are UTC, ISO 8601 ("2025-01-31T12:00:00Z").

-- One row per migration applied, for the record; PRAGMA user_version is authoritative.
CREATE TABLE schema_version (
    version     INTEGER PRIMARY KEY,
    applied_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
);

-- A GPU model as the tuner saw it. A new driver or NVRTC makes a new row: times may move.
CREATE TABLE devices (
    id              INTEGER PRIMARY KEY,
    name            TEXT NOT NULL,                  -- "NVIDIA H100 80GB HBM3"
    arch            TEXT NOT NULL,                  -- "sm_90"
    cc_major        INTEGER NOT NULL,
    cc_minor        INTEGER NOT NULL,
    sm_count        INTEGER NOT NULL CHECK (sm_count > 0),
    driver_version  TEXT NOT NULL,                  -- "13.0"
    nvrtc_version   TEXT NOT NULL,                  -- "13.0"
    UNIQUE (name, arch, driver_version, nvrtc_version)
);

-- One generated kernel: a family and its parameters; identified by the hash of its source, so a
-- template edit makes new kernels instead of mixing their times with the old ones.
CREATE TABLE kernels (
    id           INTEGER PRIMARY KEY,
    family       TEXT NOT NULL,                     -- "fwd_mma"
    source_hash  TEXT NOT NULL UNIQUE,              -- 16 hex digits (gen_source_hash)
    DTYPE        INTEGER NOT NULL CHECK (DTYPE BETWEEN 0 AND 3),   -- 0 f32, 1 f16, 2 bf16, 3 f64
    HEAD_DIM     INTEGER NOT NULL,
    HEAD_DIM_V   INTEGER NOT NULL,
    BLOCK_M      INTEGER NOT NULL,
    BLOCK_N      INTEGER NOT NULL,
    NUM_WARPS    INTEGER NOT NULL,
    NUM_STAGES   INTEGER NOT NULL,
    CAUSAL       INTEGER NOT NULL,
    CAUSAL_SKIP  INTEGER NOT NULL,
    EVEN_M       INTEGER NOT NULL,
    EVEN_N       INTEGER NOT NULL,
    DQ_MODE      INTEGER NOT NULL                   -- 0 atomic, 1 separate
);

-- The CUBIN cache: a rerun finds a compiled kernel by the hash of (source, options, arch, NVRTC).
CREATE TABLE binaries (
    id                 INTEGER PRIMARY KEY,
    kernel_id          INTEGER NOT NULL REFERENCES kernels (id),
    cache_key          TEXT NOT NULL UNIQUE,        -- 16 hex digits (gen_cache_key)
    arch               TEXT NOT NULL,
    nvrtc_version      TEXT NOT NULL,
    cubin              BLOB NOT NULL,
    registers          INTEGER,                     -- per thread, the largest over the functions
    spill_store_bytes  INTEGER,
    spill_load_bytes   INTEGER,
    stack_frame_bytes  INTEGER,
    static_smem_bytes  INTEGER,
    compile_seconds    REAL,
    created_at         TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
);
CREATE INDEX binaries_by_kernel ON binaries (kernel_id, arch, nvrtc_version);

-- A problem shape the tuner measured.
CREATE TABLE workloads (
    id          INTEGER PRIMARY KEY,
    op          TEXT NOT NULL CHECK (op IN ('fwd', 'bwd')),
    dtype       TEXT NOT NULL CHECK (dtype IN ('f32', 'f16', 'bf16', 'f64')),
    head_dim    INTEGER NOT NULL CHECK (head_dim > 0),
    head_dim_v  INTEGER NOT NULL CHECK (head_dim_v > 0),
    causal      INTEGER NOT NULL CHECK (causal IN (0, 1)),
    batch       INTEGER NOT NULL CHECK (batch > 0),
    heads       INTEGER NOT NULL CHECK (heads > 0),
    seqlen_q    INTEGER NOT NULL CHECK (seqlen_q > 0),
    seqlen_k    INTEGER NOT NULL CHECK (seqlen_k > 0),
    UNIQUE (op, dtype, head_dim, head_dim_v, causal, batch, heads, seqlen_q, seqlen_k)
);

-- One run of `flashtune tune` (or one `flashtune db import`: space_file "import:PATH").
CREATE TABLE sweeps (
    id           INTEGER PRIMARY KEY,
    space_file   TEXT NOT NULL,
    space_hash   TEXT NOT NULL,
    host         TEXT NOT NULL,
    started_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
    finished_at  TEXT                               -- NULL: interrupted or still running
);

-- One measured candidate. At most one row per (device, workload, kernel): a resumed sweep skips
-- what is here, a re-measurement replaces it. Times in milliseconds; spread is the unitless
-- (p90 - p10) / median of the repetitions; rel_error is ||x - ref|| / ||ref||.
CREATE TABLE results (
    id             INTEGER PRIMARY KEY,
    sweep_id       INTEGER NOT NULL REFERENCES sweeps (id),
    device_id      INTEGER NOT NULL REFERENCES devices (id),
    workload_id    INTEGER NOT NULL REFERENCES workloads (id),
    kernel_id      INTEGER NOT NULL REFERENCES kernels (id),
    binary_id      INTEGER REFERENCES binaries (id),  -- NULL: nothing was built, or imported
    status         TEXT NOT NULL CHECK (status IN ('ok', 'invalid', 'compile_error',
                                                   'launch_error', 'crashed', 'timeout', 'skipped')),
    median_ms      REAL,
    min_ms         REAL,
    spread         REAL,
    tflops         REAL,
    rel_error      REAL,
    max_abs_error  REAL,
    message        TEXT,                            -- why it failed, or NULL
    measured_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
    UNIQUE (device_id, workload_id, kernel_id),
    CHECK (status <> 'ok' OR median_ms > 0)         -- a valid result has a time
);
CREATE INDEX results_by_time ON results (device_id, workload_id, median_ms, kernel_id)
    WHERE status = 'ok';
CREATE INDEX results_by_kernel ON results (kernel_id);
CREATE INDEX results_by_sweep ON results (sweep_id);

-- A kernel is generated for one problem: its DTYPE, head dims and CAUSAL are the workload's.
CREATE TRIGGER results_match_insert BEFORE INSERT ON results
WHEN (SELECT k.DTYPE <> (CASE w.dtype WHEN 'f32' THEN 0 WHEN 'f16' THEN 1 WHEN 'bf16' THEN 2 ELSE 3 END)
             OR k.HEAD_DIM <> w.head_dim OR k.HEAD_DIM_V <> w.head_dim_v OR k.CAUSAL <> w.causal
      FROM kernels k, workloads w WHERE k.id = NEW.kernel_id AND w.id = NEW.workload_id)
BEGIN
    SELECT RAISE(ABORT, 'kernel DTYPE, HEAD_DIM, HEAD_DIM_V or CAUSAL differs from the workload');
END;
CREATE TRIGGER results_match_update BEFORE UPDATE OF kernel_id, workload_id ON results
WHEN (SELECT k.DTYPE <> (CASE w.dtype WHEN 'f32' THEN 0 WHEN 'f16' THEN 1 WHEN 'bf16' THEN 2 ELSE 3 END)
             OR k.HEAD_DIM <> w.head_dim OR k.HEAD_DIM_V <> w.head_dim_v OR k.CAUSAL <> w.causal
      FROM kernels k, workloads w WHERE k.id = NEW.kernel_id AND w.id = NEW.workload_id)
BEGIN
    SELECT RAISE(ABORT, 'kernel DTYPE, HEAD_DIM, HEAD_DIM_V or CAUSAL differs from the workload');
END;

-- Per (device, workload): the valid result with the smallest median; ties go to the lowest
-- kernel id, so the choice is stable. An 'invalid' result never wins, however fast.
CREATE VIEW winners AS
SELECT r.device_id, r.workload_id, r.kernel_id, r.id AS result_id, r.sweep_id,
       r.median_ms, r.min_ms, r.tflops, r.rel_error
FROM results r
WHERE r.status = 'ok'
  AND NOT EXISTS (
      SELECT 1 FROM results b
      WHERE b.device_id = r.device_id AND b.workload_id = r.workload_id AND b.status = 'ok'
        AND (b.median_ms < r.median_ms OR (b.median_ms = r.median_ms AND b.kernel_id < r.kernel_id)));
