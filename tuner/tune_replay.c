/* The replay of a strategy against a stored ground truth (tune_replay.h): the truth's CSV read
 * back, and an oracle that answers from it. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune_replay.h"

/* ---- reading the truth ---------------------------------------------------------------------- */

#define TRUTH_MAX_FIELDS 64
#define TRUTH_LINE 8192

/* Splits one CSV line (RFC 4180: quoted fields, "" for a quote inside) in place. Returns the
 * number of fields, or -1 when there are too many or a quote is left open. */
static int split_csv(char *line, char **field)
{
    int n = 0;
    char *r = line, *w = line;
    for (;;) {
        if (n == TRUTH_MAX_FIELDS)
            return -1;
        field[n++] = w;
        if (*r == '"') {
            r++;
            for (;;) {
                if (!*r)
                    return -1;
                if (*r == '"' && r[1] == '"')
                    *w++ = '"', r += 2;
                else if (*r == '"') {
                    r++;
                    break;
                } else
                    *w++ = *r++;
            }
        } else
            while (*r && *r != ',' && *r != '\n' && *r != '\r')
                *w++ = *r++;
        const char end = *r;
        *w++ = '\0';
        if (end != ',')
            return n;
        r++;
    }
}

static int column(char **names, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(names[i], name))
            return i;
    return -1;
}

/* Candidates in parameter order, so that an index says nothing of the truth (the export is
 * sorted by time). */
static int cmp_cand(const void *a, const void *b)
{
    const tune_truth_cand *x = a, *y = b;
    for (int p = 0; p < GEN_PARAM_COUNT; p++)
        if (x->config.p[p] != y->config.p[p])
            return x->config.p[p] < y->config.p[p] ? -1 : 1;
    return 0;
}

static tune_truth_workload *workload_for(tune_truth *t, const char *key)
{
    for (int i = 0; i < t->count; i++)
        if (!strcmp(t->workloads[i].key, key))
            return &t->workloads[i];
    tune_truth_workload *grown = realloc(t->workloads, (size_t)(t->count + 1) * sizeof *grown);
    if (!grown)
        return NULL;
    t->workloads = grown;
    tune_truth_workload *w = &t->workloads[t->count++];
    memset(w, 0, sizeof *w);
    snprintf(w->key, sizeof w->key, "%s", key);
    return w;
}

static int add_cand(tune_truth_workload *w, const tune_truth_cand *c)
{
    if ((w->count & (w->count - 1)) == 0) {   /* grown at powers of two */
        tune_truth_cand *grown = realloc(w->cands, (size_t)(w->count ? 2 * w->count : 64) * sizeof *grown);
        if (!grown)
            return -1;
        w->cands = grown;
    }
    w->cands[w->count++] = *c;
    return 0;
}

