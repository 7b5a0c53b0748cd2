/* The check db import runs through the generator (db_import_check.c, library ft_db_check). */
#ifndef FT_DB_IMPORT_CHECK_H
#define FT_DB_IMPORT_CHECK_H

#include "db_internal.h"

/* A db_import_check_fn. Refuses, naming the field and value: an arch the generator does not
 * compile for or that is not the compute capability's; a family not in the catalogue, of the
 * other direction than op, or not for that arch; workload sizes the space loader refuses
 * (gen_check_problem_sizes); parameters gen_validate refuses for that arch's shared memory;
 * EVEN_M/EVEN_N other than the lengths give; a source_hash other than the hash of gen_expand's
 * source. */
int db_import_check_generated(const db_device *dev, const db_workload *w, const db_kernel *k, char *why, size_t len);

#endif
