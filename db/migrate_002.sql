-- flashtune database schema, version 2 (migration 2: applied after schema.sql, in the same
-- transaction as any other pending migration; never edit it once shipped).
-- Kernel parameters become rows of kernel_params (kernel_id, name, value), so a new template
-- parameter (a row of generator/gen_param_table.h) needs no schema change. Every value of the
-- twelve version-1 columns is copied, then the columns are dropped (SQLite 3.35 or newer). A
-- name is the template macro's ("BLOCK_M"); a row missing for a parameter reads as the
-- parameter table's default (db_internal.h says how unknown names are treated).

CREATE TABLE kernel_params (
    kernel_id  INTEGER NOT NULL REFERENCES kernels (id),
    name       TEXT NOT NULL CHECK (name <> ''),
    value      INTEGER NOT NULL,
    PRIMARY KEY (kernel_id, name)
) WITHOUT ROWID;

INSERT INTO kernel_params (kernel_id, name, value)
          SELECT id, 'DTYPE', DTYPE FROM kernels
UNION ALL SELECT id, 'HEAD_DIM', HEAD_DIM FROM kernels
UNION ALL SELECT id, 'HEAD_DIM_V', HEAD_DIM_V FROM kernels
UNION ALL SELECT id, 'BLOCK_M', BLOCK_M FROM kernels
UNION ALL SELECT id, 'BLOCK_N', BLOCK_N FROM kernels
UNION ALL SELECT id, 'NUM_WARPS', NUM_WARPS FROM kernels
UNION ALL SELECT id, 'NUM_STAGES', NUM_STAGES FROM kernels
UNION ALL SELECT id, 'CAUSAL', CAUSAL FROM kernels
UNION ALL SELECT id, 'CAUSAL_SKIP', CAUSAL_SKIP FROM kernels
UNION ALL SELECT id, 'EVEN_M', EVEN_M FROM kernels
UNION ALL SELECT id, 'EVEN_N', EVEN_N FROM kernels
UNION ALL SELECT id, 'DQ_MODE', DQ_MODE FROM kernels;

-- The triggers read the columns: replaced below by ones that read kernel_params.
DROP TRIGGER results_match_insert;
DROP TRIGGER results_match_update;

ALTER TABLE kernels DROP COLUMN DTYPE;
ALTER TABLE kernels DROP COLUMN HEAD_DIM;
ALTER TABLE kernels DROP COLUMN HEAD_DIM_V;
ALTER TABLE kernels DROP COLUMN BLOCK_M;
ALTER TABLE kernels DROP COLUMN BLOCK_N;
ALTER TABLE kernels DROP COLUMN NUM_WARPS;
ALTER TABLE kernels DROP COLUMN NUM_STAGES;
ALTER TABLE kernels DROP COLUMN CAUSAL;
ALTER TABLE kernels DROP COLUMN CAUSAL_SKIP;
ALTER TABLE kernels DROP COLUMN EVEN_M;
ALTER TABLE kernels DROP COLUMN EVEN_N;
ALTER TABLE kernels DROP COLUMN DQ_MODE;

-- A kernel is generated for one problem: its DTYPE, HEAD_DIM, HEAD_DIM_V and CAUSAL are the
-- workload's. All four must be stored and equal (a missing kernel or workload is left to the
-- foreign keys, as in version 1).
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