/* One data line into its workload. 0, or -1 with the reason in why. */
static int read_row(tune_truth *t, char **head, int nh, char **f, int nf, char *why, size_t len)
{
    if (nf != nh)
        return snprintf(why, len, "%d fields, the heading has %d", nf, nh), -1;
    static const char *const key_cols[] = { "op", "dtype", "head_dim", "causal", "batch", "heads", "seqlen" };
    int k[7];
    for (int i = 0; i < 7; i++)
        if ((k[i] = column(head, nh, key_cols[i])) < 0)
            return snprintf(why, len, "no column '%s'", key_cols[i]), -1;
    const int fam = column(head, nh, "family"), st = column(head, nh, "status"), med = column(head, nh, "median_ms");
    if (fam < 0 || st < 0 || med < 0)
        return snprintf(why, len, "no column 'family', 'status' or 'median_ms'"), -1;
    tune_truth_cand c = { .median_ms = NAN };
    const gen_family *family = gen_family_find(f[fam]);
    if (!family)
        return snprintf(why, len, "family '%.60s' is not in this build", f[fam]), -1;
    gen_config_init(&c.config, family);
    char key[sizeof ((tune_truth_workload *)0)->key];
    int at = snprintf(key, sizeof key, "%s %s d=%s causal=%s b=%s h=%s s=%s", f[k[0]], f[k[1]], f[k[2]], f[k[3]],
                      f[k[4]], f[k[5]], f[k[6]]);
    /* Decode shapes and grouped heads (optional columns): the key length, the K/V heads, the
     * diagonal's corner, where a file has them. */
    static const char *const decode_cols[][2] = { { "seqlen_k", "sk" }, { "heads_k", "hk" }, { "bottom_right", "br" } };
    for (int i = 0; i < 3; i++) {
        const int col = column(head, nh, decode_cols[i][0]);
        if (col >= 0 && !f[col][0])
            return snprintf(why, len, "%s is empty", decode_cols[i][0]), -1;
        if (col >= 0 && at >= 0 && at < (int)sizeof key)
            at += snprintf(key + at, sizeof key - at, " %s=%s", decode_cols[i][1], f[col]);
    }
    if (at < 0 || at >= (int)sizeof key)
        return snprintf(why, len, "a workload's fields longer than %zu bytes", sizeof key - 1), -1;
    const char *problem[][2] = { { "DTYPE", f[k[1]] }, { "HEAD_DIM", f[k[2]] }, { "HEAD_DIM_V", f[k[2]] },
                                 { "CAUSAL", f[k[3]] } };
    for (int i = 0; i < 4; i++)
        if (gen_param_parse(gen_param_lookup(problem[i][0]), problem[i][1], &c.config.p[gen_param_lookup(problem[i][0])],
                            why, len) != 0)
            return -1;
    for (int i = 0; i < nh; i++) {
        const int p = gen_param_lookup(head[i]);
        if (p < 0 || strcmp(head[i], gen_param_name((gen_param)p)) != 0 || !f[i][0])
            continue;   /* not a parameter (the lower-case columns), or not the family's */
        if (gen_param_parse((gen_param)p, f[i], &c.config.p[p], why, len) != 0)
            return -1;
    }
    if (!strcmp(f[st], "ok")) {
        char *end;
        errno = 0;
        c.median_ms = strtod(f[med], &end);
        if (errno || *end || !(c.median_ms > 0))
            return snprintf(why, len, "median_ms '%.40s' is not a time", f[med]), -1;
    }
    tune_truth_workload *w = workload_for(t, key);
    if (!w || add_cand(w, &c) != 0)
        return snprintf(why, len, "out of memory"), -1;
    return 0;
}

int tune_truth_load(const char *path, tune_truth **out, char *err, size_t len)
{
    *out = NULL;
    FILE *fp = fopen(path, "r");
    if (!fp)
        return snprintf(err, len, "%s: %s", path, strerror(errno)), -1;
    tune_truth *t = calloc(1, sizeof *t);
    char *heading = malloc(TRUTH_LINE), *line = malloc(TRUTH_LINE);
    char *head[TRUTH_MAX_FIELDS], *f[TRUTH_MAX_FIELDS], why[256] = "";
    int nh = -1, lineno = 0, rc = 0;
    if (!t || !heading || !line) {
        snprintf(why, sizeof why, "out of memory");
        rc = -1;
    }
    while (rc == 0 && fgets(line, TRUTH_LINE, fp)) {
        lineno++;
        if (!strchr(line, '\n') && !feof(fp)) {
            snprintf(why, sizeof why, "a line longer than %d bytes", TRUTH_LINE - 1);
            rc = -1;
        } else if (line[strspn(line, "\r\n")] == '\0') {
            continue;   /* a blank line (a file's last, as editors leave it) */
        } else if (nh < 0) {
            memcpy(heading, line, TRUTH_LINE);
            if ((nh = split_csv(heading, head)) < 0) {
                snprintf(why, sizeof why, "the heading is not CSV");
                rc = -1;
            }
        } else {
            const int nf = split_csv(line, f);
            if (nf < 0) {
                snprintf(why, sizeof why, "not CSV (an open quote, or over %d fields)", TRUTH_MAX_FIELDS);
                rc = -1;
            } else
                rc = read_row(t, head, nh, f, nf, why, sizeof why);
        }
    }
    if (rc == 0 && ferror(fp)) {
        snprintf(why, sizeof why, "%s", strerror(errno));
        rc = -1;
    }
    if (rc == 0 && (!t->count)) {
        snprintf(why, sizeof why, "no results");
        rc = -1;
    }
    fclose(fp);
    free(heading);
    free(line);
    if (rc != 0) {
        snprintf(err, len, "%s:%d: %s", path, lineno, why);
        tune_truth_free(t);
        return -1;
    }
    for (int i = 0; i < t->count; i++) {
        tune_truth_workload *w = &t->workloads[i];
        qsort(w->cands, (size_t)w->count, sizeof *w->cands, cmp_cand);
        w->best_ms = INFINITY;
        for (int c = 0; c < w->count; c++)
            if (w->cands[c].median_ms < w->best_ms)
                w->best_ms = w->cands[c].median_ms;
    }
    *out = t;
    return 0;
}

