-- flashtune database schema, version 6 (migration 6: applied after the earlier ones, in the
-- same transaction as any other pending migration; never edit it once shipped).
-- Workloads gain `extra`: the fields of the problem added from now on, together, as
-- "name=value" words in the order of db/db_workload_fields.h's DB_WORKLOAD_EXTRA_FIELDS, the
-- fields at 0 left out ('' when all are, as for every workload so far). It joins the workload's
-- key, so a field added to that list needs no migration of its own. The table is made again as
-- migration 5 made it (its rows aside, dropped, created anew, the rows back with their ids and
-- extra ''), the foreign keys deferred meanwhile and the triggers made again, unchanged.
PRAGMA defer_foreign_keys = ON;
DROP TRIGGER results_match_insert;
DROP TRIGGER results_match_update;
CREATE TEMP TABLE workloads_v5 AS SELECT * FROM workloads;
DROP TABLE workloads;
CREATE TABLE workloads (
    id            INTEGER PRIMARY KEY,
    op            TEXT NOT NULL CHECK (op IN ('fwd', 'bwd')),
    dtype         TEXT NOT NULL CHECK (dtype IN ('f32', 'f16', 'bf16', 'f64')),
    head_dim      INTEGER NOT NULL CHECK (head_dim > 0),
    head_dim_v    INTEGER NOT NULL CHECK (head_dim_v > 0),
    causal        INTEGER NOT NULL CHECK (causal IN (0, 1)),
    batch         INTEGER NOT NULL CHECK (batch > 0),
    heads         INTEGER NOT NULL CHECK (heads > 0),
    seqlen_q      INTEGER NOT NULL CHECK (seqlen_q > 0),
    seqlen_k      INTEGER NOT NULL CHECK (seqlen_k > 0),
    heads_k       INTEGER NOT NULL DEFAULT 0 CHECK (heads_k = 0 OR (heads_k < heads AND heads % heads_k = 0)),
    softcap       INTEGER NOT NULL DEFAULT 0 CHECK (softcap IN (0, 1)),
    window        INTEGER NOT NULL DEFAULT 0 CHECK (window IN (0, 1)),
    window_left   INTEGER NOT NULL DEFAULT 0 CHECK (window_left >= -1),
    window_right  INTEGER NOT NULL DEFAULT 0 CHECK (window_right >= -1),
    bottom_right  INTEGER NOT NULL DEFAULT 0 CHECK (bottom_right IN (0, 1)),
    varlen        INTEGER NOT NULL DEFAULT 0 CHECK (varlen BETWEEN 0 AND 8),
    extra         TEXT NOT NULL DEFAULT '' CHECK (length(extra) <= 512),
    CHECK (window = 1 OR (window_left = 0 AND window_right = 0)),
    UNIQUE (op, dtype, head_dim, head_dim_v, causal, batch, heads, seqlen_q, seqlen_k, heads_k, softcap, window,
            window_left, window_right, bottom_right, varlen, extra)
);
INSERT INTO workloads (id, op, dtype, head_dim, head_dim_v, causal, batch, heads, seqlen_q, seqlen_k, heads_k, softcap,
                       window, window_left, window_right, bottom_right, varlen)
SELECT id, op, dtype, head_dim, head_dim_v, causal, batch, heads, seqlen_q, seqlen_k, heads_k, softcap,
       window, window_left, window_right, bottom_right, varlen
FROM temp.workloads_v5;
DROP TABLE temp.workloads_v5;

CREATE TRIGGER results_match_insert BEFORE INSERT ON results
WHEN EXISTS (SELECT 1 FROM kernels WHERE id = NEW.kernel_id)
 AND EXISTS (SELECT 1 FROM workloads WHERE id = NEW.workload_id)
 AND (SELECT count(*) FROM kernel_params p, workloads w
      WHERE p.kernel_id = NEW.kernel_id AND w.id = NEW.workload_id
        AND p.value = CASE p.name
                WHEN 'DTYPE' THEN (CASE w.dtype WHEN 'f32' THEN 0 WHEN 'f16' THEN 1 WHEN 'bf16' THEN 2 ELSE 3 END)
                WHEN 'HEAD_DIM' THEN w.head_dim WHEN 'HEAD_DIM_V' THEN w.head_dim_v
                WHEN 'CAUSAL' THEN (w.causal OR w.window)
            END) <> 4
BEGIN
    SELECT RAISE(ABORT, 'kernel DTYPE, HEAD_DIM, HEAD_DIM_V or CAUSAL differs from the workload');
END;
CREATE TRIGGER results_match_update BEFORE UPDATE OF kernel_id, workload_id ON results
WHEN EXISTS (SELECT 1 FROM kernels WHERE id = NEW.kernel_id)
 AND EXISTS (SELECT 1 FROM workloads WHERE id = NEW.workload_id)
 AND (SELECT count(*) FROM kernel_params p, workloads w
      WHERE p.kernel_id = NEW.kernel_id AND w.id = NEW.workload_id
        AND p.value = CASE p.name
                WHEN 'DTYPE' THEN (CASE w.dtype WHEN 'f32' THEN 0 WHEN 'f16' THEN 1 WHEN 'bf16' THEN 2 ELSE 3 END)
                WHEN 'HEAD_DIM' THEN w.head_dim WHEN 'HEAD_DIM_V' THEN w.head_dim_v
                WHEN 'CAUSAL' THEN (w.causal OR w.window)
            END) <> 4
BEGIN
    SELECT RAISE(ABORT, 'kernel DTYPE, HEAD_DIM, HEAD_DIM_V or CAUSAL differs from the workload');
END;
