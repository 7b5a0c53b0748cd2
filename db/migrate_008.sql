-- flashtune database schema, version 8 (migration 8: applied after the earlier ones, in the
-- same transaction as any other pending migration; never edit it once shipped).
-- Winners are declared, not only the fastest. Timing the same kernels twice moves their medians
-- by about 2 % (bench/RESULTS.md, the tuner's ground truth), so of kernels that close the fastest
-- is chance. A sweep (or `flashtune db declare`) writes, per device and workload, the kernel it
-- declares (db/db_declare.c): the stored winner while it stays within the interval of the
-- fastest (unless it spills registers and a tied kernel does not), else of the kernels that tie
-- with the fastest one that spills nothing where there is one, the one that ties at the most
-- other workloads of its kind, else the fastest. reason says which: 'fastest', 'kept' (the
-- stored winner, within the interval), 'spill_free' (the faster tied kernels spill registers),
-- 'holds' (it ties at the most neighbouring shapes), 'imported' (a winners file's line). behind: how far its median is behind the fastest's (0.012 = 1.2 %);
-- neighbours: at how many other workloads of its kind it ties with the fastest (NULL: not asked).
CREATE TABLE declared (
    device_id    INTEGER NOT NULL REFERENCES devices (id),
    workload_id  INTEGER NOT NULL REFERENCES workloads (id),
    kernel_id    INTEGER NOT NULL REFERENCES kernels (id),
    reason       TEXT NOT NULL CHECK (reason IN ('fastest', 'kept', 'holds', 'imported', 'spill_free')),
    behind       REAL CHECK (behind IS NULL OR behind >= 0),
    neighbours   INTEGER CHECK (neighbours IS NULL OR neighbours >= 0),
    declared_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
    PRIMARY KEY (device_id, workload_id)
);

-- Per (device, workload): the declared kernel's valid result; where none is declared (a
-- database of an older flashtune, a sweep cut short before it declared) or the declared kernel
-- has no valid result, the valid result with the smallest median, ties to the lowest kernel id
-- (the rule of the earlier versions). An 'invalid' result never wins, however fast.
DROP VIEW winners;
CREATE VIEW winners AS
SELECT r.device_id, r.workload_id, r.kernel_id, r.id AS result_id, r.sweep_id,
       r.median_ms, r.min_ms, r.tflops, r.rel_error
FROM results r
LEFT JOIN declared c ON c.device_id = r.device_id AND c.workload_id = r.workload_id
WHERE r.status = 'ok'
  AND (c.kernel_id = r.kernel_id
       OR ((c.kernel_id IS NULL
            OR NOT EXISTS (SELECT 1 FROM results x
                           WHERE x.device_id = c.device_id AND x.workload_id = c.workload_id
                             AND x.kernel_id = c.kernel_id AND x.status = 'ok'))
           AND NOT EXISTS (
               SELECT 1 FROM results b
               WHERE b.device_id = r.device_id AND b.workload_id = r.workload_id AND b.status = 'ok'
                 AND (b.median_ms < r.median_ms OR (b.median_ms = r.median_ms AND b.kernel_id < r.kernel_id)))));