void tune_truth_free(tune_truth *t)
{
    if (!t)
        return;
    for (int i = 0; i < t->count; i++)
        free(t->workloads[i].cands);
    free(t->workloads);
    free(t);
}

void tune_replay_known_from_others(const tune_truth *t, int w, unsigned char *known)
{
    const tune_truth_workload *me = &t->workloads[w];
    memset(known, 0, (size_t)me->count);
    const gen_param_set tunable = gen_param_mask(GEN_ROLE_TUNABLE);
    for (int o = 0; o < t->count; o++) {
        const tune_truth_workload *other = &t->workloads[o];
        if (o == w)
            continue;
        const tune_truth_cand *best = NULL;
        for (int c = 0; c < other->count; c++)
            if (other->cands[c].median_ms == other->best_ms)
                best = &other->cands[c];
        for (int c = 0; best && c < me->count; c++) {
            int same = me->cands[c].config.family == best->config.family;
            for (int p = 0; p < GEN_PARAM_COUNT && same; p++)
                same = !((tunable >> p) & 1u) || me->cands[c].config.p[p] == best->config.p[p];
            known[c] |= (unsigned char)same;
        }
    }
}

/* ---- the replay's oracle --------------------------------------------------------------------- */

const tune_replay_model tune_replay_h200 = { .noise_full = 0.025, .noise_first = 0.03, .overhead_s = 0.005 };

typedef struct replay {
    const tune_truth_workload *w;
    const tune_bench *full;
    const tune_replay_model *m;
    unsigned long long state;
    double spent;
    int timings;
    int steps;                  /* calls of the oracle so far */
    tune_record *stored;        /* per candidate: the last stored record (id -2: none) */
} replay;

static double uniform(unsigned long long *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return ((*s * 0x2545F4914F6CDD1DULL) >> 11) * 0x1p-53;
}

/* A standard normal deviate (Box-Muller). */
static double normal(unsigned long long *s)
{
    const double u = uniform(s), v = uniform(s);
    return sqrt(-2 * log(u > 0 ? u : 0x1p-53)) * cos(6.283185307179586 * v);
}

static int replay_store(void *ctx, int c, const tune_record *r)
{
    ((replay *)ctx)->stored[c] = *r;
    return TUNE_PHASE_OK;
}

static int replay_time(void *ctx, const int *cands, int n, const tune_bench *bench, int store_ok, tune_record *out,
                       const char *pass)
{
    replay *rp = ctx;
    (void)pass;
    const double sigma = bench == rp->full ? rp->m->noise_full : rp->m->noise_first;
    rp->spent += rp->steps++ ? rp->m->step_s : rp->m->start_s;
    for (int i = 0; i < n; i++) {
        const tune_truth_cand *c = &rp->w->cands[cands[i]];
        tune_record *r = &out[i];
        tune_record_init(r, i);
        rp->spent += (bench->warmup_ms + bench->rep_ms) / 1000 + rp->m->overhead_s;
        rp->timings++;
        if (isnan(c->median_ms)) {
            r->status = DB_STATUS_INVALID;
            snprintf(r->message, sizeof r->message, "failed in the truth");
        } else {
            const double noise = 1 + sigma * normal(&rp->state);
            r->median_ms = r->min_ms = c->median_ms * (noise > 0.5 ? noise : 0.5);
            r->spread = 0;
        }
        if (store_ok || r->status != DB_STATUS_OK)
            replay_store(ctx, cands[i], r);
    }
    return TUNE_PHASE_OK;
}

static double replay_spent(void *ctx)
{
    return ((replay *)ctx)->spent;
}

