-- flashtune database schema, version 4 (migration 4: applied after the earlier ones, in the
-- same transaction as any other pending migration; never edit it once shipped).
-- Workloads gain the problem features a kernel is tuned for: heads_k, the key/value heads of
-- grouped-query attention (0: as many as heads, no grouping; else fewer, dividing heads), and
-- softcap (1: scores capped, c tanh(S / c), its kernels compiled with SOFTCAP 1; the value of c
-- does not change a kernel's speed). Both join the workload's key, so the table is made again:
-- its rows saved aside, the table dropped and created anew under its own name (results keep
-- referring to it), the rows put back with both 0 and their ids. The foreign keys are deferred
-- meanwhile: dropping the table leaves the results without their workloads until the rows are
-- back, which resolves it before the commit. The triggers that read workloads are made again as
-- migration 2 made them.
PRAGMA defer_foreign_keys = ON;
DROP TRIGGER results_match_insert;
DROP TRIGGER results_match_update;
CREATE TEMP TABLE workloads_v3 AS SELECT * FROM workloads;
DROP TABLE workloads;
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
    heads_k     INTEGER NOT NULL DEFAULT 0 CHECK (heads_k = 0 OR (heads_k < heads AND heads % heads_k = 0)),
    softcap     INTEGER NOT NULL DEFAULT 0 CHECK (softcap IN (0, 1)),
    UNIQUE (op, dtype, head_dim, head_dim_v, causal, batch, heads, seqlen_q, seqlen_k, heads_k, softcap)
);
INSERT INTO workloads (id, op, dtype, head_dim, head_dim_v, causal, batch, heads, seqlen_q, seqlen_k)
SELECT id, op, dtype, head_dim, head_dim_v, causal, batch, heads, seqlen_q, seqlen_k FROM temp.workloads_v3;
DROP TABLE temp.workloads_v3;

CREATE TRIGGER results_match_insert BEFORE INSERT ON results
WHEN EXISTS (SELECT 1 FROM kernels WHERE id = NEW.kernel_id)
 AND EXISTS (SELECT 1 FROM workloads WHERE id = NEW.workload_id)
 AND (SELECT count(*) FROM kernel_params p, workloads w
      WHERE p.kernel_id = NEW.kernel_id AND w.id = NEW.workload_id
        AND p.value = CASE p.name
                WHEN 'DTYPE' THEN (CASE w.dtype WHEN 'f32' THEN 0 WHEN 'f16' THEN 1 WHEN 'bf16' THEN 2 ELSE 3 END)
                WHEN 'HEAD_DIM' THEN w.head_dim WHEN 'HEAD_DIM_V' THEN w.head_dim_v WHEN 'CAUSAL' THEN w.causal
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
                WHEN 'HEAD_DIM' THEN w.head_dim WHEN 'HEAD_DIM_V' THEN w.head_dim_v WHEN 'CAUSAL' THEN w.causal
            END) <> 4
BEGIN
    SELECT RAISE(ABORT, 'kernel DTYPE, HEAD_DIM, HEAD_DIM_V or CAUSAL differs from the workload');
END;
