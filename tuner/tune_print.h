/* The CLI's tables over a database: `flashtune results` (the workloads, or one workload's
 * candidates, sortable) and `flashtune best` (the winners), as aligned text or, for --format,
 * CSV or JSON (tune_table.h). db/ reads the rows; this prints them. Errors: -1 with a message in
 * err naming the function, as db/ does; output the stream refused is an error too ("writing the
 * output failed: REASON"), and printing stops there. */
#ifndef FT_TUNE_PRINT_H
#define FT_TUNE_PRINT_H

#include <stddef.h>
#include <stdio.h>

#include "db_internal.h"
#include "tune_table.h"

/* For each device with results for workload w: a heading, then one aligned row per candidate:
 * kernel id, family, the parameters the workload does not state (those no family of w's op uses
 * left out), status, times, TFLOP/s, errors, resources, the message's first 60 characters; the
 * winner is marked '*'. sort as db_results_list takes it. Unknown column or workload: -1.
 * CSV and JSON: one row per candidate with the device's name and arch as columns, winner as a
 * flag, the whole message, and figures to 10 significant digits. */
int tune_print_results_as(db *d, const db_workload *w, const char *sort, tune_format f, FILE *out, char *err,
                          size_t len);
/* One aligned row per winner: device, workload, family, the tunables ('-' where no family of
 * the op uses one), time, TFLOP/s, how many candidates were ok out of all measured, and why it
 * is the winner ("kept +1.2%": db_declare_winners' reason and how far behind the fastest; '-'
 * none declared). CSV and JSON: ok and total apart, declared and behind apart (a fraction); a
 * tunable the op does not use is empty or null. */
int tune_print_best_as(db *d, tune_format f, FILE *out, char *err, size_t len);
/* One row per workload: id, its fields, results ok/total, best time. */
int tune_print_workloads_as(db *d, tune_format f, FILE *out, char *err, size_t len);

/* "N workloads (a tie: within M % of the fastest, or the spreads): F the fastest, K the stored
 * winner kept, S a tied kernel without spills, H the tied kernel that holds at neighbouring
 * shapes", then "; U stored winners without a valid timing here, replaced" where there were any (what
 * db_declare_winners did), after prefix, ending the line. */
void tune_print_declare_counts(FILE *out, const char *prefix, const db_declare_counts *c, double margin);

/* The same as text. */
int tune_print_results(db *d, const db_workload *w, const char *sort, FILE *out, char *err, size_t len);
int tune_print_best(db *d, FILE *out, char *err, size_t len);
int tune_print_workloads(db *d, FILE *out, char *err, size_t len);

#endif