int tune_replay_run(const tune_truth_workload *w, const tune_strategy *st, const tune_bench *bench,
                    const tune_confirm *cf, const tune_replay_model *m, const unsigned char *known,
                    unsigned long long seed, tune_replay_outcome *out)
{
    memset(out, 0, sizeof *out);
    tune_strategy_cand *cands = calloc((size_t)(w->count ? w->count : 1), sizeof *cands);
    int *pending = malloc((size_t)(w->count ? w->count : 1) * sizeof *pending);
    replay rp = { .w = w, .full = bench, .m = m, .state = seed * 0x9E3779B97F4A7C15ULL + 0x632BE59BD9B4E019ULL };
    rp.stored = malloc((size_t)(w->count ? w->count : 1) * sizeof *rp.stored);
    if (!cands || !pending || !rp.stored) {
        free(cands), free(pending), free(rp.stored);
        return -1;
    }
    /* Known winners first, as the sweep's plan orders them. */
    int k = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int c = 0; c < w->count; c++)
            if ((known && known[c]) == !pass)
                pending[k++] = c;
    for (int c = 0; c < w->count; c++) {
        cands[c] = (tune_strategy_cand){ .config = &w->cands[c].config, .known = known ? known[c] : 0 };
        tune_record_init(&rp.stored[c], -2);
    }
    tune_strategy strategy = *st;
    strategy.seed = st->seed ^ seed;   /* a strategy's own draws differ from seed to seed too */
    const tune_strategy_task task = { .strategy = &strategy, .bench = bench, .confirm = cf, .cands = cands,
                                      .pending = pending, .pending_count = w->count, .budget_s = st->budget_s };
    const tune_oracle o = { .time = replay_time, .store = replay_store, .spent = replay_spent, .width = m->width,
                            .ctx = &rp };
    int rc = tune_strategy_measure(&task, &o) == TUNE_PHASE_OK ? 0 : -1;
    /* What the sweep would ship: the fastest stored ok result, by its measured (noisy) median. */
    int pick = -1;
    for (int c = 0; c < w->count; c++)
        if (rp.stored[c].id != -2 && rp.stored[c].status == DB_STATUS_OK &&
            (pick < 0 || rp.stored[c].median_ms < rp.stored[pick].median_ms))
            pick = c;
    if (pick < 0)
        rc = -1;
    else {
        out->picked_ms = w->cands[pick].median_ms;
        out->quality = w->best_ms / out->picked_ms;
        out->cost_s = rp.spent;
        out->timings = rp.timings;
    }
    free(cands), free(pending), free(rp.stored);
    return rc;
}

/* ---- scores ------------------------------------------------------------------------------- */

void tune_replay_score_init(tune_replay_score *score)
{
    memset(score, 0, sizeof *score);
    score->worst = 1;
}

int tune_replay_score_workload(const tune_truth *t, int w, const tune_replay_setup *setup,
                               tune_replay_score *score)
{
    const tune_truth_workload *wl = &t->workloads[w];
    if (!isfinite(wl->best_ms))
        return 0;
    unsigned char *known = calloc((size_t)(wl->count ? wl->count : 1), 1);
    if (!known)
        return -1;
    if (setup->seeded)
        tune_replay_known_from_others(t, w, known);
    const tune_strategy exhaustive = { .kind = TUNE_EXHAUSTIVE };
    int rc = 0;
    for (int s = 1; s <= setup->seeds && rc == 0; s++) {
        tune_replay_outcome ex, o;
        if (tune_replay_run(wl, &exhaustive, setup->bench, setup->confirm, setup->model, NULL, (unsigned long long)s,
                            &ex) != 0) {
            rc = -1;
            break;
        }
        tune_strategy st = *setup->strategy;
        if (setup->budget > 0)   /* else the strategy's own budget_s, in seconds (or none) */
            st.budget_s = setup->budget * ex.cost_s;
        if (tune_replay_run(wl, &st, setup->bench, setup->confirm, setup->model, known, (unsigned long long)s, &o) !=
            0) {
            score->failed++;
            continue;
        }
        score->runs++;
        score->within_2pc += o.quality >= 0.98;
        score->quality_sum += o.quality;
        score->worst = o.quality < score->worst ? o.quality : score->worst;
        score->cost_sum += o.cost_s / ex.cost_s;
        score->timings_sum += o.timings;
    }
    free(known);
    return rc;
}
