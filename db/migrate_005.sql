-- flashtune database schema, version 5 (migration 5: applied after the earlier ones, in the
-- same transaction as any other pending migration; never edit it once shipped).
-- Workloads gain the mask's kind and the variable-length batch, which a kernel is tuned for:
-- window (1: a local window, window_left / window_right keys visible left / right of the
-- diagonal, -1 no limit on that side; 0: none, both sides 0), bottom_right (1: the diagonal ends
-- at the last query and key), and varlen (0: a dense batch; 1..8: a variable-length batch whose
-- tokens fill that many eighths of batch x the longest lengths). causal keeps its meaning, keys
-- right of the diagonal hidden; every mask, windowed or causal, runs the kernels with CAUSAL 1
-- (the band is a launch argument). The five join the workload's key, so the table is made again
-- as migration 4 made it: its rows saved aside, the table dropped and created anew under its own
-- name, the rows put back with all five 0 (a dense problem without a window, as they were) and
-- their ids. The foreign keys are deferred meanwhile. The triggers that tie a kernel to its
-- workload are made again, a kernel's CAUSAL now compared with (causal OR window).
PRAGMA defer_foreign_keys = ON;
DROP TRIGGER results_match_insert;
DROP TRIGGER results_match_update;
CREATE TEMP TABLE workloads_v4 AS SELECT * FROM workloads;
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
    CHECK (window = 1 OR (window_left = 0 AND window_right = 0)),
    UNIQUE (op, dtype, head_dim, head_dim_v, causal, batch, heads, seqlen_q, seqlen_k, heads_k, softcap, window,
            window_left, window_right, bottom_right, varlen)
);
INSERT INTO workloads (id, op, dtype, head_dim, head_dim_v, causal, batch, heads, seqlen_q, seqlen_k, heads_k, softcap)
SELECT id, op, dtype, head_dim, head_dim_v, causal, batch, heads, seqlen_q, seqlen_k, heads_k, softcap
FROM temp.workloads_v4;
DROP TABLE temp.workloads_v4;

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
