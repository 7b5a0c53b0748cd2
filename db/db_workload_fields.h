/* The integer fields of a workload (db_workload after op and dtype) in one table. Their order is
 * the workloads table's columns' and the text's: from this list come the columns selected, the
 * statements' binds and reads, the find and insert statements, the text's parse and form, the
 * kind's text and the exact match of a stored workload. A new field of the problem is a member
 * of db_workload, a line in DB_WORKLOAD_EXTRA_FIELDS below (no migration: they share one column)
 * and its checks (db_workload_check); 0 must mean its absence.
 *
 * X(a, NAME, SHORT, REQUIRED, SHOWN): a is the caller's pass-through argument; SHORT is the
 * text's short name or NULL; REQUIRED, 1 when the text must give it; SHOWN, when the text shows
 * it: DB_SHOWN_ALWAYS (the shape), DB_SHOWN_IF_SET (not 0) or DB_SHOWN_WITH_WINDOW (when the
 * workload has a window, whatever its value). */
#ifndef FLASHTUNE_DB_WORKLOAD_FIELDS_H
#define FLASHTUNE_DB_WORKLOAD_FIELDS_H

enum { DB_SHOWN_ALWAYS, DB_SHOWN_IF_SET, DB_SHOWN_WITH_WINDOW };

#define DB_WORKLOAD_INT_FIELDS(X, a)                    \
    X(a, head_dim, "d", 1, DB_SHOWN_ALWAYS)             \
    X(a, head_dim_v, "dv", 0, DB_SHOWN_ALWAYS)          \
    X(a, causal, NULL, 0, DB_SHOWN_ALWAYS)              \
    X(a, batch, "b", 1, DB_SHOWN_ALWAYS)                \
    X(a, heads, "h", 1, DB_SHOWN_ALWAYS)                \
    X(a, seqlen_q, "sq", 1, DB_SHOWN_ALWAYS)            \
    X(a, seqlen_k, "sk", 1, DB_SHOWN_ALWAYS)            \
    X(a, heads_k, "hk", 0, DB_SHOWN_IF_SET)             \
    X(a, softcap, NULL, 0, DB_SHOWN_IF_SET)             \
    X(a, window, NULL, 0, DB_SHOWN_IF_SET)              \
    X(a, window_left, NULL, 0, DB_SHOWN_WITH_WINDOW)    \
    X(a, window_right, NULL, 0, DB_SHOWN_WITH_WINDOW)   \
    X(a, bottom_right, NULL, 0, DB_SHOWN_IF_SET)        \
    X(a, varlen, NULL, 0, DB_SHOWN_IF_SET)

/* The fields added since schema 6, stored together in the workloads table's `extra` column (part
 * of the key) as "name=value" words in this list's order, those at 0 left out ('' when all are):
 * so a new one needs no migration. The text, the kind and the exact match take them as the
 * columns' fields. A database naming one this build does not know is refused (a newer flashtune
 * wrote it). */
#define DB_WORKLOAD_EXTRA_FIELDS(X, a)                  \
    X(a, sinks, NULL, 0, DB_SHOWN_IF_SET)               \
    X(a, tf32, NULL, 0, DB_SHOWN_IF_SET)

/* Every field: the columns', then the extra ones. */
#define DB_WORKLOAD_FIELDS(X, a) DB_WORKLOAD_INT_FIELDS(X, a) DB_WORKLOAD_EXTRA_FIELDS(X, a)

/* Pieces of SQL text, one a field (string literals, joined by the compiler). */
#define DB_WORKLOAD_COLUMN_(t, name, ...) ", " t "." #name
#define DB_WORKLOAD_NAME_(a, name, ...) ", " #name
#define DB_WORKLOAD_PARAM_(a, name, ...) ", ?"
#define DB_WORKLOAD_EQUALS_(a, name, ...) " AND " #name " = ?"
#define DB_WORKLOAD_ONE_(a, name, ...) +1

/* The columns db_workload_read takes: op, dtype, the integer fields and extra. */
#define DB_WORKLOAD_COLUMN_COUNT (3 DB_WORKLOAD_INT_FIELDS(DB_WORKLOAD_ONE_, ))
/* "t.op, t.dtype, t.head_dim, ..., t.extra": every column of t, a workloads row, in the table's order. */
#define DB_WORKLOAD_COLUMNS(t) t ".op, " t ".dtype" DB_WORKLOAD_INT_FIELDS(DB_WORKLOAD_COLUMN_, t) ", " t ".extra"
/* "op, dtype, head_dim, ..." and "?1, ?2, ?, ...": an insert's columns and values; "op = ?1 AND
 * dtype = ?2 AND head_dim = ? ...": a row equal to one (SQLite numbers a bare ? after the largest
 * so far, so the binds go 1, 2, 3, ... in the table's order). */
#define DB_WORKLOAD_NAMES "op, dtype" DB_WORKLOAD_INT_FIELDS(DB_WORKLOAD_NAME_, ) ", extra"
#define DB_WORKLOAD_PARAMS "?1, ?2" DB_WORKLOAD_INT_FIELDS(DB_WORKLOAD_PARAM_, ) ", ?"
#define DB_WORKLOAD_MATCH "op = ?1 AND dtype = ?2" DB_WORKLOAD_INT_FIELDS(DB_WORKLOAD_EQUALS_, ) " AND extra = ?"

#endif
