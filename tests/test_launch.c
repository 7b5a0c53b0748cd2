/* The launch module on the CPU: entry shapes, each family's steps in order for DQ_MODE 0 and 1,
 * the shared-memory opt-in at module load, the workspace layout, the argument blocks filled
 * from a problem, the utilities, and batch splitting (grid.y <= 65535, every batch once, the
 * right pointers), all through a fake driver table that records instead of launching. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "ln_internal.h"
#include "traits/ft_traits.h"

#define ARRAY_LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* ---- the fake driver ---------------------------------------------------------------------- */

#define MAX_CALLS 64
#define FAKE_MODULE ((CUmodule)0x1000)

typedef struct call {
    char what[16];              /* "launch", "memset", "attr", "getfn", "load", "unload" */
    char name[64];              /* getfn: the entry; launch and attr: the function's entry */
    unsigned gx, gy, gz, bx, by, bz, smem;
    CUstream stream;
    size_t bytes;               /* memset: count; attr: the value */
    CUdeviceptr ptr;            /* memset: dst */
    int backward;               /* launch: which block was copied */
    ft_fwd_args fwd;
    ft_bwd_args bwd;
    unsigned char raw[64];      /* utility launches: their parameters, packed */
} call;

static call calls[MAX_CALLS];
static int ncalls, overflow;
static int block_is_backward;   /* the argument block the next launches take */
static const char *fail_getfn;  /* entry whose lookup fails */
static CUresult fail_attr, fail_launch_at_call = CUDA_SUCCESS;
static int fail_launch_index = -1;

/* Functions are names: the fake hands out pointers to interned entry names. */
static char names[32][64];
static int nnames;

static CUfunction fn_of(const char *name)
{
    for (int i = 0; i < nnames; i++)
        if (!strcmp(names[i], name))
            return (CUfunction)names[i];
    snprintf(names[nnames], sizeof names[nnames], "%s", name);
    return (CUfunction)names[nnames++];
}

static call *record(const char *what)
{
    if (ncalls == MAX_CALLS) {
        overflow = 1;
        return &calls[MAX_CALLS - 1];
    }
    call *c = &calls[ncalls++];
    memset(c, 0, sizeof *c);
    snprintf(c->what, sizeof c->what, "%s", what);
    return c;
}

static CUresult fake_load(CUmodule *m, const void *image)
{
    (void)image;
    record("load");
    *m = FAKE_MODULE;
    return CUDA_SUCCESS;
}

static CUresult fake_unload(CUmodule m)
{
    (void)m;
    record("unload");
    return CUDA_SUCCESS;
}

static CUresult fake_getfn(CUfunction *fn, CUmodule m, const char *name)
{
    call *c = record("getfn");
    snprintf(c->name, sizeof c->name, "%s", name);
    if (m != FAKE_MODULE || (fail_getfn && !strcmp(name, fail_getfn)))
        return CUDA_ERROR_NOT_FOUND;
    *fn = fn_of(name);
    return CUDA_SUCCESS;
}

static CUresult fake_attr(CUfunction fn, CUfunction_attribute attrib, int value)
{
    call *c = record("attr");
    snprintf(c->name, sizeof c->name, "%s", (const char *)fn);
    c->bytes = attrib == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES ? (size_t)value : 0;
    return fail_attr;
}

static CUresult fake_launch(CUfunction fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                            unsigned bz, unsigned smem, CUstream stream, void **params, void **extra)
{
    (void)extra;
    const int index = ncalls;
    call *c = record("launch");
    snprintf(c->name, sizeof c->name, "%s", (const char *)fn);
    c->gx = gx, c->gy = gy, c->gz = gz, c->bx = bx, c->by = by, c->bz = bz, c->smem = smem, c->stream = stream;
    c->backward = block_is_backward;
    if (block_is_backward == 1)
        memcpy(&c->bwd, params[0], sizeof c->bwd);
    else if (block_is_backward == 0)
        memcpy(&c->fwd, params[0], sizeof c->fwd);
    return index == fail_launch_index ? fail_launch_at_call : CUDA_SUCCESS;
}

static CUresult fake_memset(CUdeviceptr dst, unsigned char value, size_t count, CUstream stream)
{
    call *c = record("memset");
    c->ptr = dst;
    c->bytes = value == 0 ? count : (size_t)-1;
    c->stream = stream;
    return CUDA_SUCCESS;
}

/* The copy engine's maps: what a stand-in cuTensorMapEncodeTiled was asked, per call. */
#define RECORDED_MAPS 6
static struct {
    int calls, fail;
    CUtensorMapDataType type[RECORDED_MAPS];
    cuuint32_t rank[RECORDED_MAPS];
    uintptr_t address[RECORDED_MAPS];
    cuuint64_t dims[RECORDED_MAPS][4], strides[RECORDED_MAPS][3];
    cuuint32_t box[RECORDED_MAPS][4];
    CUtensorMapSwizzle swizzle[RECORDED_MAPS];
} encoded;

static CUresult fake_encode(CUtensorMap *map, CUtensorMapDataType type, cuuint32_t rank, void *address,
                            const cuuint64_t *dims, const cuuint64_t *strides, const cuuint32_t *box,
                            const cuuint32_t *element_strides, CUtensorMapInterleave interleave,
                            CUtensorMapSwizzle swizzle, CUtensorMapL2promotion promotion, CUtensorMapFloatOOBfill fill)
{
    (void)element_strides, (void)interleave, (void)promotion, (void)fill;
    if (encoded.fail)
        return CUDA_ERROR_INVALID_VALUE;
    const int i = encoded.calls++;
    if (i >= RECORDED_MAPS)
        return CUDA_SUCCESS;   /* records the first six */
    encoded.type[i] = type, encoded.rank[i] = rank, encoded.address[i] = (uintptr_t)address;
    memcpy(encoded.dims[i], dims, sizeof encoded.dims[i]);
    memcpy(encoded.strides[i], strides, sizeof encoded.strides[i]);
    memcpy(encoded.box[i], box, sizeof encoded.box[i]);
    encoded.swizzle[i] = swizzle;
    memset(map, 0x11 * (i + 1), sizeof *map);
    return CUDA_SUCCESS;
}

/* A persistent step's occupancy: fake_blocks_per_sm blocks of any kernel an SM, 132 SMs. */
static int fake_blocks_per_sm = 2;
static CUresult fake_occupancy(int *blocks, CUfunction fn, int block_size, size_t smem)
{
    (void)fn, (void)block_size, (void)smem;
    *blocks = fake_blocks_per_sm;
    return CUDA_SUCCESS;
}

static CUresult fake_ctx_device(CUdevice *dev)
{
    *dev = 0;
    return CUDA_SUCCESS;
}

static CUresult fake_device_attr(int *value, CUdevice_attribute attrib, CUdevice dev)
{
    (void)dev;
    *value = attrib == CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT ? 132 : 0;
    return CUDA_SUCCESS;
}

static cu_driver fake = {
    .ModuleLoadData = fake_load, .ModuleUnload = fake_unload, .ModuleGetFunction = fake_getfn,
    .FuncSetAttribute = fake_attr, .LaunchKernel = fake_launch, .MemsetD8Async = fake_memset,
    .TensorMapEncodeTiled = fake_encode, .OccupancyMaxActiveBlocksPerMultiprocessor = fake_occupancy,
    .CtxGetDevice = fake_ctx_device, .DeviceGetAttribute = fake_device_attr,
};

static int reset(void **state)
{
    (void)state;
    ncalls = overflow = 0;
    memset(&encoded, 0, sizeof encoded);
    block_is_backward = 0;
    fake_blocks_per_sm = 2;
    fail_getfn = NULL;
    fail_attr = CUDA_SUCCESS;
    fail_launch_index = -1;
    return 0;
}

static int count_calls(const char *what)
{
    int n = 0;
    for (int i = 0; i < ncalls; i++)
        n += !strcmp(calls[i].what, what);
    return n;
}

static gen_config family_config(const char *family, int dtype, int dq_mode)
{
    gen_config c;
    const gen_family *f = gen_family_find(family);
    assert_non_null(f);
    gen_config_init(&c, f);
    c.p[GEN_DTYPE] = dtype;
    if (f->params & GEN_BIT(GEN_DQ_MODE))
        c.p[GEN_DQ_MODE] = dq_mode;
    return c;
}

/* ---- entry shapes (moved from test_gen with the function) ---------------------------------- */

static size_t fake_smem(const int *p)
{
    return (size_t)p[GEN_BLOCK_M] * 100 + (size_t)p[GEN_BLOCK_N];
}

static const gen_entry fake_entries[] = {
    { "fake_q", 0, fake_smem, NULL, GEN_OP_FAMILY, 0, 0 },
    { "fake_k", 1, NULL, NULL, GEN_OP_FAMILY, 0, 0 },
};
static const gen_family fake_family = {
    .name = "fake", .file = "fake.cu", .dtypes = 0xf, .params = 0xfff,
    .entries = fake_entries, .entry_count = 2,
};

static const struct {
    int entry, block_m, block_n, warps, seqlen_q, seqlen_k;
    int rc;
    unsigned grid_x, block_x;
    size_t smem;
} dims_cases[] = {
    { 0, 128, 64, 4, 1000, 50, 0, 8, 128, 12864 },
    { 0, 64, 64, 8, 64, 64, 0, 1, 256, 6464 },
    { 0, 64, 64, 1, 65, 7, 0, 2, 32, 6464 },
    { 1, 64, 32, 4, 1, 100, 0, 4, 128, 0 },
    { 1, 64, 64, 16, 8192, 1, 0, 1, 512, 0 },
    { 0, 64, 64, 4, 0, 64, -1, 0, 0, 0 },
    { 1, 64, 64, 4, 64, 0, -1, 0, 0, 0 },
    { 0, 0, 64, 4, 64, 64, -1, 0, 0, 0 },
    { 1, 64, 64, 0, 64, 64, -1, 0, 0, 0 },
};

static void entry_dims_follow_the_contract(void **state)
{
    (void)state;
    for (int i = 0; i < ARRAY_LEN(dims_cases); i++) {
        gen_config c;
        gen_config_init(&c, &fake_family);
        c.p[GEN_BLOCK_M] = dims_cases[i].block_m;
        c.p[GEN_BLOCK_N] = dims_cases[i].block_n;
        c.p[GEN_NUM_WARPS] = dims_cases[i].warps;
        unsigned grid_x = 0, block_x = 0;
        size_t smem = 99;
        const int rc = ln_entry_dims(&c, &fake_entries[dims_cases[i].entry], dims_cases[i].seqlen_q,
                                     dims_cases[i].seqlen_k, &grid_x, &block_x, &smem);
        if (rc != dims_cases[i].rc)
            fail_msg("dims case %d: rc %d, expected %d", i, rc, dims_cases[i].rc);
        if (rc)
            continue;
        if (grid_x != dims_cases[i].grid_x || block_x != dims_cases[i].block_x || smem != dims_cases[i].smem)
            fail_msg("dims case %d: got grid.x %u block.x %u smem %zu, expected %u %u %zu", i, grid_x, block_x, smem,
                     dims_cases[i].grid_x, dims_cases[i].block_x, dims_cases[i].smem);
    }
}

/* A family whose main kernel runs in clusters of two with MULTICAST: its grid.x is the tiles
 * rounded up to whole clusters; a helper entry's (not `persists`) is not. */
static int fake_cluster(const int *p)
{
    return p[GEN_MULTICAST] ? 2 : 1;
}
static const gen_entry fake_cluster_entries[] = {
    { "fake_main", 0, NULL, NULL, GEN_OP_FAMILY, 0, 1 },
    { "fake_helper", 0, NULL, NULL, GEN_OP_FAMILY, 0, 0 },
};
static int fake_persistent(const int *p)
{
    return p[GEN_PERSISTENT];
}
static const gen_family fake_clustered = {
    .name = "fake_clustered", .file = "fake.cu", .dtypes = 0xf, .params = 0xfff,
    .entries = fake_cluster_entries, .entry_count = 2, .cluster = fake_cluster, .persistent = fake_persistent,
};

static void cluster_grids_round_up(void **state)
{
    (void)state;
    static const struct {
        int entry, multicast, seqlen_q;
        unsigned grid_x;
    } want[] = {
        { 0, 1, 300, 4 }, { 0, 1, 256, 2 }, { 0, 1, 1, 2 }, { 0, 0, 300, 3 }, { 1, 1, 300, 3 },
    };
    for (int i = 0; i < ARRAY_LEN(want); i++) {
        gen_config c;
        gen_config_init(&c, &fake_clustered);
        c.p[GEN_BLOCK_M] = 128;
        c.p[GEN_BLOCK_N] = 64;
        c.p[GEN_NUM_WARPS] = 12;
        c.p[GEN_MULTICAST] = want[i].multicast;
        unsigned grid_x = 0, block_x = 0;
        size_t smem = 0;
        assert_int_equal(ln_entry_dims(&c, &fake_cluster_entries[want[i].entry], want[i].seqlen_q, 64, &grid_x,
                                       &block_x, &smem), 0);
        if (grid_x != want[i].grid_x)
            fail_msg("cluster case %d: grid.x %u, expected %u", i, grid_x, want[i].grid_x);
    }
}

/* fwd_wgmma's clusters (MULTICAST) as its plan launches them: three query tiles of 128 rows make
 * a grid of 4 (two clusters, the last block idle) and boxes of half a key tile; a grid a launch
 * recomputes (grouped heads packed into rows) stays whole clusters; a persistent step in clusters
 * is refused with the reason, as the launcher could not size it. */
static void cluster_plans_launch_whole_clusters(void **state)
{
    (void)state;
    for (int mc = 0; mc <= 1; mc++) {
        gen_config c = family_config("fwd_wgmma", 2, 0);
        c.p[GEN_MULTICAST] = mc;
        ln_plan plan;
        char err[512] = "";
        if (ln_plan_make(&c, LN_FORWARD, 384, 384, &plan, err, sizeof err) != 0)
            fail_msg("MULTICAST=%d: %s", mc, err);
        assert_int_equal(plan.count, 1);
        assert_int_equal(plan.steps[0].grid_x, mc ? 4 : 3);
        assert_int_equal(plan.steps[0].cluster, mc ? 2 : 1);
        assert_int_equal(plan.map_rows, mc ? 64 : 128);
    }
    const ln_step packed = { .grid_x = 4, .splits = 1, .pack_rows = 64, .cluster = 2 };
    const ln_problem p = { .batch = 1, .heads = 6, .heads_k = 2, .seqlen_q = 100, .seqlen_k = 100 };
    unsigned gx = 0, gy = 0;
    ln_step_grid(&packed, &p, 1, &gx, &gy);
    assert_int_equal(gx, 6);   /* 300 packed rows: 5 tiles of 64, rounded up to whole clusters */
    assert_int_equal(gy, 2);
    gen_config c;
    gen_config_init(&c, &fake_clustered);
    c.p[GEN_BLOCK_M] = 128;
    c.p[GEN_BLOCK_N] = 64;
    c.p[GEN_NUM_WARPS] = 12;
    c.p[GEN_MULTICAST] = 1;
    c.p[GEN_PERSISTENT] = 1;
    ln_plan plan;
    char err[512] = "";
    assert_int_equal(ln_plan_make(&c, LN_FORWARD, 300, 64, &plan, err, sizeof err), -1);
    assert_non_null(strstr(err, "fake_main of fake_clustered runs persistent in clusters of 2 blocks"));
}

/* ---- each family's steps ------------------------------------------------------------------- */

typedef struct step_want {
    const char *name;
    unsigned grid_x, block_x, smem;
} step_want;

/* Defaults of each family, seqlen_q 1000 and seqlen_k 300; shared memory worked out by hand from
 * the family's formula (generator/family_*.c). */
static const struct {
    const char *family;
    int dtype, dq_mode;
    ln_op op;
    int rc, accum, map_rows;   /* map_rows: the tensor maps' box rows (0: none) */
    step_want steps[LN_MAX_STEPS];
} plan_cases[] = {
    /* fwd_mma: 128 x 64 tiles, 8 warps, 2 stages, D 128: (128*128 + 2*64*256) * 2 bytes. */
    { "fwd_mma", 2, 0, LN_FORWARD, 0, 0, 0, { { "ft_fwd", 8, 256, 98304 } } },
    { "fwd_mma", 2, 0, LN_BACKWARD, -1, 0, 0, { { NULL } } },
    /* fwd_wgmma: 128 x 128, 12 warps (a producer, loading K and V by tensor maps of 128-key boxes):
     * 1024 + (128*128 + 2*128*256) * 2 + 1024 of mbarriers. */
    { "fwd_wgmma", 1, 0, LN_FORWARD, 0, 0, 128, { { "ft_fwd", 8, 384, 165888 } } },
    /* fwd_exact f32: 64 x 32, 4 warps: (64*132 + 2*32*264 + 64*36) * 4. */
    { "fwd_exact", 0, 0, LN_FORWARD, 0, 0, 0, { { "ft_fwd", 16, 128, 110592 } } },
    /* bwd_mma: 32 x 128, 8 warps, 2 stages, D 128. dkdv: K, V + 2 stages (+ dS^T with DQ_MODE 0). */
    { "bwd_mma", 2, 0, LN_BACKWARD, 0, 1, 0,
      { { "ft_bwd_preprocess", 32, 256, 0 }, { "ft_bwd_dkdv", 3, 256, 109056 }, { "ft_bwd_dq_convert", 32, 256, 0 } } },
    { "bwd_mma", 2, 1, LN_BACKWARD, 0, 0, 0,
      { { "ft_bwd_preprocess", 32, 256, 0 }, { "ft_bwd_dkdv", 3, 256, 98816 }, { "ft_bwd_dq", 32, 256, 147456 } } },
    { "bwd_mma", 2, 1, LN_FORWARD, -1, 0, 0, { { NULL } } },
    /* bwd_wgmma: 64 x 128, 8 warps, 2 stages, D 128: 1024 + K, V 128*256*2 + 2 * (64*256*2 + 1024)
     * + dS^T 128*64*2 + the fp32 dQ tile 64*128*4; Q and dO by tensor maps of 64-row boxes. */
    { "bwd_wgmma", 2, 0, LN_BACKWARD, 0, 1, 64,
      { { "ft_bwd_preprocess", 16, 256, 0 }, { "ft_bwd_dkdv", 3, 256, 183296 }, { "ft_bwd_dq_convert", 16, 256, 0 } } },
    /* bwd_wgmma_f32: 32 x 64, 8 warps, 2 stages, D 64, three products: 1024 + K, V, K^T in two
     * planes 2*64*192*4 + 2 * (2*32*128*4 + 1024) + P^T, dS^T, dS in two planes 3*2*64*32*4 + 32
     * of mbarriers. Direct (the default) adds dQ into dQ itself: no accumulator, nothing to convert. */
    { "bwd_wgmma_f32", 0, 3, LN_BACKWARD, 0, 0, 0,
      { { "ft_bwd_preprocess", 32, 256, 0 }, { "ft_bwd_dkdv", 5, 256, 216096 } } },
    { "bwd_wgmma_f32", 0, 0, LN_BACKWARD, 0, 1, 0,
      { { "ft_bwd_preprocess", 32, 256, 0 }, { "ft_bwd_dkdv", 5, 256, 216096 }, { "ft_bwd_dq_convert", 32, 256, 0 } } },
    /* bwd_exact: 32 x 64, 8 warps, 2 stages, D 128; f32 rows padded by 4 elements, f64 by 2. */
    { "bwd_exact", 0, 0, LN_BACKWARD, 0, 1, 0,
      { { "ft_bwd_preprocess", 32, 256, 0 }, { "ft_bwd_dkdv", 5, 256, 154112 }, { "ft_bwd_dq_convert", 32, 256, 0 } } },
    { "bwd_exact", 3, 1, LN_BACKWARD, 0, 0, 0,
      { { "ft_bwd_preprocess", 32, 256, 0 }, { "ft_bwd_dkdv", 5, 256, 302080 }, { "ft_bwd_dq", 32, 256, 349696 } } },
    /* ref: one warp per row, 4 rows a block; its backward order is preprocess, dq, dkdv. */
    { "ref", 0, 0, LN_FORWARD, 0, 0, 0, { { "ft_ref_fwd", 250, 128, 0 } } },
    { "ref", 3, 0, LN_BACKWARD, 0, 0, 0,
      { { "ft_ref_bwd_preprocess", 250, 128, 0 }, { "ft_ref_bwd_dq", 250, 128, 0 },
        { "ft_ref_bwd_dkdv", 75, 128, 0 } } },
    { "ref", 0, 0, LN_UTILITY, -1, 0, 0, { { NULL } } },
};

static void steps_follow_each_family(void **state)
{
    (void)state;
    for (int i = 0; i < ARRAY_LEN(plan_cases); i++) {
        const gen_config c = family_config(plan_cases[i].family, plan_cases[i].dtype, plan_cases[i].dq_mode);
        ln_plan plan;
        char err[512] = "";
        const int rc = ln_plan_make(&c, plan_cases[i].op, 1000, 300, &plan, err, sizeof err);
        if (rc != plan_cases[i].rc)
            fail_msg("plan case %d (%s): rc %d, expected %d: %s", i, plan_cases[i].family, rc, plan_cases[i].rc, err);
        if (rc) {
            assert_non_null(strstr(err, "ln_plan_make: "));
            continue;
        }
        int want = 0;
        while (want < LN_MAX_STEPS && plan_cases[i].steps[want].name)
            want++;
        if (plan.count != want)
            fail_msg("plan case %d (%s): %d steps, expected %d", i, plan_cases[i].family, plan.count, want);
        assert_int_equal(plan.accum, plan_cases[i].accum);
        assert_int_equal(plan.backward, plan_cases[i].op == LN_BACKWARD);
        assert_int_equal(plan.map_rows, plan_cases[i].map_rows);
        for (int s = 0; s < want; s++) {
            const ln_step *got = &plan.steps[s];
            const step_want *w = &plan_cases[i].steps[s];
            if (strcmp(got->entry->name, w->name) || got->grid_x != w->grid_x || got->block_x != w->block_x ||
                got->smem != w->smem || got->fn != NULL)
                fail_msg("plan case %d (%s) step %d: got %s grid.x %u block.x %u smem %u, expected %s %u %u %u", i,
                         plan_cases[i].family, s, got->entry->name, got->grid_x, got->block_x, got->smem, w->name,
                         w->grid_x, w->block_x, w->smem);
        }
    }
}

/* Every entry of every catalogue family serves exactly one operation, and a family's steps for
 * an operation are that operation's used entries in table order. */
static void every_family_has_its_steps(void **state)
{
    (void)state;
    int count;
    const gen_family *const *list = gen_family_list(&count);
    for (int i = 0; i < count; i++) {
        const gen_family *f = list[i];
        for (int dq = 0; dq < 2; dq++) {
            int dtype = 0;
            while (!(f->dtypes & (1u << dtype)))
                dtype++;
            gen_config c = family_config(f->name, dtype, dq);
            for (int op = LN_FORWARD; op <= LN_BACKWARD; op++) {
                ln_plan plan;
                char err[256];
                const int rc = ln_plan_make(&c, (ln_op)op, 77, 77, &plan, err, sizeof err);
                int expect = 0;
                for (int e = 0; e < f->entry_count; e++)
                    if (ln_entry_op(f, &f->entries[e]) == (ln_op)op && gen_entry_used(&c, &f->entries[e])) {
                        assert_int_equal(rc, 0);
                        assert_ptr_equal(plan.steps[expect].entry, &f->entries[e]);
                        expect++;
                    }
                if (expect == 0)
                    assert_int_equal(rc, -1);
                else
                    assert_int_equal(plan.count, expect);
            }
        }
    }
}

/* ---- module load: the shared-memory opt-in, once ------------------------------------------ */

static const struct {
    const char *family;
    int dtype, dq_mode;
    const char *attr[3];        /* entries opted in, in table order */
    size_t bytes[3];
} load_cases[] = {
    { "fwd_mma", 2, 0, { "ft_fwd" }, { 98304 } },
    { "bwd_mma", 2, 0, { "ft_bwd_dkdv" }, { 109056 } },
    { "bwd_mma", 2, 1, { "ft_bwd_dkdv", "ft_bwd_dq" }, { 98816, 147456 } },
    { "ref", 0, 0, { NULL }, { 0 } },
};

static void module_load_opts_in_once(void **state)
{
    for (int i = 0; i < ARRAY_LEN(load_cases); i++) {
        reset(state);
        const gen_config c = family_config(load_cases[i].family, load_cases[i].dtype, load_cases[i].dq_mode);
        CUmodule m = NULL;
        const char *what = "unset";
        assert_int_equal(ln_module_load(&fake, &c, "image", &m, &what), CUDA_SUCCESS);
        assert_ptr_equal(m, FAKE_MODULE);
        assert_null(what);
        int n = 0;
        for (int k = 0; k < ncalls; k++) {
            if (!strcmp(calls[k].what, "getfn")) {
                /* Only what the configuration launches is in the module. */
                const gen_entry *e = NULL;
                for (int j = 0; j < c.family->entry_count; j++)
                    if (!strcmp(c.family->entries[j].name, calls[k].name))
                        e = &c.family->entries[j];
                assert_non_null(e);
                assert_true(gen_entry_used(&c, e));
            }
            if (strcmp(calls[k].what, "attr"))
                continue;
            assert_true(n < 3 && load_cases[i].attr[n]);
            assert_string_equal(calls[k].name, load_cases[i].attr[n]);
            assert_int_equal(calls[k].bytes, load_cases[i].bytes[n]);
            n++;
        }
        assert_true(n == 3 || !load_cases[i].attr[n]);
        /* Launches never set an attribute: a plan bound to the module launches without one. */
        ln_plan plan;
        char err[256];
        const int bwd = c.family->backward || !strcmp(c.family->name, "ref");
        assert_int_equal(ln_plan_make(&c, bwd ? LN_BACKWARD : LN_FORWARD, 64, 64, &plan, err, sizeof err), 0);
        assert_int_equal(ln_plan_bind(&fake, &plan, m, NULL), CUDA_SUCCESS);
        const int attrs = count_calls("attr");
        ln_problem p = { .dtype = c.p[GEN_DTYPE], .batch = 1, .heads = 1, .seqlen_q = 64, .seqlen_k = 64,
                         .head_dim = plan.head_dim, .head_dim_v = plan.head_dim_v, .dq_accum = 0x100000 };
        block_is_backward = plan.backward;
        assert_int_equal(ln_launch(&fake, &plan, &p, NULL), CUDA_SUCCESS);
        assert_int_equal(count_calls("attr"), attrs);
        assert_int_equal(count_calls("launch"), plan.count);
    }
}

static void module_load_failure_names_the_call(void **state)
{
    const gen_config c = family_config("bwd_mma", 2, 1);
    CUmodule m = FAKE_MODULE;
    const char *what = NULL;
    fail_attr = CUDA_ERROR_INVALID_VALUE;
    assert_int_equal(ln_module_load(&fake, &c, "image", &m, &what), CUDA_ERROR_INVALID_VALUE);
    assert_null(m);
    assert_string_equal(what, "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
    assert_int_equal(count_calls("unload"), 1);
    reset(state);
    fail_getfn = "ft_bwd_dq";
    assert_int_equal(ln_module_load(&fake, &c, "image", &m, &what), CUDA_ERROR_NOT_FOUND);
    assert_string_equal(what, "cuModuleGetFunction");
    assert_int_equal(count_calls("unload"), 1);
    /* A plan that cannot find its function says which. */
    reset(state);
    ln_plan plan;
    char err[256];
    const char *missing = NULL;
    assert_int_equal(ln_plan_make(&c, LN_BACKWARD, 10, 10, &plan, err, sizeof err), 0);
    fail_getfn = "ft_bwd_dkdv";
    assert_int_equal(ln_plan_bind(&fake, &plan, FAKE_MODULE, &missing), CUDA_ERROR_NOT_FOUND);
    assert_string_equal(missing, "ft_bwd_dkdv");
}

/* ---- workspace, argument blocks ------------------------------------------------------------ */

static const struct {
    int dtype, batch, heads, seqlen_q, total_q, head_dim;
    size_t accum_offset, bytes;
} ws_cases[] = {
    /* delta: 600 rows of 4 bytes, rounded up to 256; the accumulator; the dQ order area: 2
     * tickets and 2 * 3 * ceil(100 / 16) semaphores */
    { 0, 2, 3, 100, 0, 64, 2560, 2560 + 600 * 64 * 4 + (2 + 6 * 7) * 4 },
    { 2, 2, 3, 100, 0, 64, 2560, 2560 + 600 * 64 * 4 + (2 + 6 * 7) * 4 },   /* bf16 accumulates in fp32 */
    { 3, 2, 3, 100, 0, 64, 4864, 4864 + 600 * 64 * 8 + (2 + 6 * 7) * 4 },   /* f64 in double */
    { 1, 1, 1, 64, 0, 128, 256, 256 + 64 * 128 * 4 + (1 + 4) * 4 },         /* already aligned */
    /* variable-length: 3 heads over 130 packed rows (the longest 100): 390 rows of delta and
     * accumulator; the order area as the dense batch of the longest length */
    { 2, 2, 3, 100, 130, 64, 1792, 1792 + 390 * 64 * 4 + (2 + 6 * 7) * 4 },
};

static void workspace_layout(void **state)
{
    (void)state;
    for (int i = 0; i < ARRAY_LEN(ws_cases); i++) {
        size_t offset = 0;
        const size_t bytes = ln_workspace_bytes(ws_cases[i].dtype, ws_cases[i].batch, ws_cases[i].heads,
                                                ws_cases[i].seqlen_q, ws_cases[i].total_q, ws_cases[i].head_dim,
                                                &offset);
        if (bytes != ws_cases[i].bytes || offset != ws_cases[i].accum_offset)
            fail_msg("workspace case %d: %zu bytes, accum at %zu; expected %zu, %zu", i, bytes, offset,
                     ws_cases[i].bytes, ws_cases[i].accum_offset);
        assert_int_equal(ln_workspace_bytes(ws_cases[i].dtype, ws_cases[i].batch, ws_cases[i].heads,
                                            ws_cases[i].seqlen_q, ws_cases[i].total_q, ws_cases[i].head_dim, NULL),
                         bytes);
    }
}

/* A problem whose every field differs: f16, strides of a [B, N, H, D] view and padded rows. */
static ln_problem sample_problem(int batch, int heads)
{
    ln_problem p = {
        .dtype = 1, .batch = batch, .heads = heads, .seqlen_q = 40, .seqlen_k = 24, .head_dim = 64, .head_dim_v = 32,
        .softmax_scale = 0.3, .causal = 1, .mask_lo = -7, .mask_hi = 3,
        .q_stride = { 100000, 72, 72 * 5 }, .k_stride = { 200000, 64, 640 }, .v_stride = { 300000, 40, 400 },
        .o_stride = { 400000, 32, 320 },
        .q = 0x10000000, .k = 0x20000000, .v = 0x30000000, .o = 0x40000000, .lse = 0x50000000, .dout = 0x60000000,
        .dq = 0x70000000, .dk = 0x80000000, .dv = 0x90000000, .delta = 0xa0000000, .dq_accum = 0xb0000000,
    };
    return p;
}

/* family_config for sample_problem's head dims (64, 32): a plan launches only its own. */
static gen_config sample_config(const char *family, int dtype, int dq_mode)
{
    gen_config c = family_config(family, dtype, dq_mode);
    c.p[GEN_HEAD_DIM] = 64;
    c.p[GEN_HEAD_DIM_V] = 32;
    return c;
}

static void check_strides(const long long got[3], const long long want[3])
{
    for (int i = 0; i < 3; i++)
        assert_int_equal(got[i], want[i]);
}

static uintptr_t addr(const void *p)
{
    return (uintptr_t)p;
}

static void forward_args_from_a_problem(void **state)
{
    (void)state;
    const ln_problem p = sample_problem(9, 5);
    ft_fwd_args a;
    memset(&a, 0x5a, sizeof a);
    ln_fwd_args(&p, 1, 0, 2, 3, &a);
    assert_int_equal(addr(a.q), 0x10000000 + 2 * 100000 * 2);
    assert_int_equal(addr(a.k), 0x20000000 + 2 * 200000 * 2);
    assert_int_equal(addr(a.v), 0x30000000 + 2 * 300000 * 2);
    assert_int_equal(addr(a.o), 0x40000000 + 2 * 400000 * 2);
    assert_int_equal(addr(a.lse), 0x50000000 + 2 * 5 * 40 * 4);   /* whole [heads, seqlen_q] rows, fp32 */
    check_strides(a.q_stride, p.q_stride);
    check_strides(a.k_stride, p.k_stride);
    check_strides(a.v_stride, p.v_stride);
    check_strides(a.o_stride, p.o_stride);
    assert_int_equal(a.batch, 3);
    assert_int_equal(a.heads, 5);
    assert_int_equal(a.seqlen_q, 40);
    assert_int_equal(a.seqlen_k, 24);
    assert_true(a.softmax_scale == 0.3);
    assert_int_equal(a.mask_lo, -7);
    assert_int_equal(a.mask_hi, 3);
    assert_int_equal(a.heads_k, 5);   /* 0 in the problem: every query head has its own K/V head */
    assert_true(a.softcap == 0);
}

static void backward_args_from_a_problem(void **state)
{
    (void)state;
    ln_problem p = sample_problem(9, 5);
    p.dtype = 3;   /* f64: 8-byte elements and accumulators */
    for (int accum = 0; accum < 2; accum++) {
        ft_bwd_args a;
        memset(&a, 0x5a, sizeof a);
        ln_bwd_args(&p, accum ? 64 : 0, 4, 5, &a);
        const uintptr_t rows = 4 * 5 * 40;
        assert_int_equal(addr(a.q), 0x10000000 + 4 * 100000 * 8);
        assert_int_equal(addr(a.k), 0x20000000 + 4 * 200000 * 8);
        assert_int_equal(addr(a.v), 0x30000000 + 4 * 300000 * 8);
        assert_int_equal(addr(a.o), 0x40000000 + 4 * 400000 * 8);
        assert_int_equal(addr(a.dout), 0x60000000 + 4 * 400000 * 8);   /* dout has o's strides */
        assert_int_equal(addr(a.lse), 0x50000000 + rows * 8);
        assert_int_equal(addr(a.dq), 0x70000000 + 4 * 100000 * 8);
        assert_int_equal(addr(a.dk), 0x80000000 + 4 * 200000 * 8);
        assert_int_equal(addr(a.dv), 0x90000000 + 4 * 300000 * 8);
        assert_int_equal(addr(a.delta), 0xa0000000 + rows * 8);
        if (accum)
            assert_int_equal(addr(a.dq_accum), 0xb0000000 + rows * 64 * 8);
        else
            assert_null(a.dq_accum);
        check_strides(a.q_stride, p.q_stride);
        check_strides(a.k_stride, p.k_stride);
        check_strides(a.v_stride, p.v_stride);
        check_strides(a.o_stride, p.o_stride);
        check_strides(a.do_stride, p.o_stride);
        check_strides(a.dq_stride, p.q_stride);
        check_strides(a.dk_stride, p.k_stride);
        check_strides(a.dv_stride, p.v_stride);
        assert_int_equal(a.batch, 5);
        assert_int_equal(a.heads, 5);
        assert_int_equal(a.seqlen_q, 40);
        assert_int_equal(a.seqlen_k, 24);
        assert_true(a.softmax_scale == 0.3);
        assert_int_equal(a.mask_lo, -7);
        assert_int_equal(a.mask_hi, 3);
    }
    /* Null pointers stay null (a forward's problem has no dout). */
    p.dout = 0;
    ft_bwd_args a;
    ln_bwd_args(&p, 0, 3, 1, &a);
    assert_null(a.dout);
    assert_true(ln_softmax_scale(0, 64) == 0.125);
    assert_true(ln_softmax_scale(0.5, 64) == 0.5);
}

static void tensor_maps_describe_the_slice(void **state)
{
    (void)state;
    ln_problem p = sample_problem(9, 5);
    p.dtype = 2;   /* bf16 */
    const cu_driver d = fake;
    ft_bwd_args a;
    ln_bwd_args(&p, 64, 4, 5, &a);
    memset(&encoded, 0, sizeof encoded);
    assert_int_equal(ln_bwd_tensor_maps(&d, &p, 64, 0, &a), CUDA_SUCCESS);
    assert_int_equal(encoded.calls, 2);
    /* Q then dO (o's strides), each [nb][heads][seqlen_q][dim] from the slice's base. */
    const uintptr_t base[2] = { 0x10000000 + 4 * 100000 * 2, 0x60000000 + 4 * 400000 * 2 };
    const long long *st[2] = { p.q_stride, p.o_stride };
    const int dim[2] = { 64, 32 };
    for (int i = 0; i < 2; i++) {
        assert_int_equal(encoded.type[i], CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
        assert_int_equal(encoded.rank[i], 4);
        assert_int_equal(encoded.address[i], base[i]);
        assert_int_equal(encoded.dims[i][0], dim[i]);
        assert_int_equal(encoded.dims[i][1], 40);
        assert_int_equal(encoded.dims[i][2], 5);
        assert_int_equal(encoded.dims[i][3], 5);
        assert_int_equal(encoded.strides[i][0], st[i][2] * 2);
        assert_int_equal(encoded.strides[i][1], st[i][1] * 2);
        assert_int_equal(encoded.strides[i][2], st[i][0] * 2);
        assert_int_equal(encoded.box[i][0], 64);
        assert_int_equal(encoded.box[i][1], 64);
        assert_int_equal(encoded.box[i][2], 1);
        assert_int_equal(encoded.swizzle[i], CU_TENSOR_MAP_SWIZZLE_128B);
    }
    unsigned char want[sizeof a.q_map];
    memset(want, 0x11, sizeof want);
    assert_memory_equal(&a.q_map, want, sizeof want);
    memset(want, 0x22, sizeof want);
    assert_memory_equal(&a.do_map, want, sizeof want);

    /* One batch and one head: their strides, unused, become spans the engine accepts. */
    ln_problem one = sample_problem(1, 1);
    one.dtype = 1;
    one.q_stride[0] = one.q_stride[1] = 3;
    ln_bwd_args(&one, 64, 0, 1, &a);
    memset(&encoded, 0, sizeof encoded);
    assert_int_equal(ln_bwd_tensor_maps(&d, &one, 64, 0, &a), CUDA_SUCCESS);
    assert_int_equal(encoded.type[0], CU_TENSOR_MAP_DATA_TYPE_FLOAT16);
    assert_int_equal(encoded.strides[0][0], 72 * 5 * 2);
    assert_int_equal(encoded.strides[0][1], 72 * 5 * 2 * 40);
    assert_int_equal(encoded.strides[0][2], 72 * 5 * 2 * 40);

    /* f32 (fwd_wgmma's TF32 products): boxes of 32 floats a row, 4-byte strides; f64 has none. */
    one.dtype = 0;
    memset(&encoded, 0, sizeof encoded);
    assert_int_equal(ln_bwd_tensor_maps(&d, &one, 64, 0, &a), CUDA_SUCCESS);
    assert_int_equal(encoded.type[0], CU_TENSOR_MAP_DATA_TYPE_FLOAT32);
    assert_int_equal(encoded.box[0][0], 32);
    assert_int_equal(encoded.strides[0][0], 72 * 5 * 4);
    one.dtype = 3;
    assert_int_equal(ln_bwd_tensor_maps(&d, &one, 64, 0, &a), CUDA_ERROR_INVALID_VALUE);
    one.dtype = 2;
    encoded.fail = 1;
    assert_int_equal(ln_bwd_tensor_maps(&d, &one, 64, 0, &a), CUDA_ERROR_INVALID_VALUE);
    encoded.fail = 0;
}

/* bwd_wgmma beside a producer, the keys split, one share of a group, a dense batch: K and V in
 * and dK and dV out by the copy engine (their maps' boxes a key tile); with SPLITS > 1 (fp32
 * partials) or a variable-length batch (maps over every sequence's keys) the plain loads and
 * stores, no such maps. */
static void hopper_backward_key_maps(void **state)
{
    (void)state;
    gen_config c = family_config("bwd_wgmma", 2, 0);
    c.p[GEN_HEAD_DIM] = c.p[GEN_HEAD_DIM_V] = 64;
    c.p[GEN_BLOCK_N] = 128;
    c.p[GEN_NUM_WARPS] = 12;
    ln_plan plan;
    char err[256];
    assert_int_equal(ln_plan_make(&c, LN_BACKWARD, 40, 24, &plan, err, sizeof err), 0);
    assert_int_equal(plan.map_rows, 64);
    assert_int_equal(plan.o_map_rows, 128);
    gen_config other = c;
    other.p[GEN_SPLITS] = 2;
    assert_int_equal(ln_plan_make(&other, LN_BACKWARD, 40, 24, &plan, err, sizeof err), 0);
    assert_int_equal(plan.o_map_rows, 0);
    other = c;
    other.p[GEN_VARLEN] = 1;
    assert_int_equal(ln_plan_make(&other, LN_BACKWARD, 40, 24, &plan, err, sizeof err), 0);
    assert_int_equal(plan.o_map_rows, 0);
    other = c;
    other.p[GEN_NUM_WARPS] = 8;   /* the consumers alone */
    assert_int_equal(ln_plan_make(&other, LN_BACKWARD, 40, 24, &plan, err, sizeof err), 0);
    assert_int_equal(plan.o_map_rows, 0);

    /* The maps: Q, dO over the query heads; K, V, dK, dV over the K/V heads, seqlen_k rows. */
    ln_problem p = sample_problem(9, 6);
    p.dtype = 2;
    p.heads_k = 2;
    const cu_driver d = fake;
    ft_bwd_args a;
    ln_bwd_args(&p, 64, 4, 5, &a);
    memset(&encoded, 0, sizeof encoded);
    assert_int_equal(ln_bwd_tensor_maps(&d, &p, 64, 128, &a), CUDA_SUCCESS);
    assert_int_equal(encoded.calls, 6);
    const uintptr_t base[6] = { addr(a.q), addr(a.dout), addr(a.k), addr(a.v), addr(a.dk), addr(a.dv) };
    const int rows[6] = { 40, 40, 24, 24, 24, 24 }, heads[6] = { 6, 6, 2, 2, 2, 2 };
    const int box[6] = { 64, 64, 128, 128, 128, 128 }, cols[6] = { 64, 32, 64, 32, 64, 32 };
    for (int i = 0; i < 6; i++) {
        assert_int_equal(encoded.address[i], base[i]);
        assert_int_equal(encoded.dims[i][0], cols[i]);
        assert_int_equal(encoded.dims[i][1], rows[i]);
        assert_int_equal(encoded.dims[i][2], heads[i]);
        assert_int_equal(encoded.dims[i][3], 5);
        assert_int_equal(encoded.box[i][1], box[i]);
        assert_int_equal(encoded.swizzle[i], CU_TENSOR_MAP_SWIZZLE_128B);
    }
    assert_int_equal(encoded.strides[4][0], p.k_stride[2] * 2);   /* dK keeps K's strides here */
    unsigned char want[sizeof a.dv_map];
    memset(want, 0x66, sizeof want);
    assert_memory_equal(&a.dv_map, want, sizeof want);
    /* No key maps asked: Q and dO only. */
    memset(&encoded, 0, sizeof encoded);
    assert_int_equal(ln_bwd_tensor_maps(&d, &p, 64, 0, &a), CUDA_SUCCESS);
    assert_int_equal(encoded.calls, 2);
}

/* fwd_wgmma with a producer reads Q, K and V by the copy engine: K and V boxes of BLOCK_N keys,
 * Q boxes of BLOCK_M rows over seqlen_q. PERSISTENT: grid.x is the blocks that fit at once (2 an
 * SM x 132 here), or the tiles where there are fewer; grid.y 1; and (two Q tiles fit at head dim
 * 64) O leaves by the copy engine too, boxes of 64 rows. */
static void hopper_forward_maps_and_persistent_grid(void **state)
{
    (void)state;
    gen_config c = family_config("fwd_wgmma", 2, 0);
    c.p[GEN_HEAD_DIM] = c.p[GEN_HEAD_DIM_V] = 64;
    static const struct {
        int persistent, batch, heads;
        unsigned gx, gy;
    } cases[] = {
        { 0, 3, 5, 1, 15 },     /* one block a tile: 40 rows in one 128-row tile, 15 heads */
        { 1, 3, 5, 15, 1 },     /* fewer tiles than resident blocks: one each */
        { 1, 40, 9, 264, 1 },   /* 360 tiles on 264 blocks */
    };
    for (int i = 0; i < ARRAY_LEN(cases); i++) {
        reset(state);
        c.p[GEN_PERSISTENT] = cases[i].persistent;
        ln_plan plan;
        char err[256];
        assert_int_equal(ln_plan_make(&c, LN_FORWARD, 40, 24, &plan, err, sizeof err), 0);
        assert_int_equal(plan.map_rows, 128);
        assert_int_equal(plan.q_map_rows, 128);
        assert_int_equal(plan.o_map_rows, cases[i].persistent ? 64 : 0);
        assert_int_equal(ln_plan_bind(&fake, &plan, FAKE_MODULE, NULL), CUDA_SUCCESS);
        assert_int_equal(plan.steps[0].resident, cases[i].persistent ? 264u : 0u);
        ncalls = 0;
        ln_problem p = sample_problem(cases[i].batch, cases[i].heads);
        p.dtype = 2;
        p.head_dim = p.head_dim_v = 64;
        p.v_stride[2] = p.o_stride[2] = 64;
        assert_int_equal(ln_launch(&fake, &plan, &p, NULL), CUDA_SUCCESS);
        assert_int_equal(ncalls, 1);
        assert_int_equal(calls[0].gx, cases[i].gx);
        assert_int_equal(calls[0].gy, cases[i].gy);
        const int maps = cases[i].persistent ? 4 : 3;
        assert_int_equal(encoded.calls, maps);
        /* K, V: keys; Q: queries, from q's base; O: queries, from o's base. */
        const int rows[4] = { 24, 24, 40, 40 }, box[4] = { 128, 128, 128, 64 };
        const uintptr_t base[4] = { 0x20000000, 0x30000000, 0x10000000, 0x40000000 };
        for (int m = 0; m < maps; m++) {
            assert_int_equal(encoded.address[m], base[m]);
            assert_int_equal(encoded.dims[m][0], 64);
            assert_int_equal(encoded.dims[m][1], rows[m]);
            assert_int_equal(encoded.box[m][1], box[m]);
        }
    }
    /* No room for one block: binding says so rather than launching nothing. */
    reset(state);
    c.p[GEN_PERSISTENT] = 1;
    fake_blocks_per_sm = 0;
    ln_plan plan;
    char err[256];
    assert_int_equal(ln_plan_make(&c, LN_FORWARD, 40, 24, &plan, err, sizeof err), 0);
    assert_int_not_equal(ln_plan_bind(&fake, &plan, FAKE_MODULE, NULL), CUDA_SUCCESS);
}

/* fwd_wgmma's narrow panels: at head dim 96 beside a producer, Q, K and V go in boxes of 32
 * columns (64-byte rows) with the 64-byte swizzle; without a producer, or at head dim 128, the
 * plan says 128 bytes; the maps refuse any other row width. */
static void narrow_panels_encode_64_byte_boxes(void **state)
{
    gen_config c = family_config("fwd_wgmma", 2, 0);
    c.p[GEN_HEAD_DIM] = c.p[GEN_HEAD_DIM_V] = 96;
    c.p[GEN_BLOCK_M] = 192;
    c.p[GEN_BLOCK_N] = 144;
    c.p[GEN_NUM_WARPS] = 16;
    c.p[GEN_P_SMEM] = 1;
    c.p[GEN_PINGPONG] = 1;
    ln_plan plan;
    char err[256];
    assert_int_equal(ln_plan_make(&c, LN_FORWARD, 300, 300, &plan, err, sizeof err), 0);
    assert_int_equal(plan.map_row_bytes, 64);
    assert_int_equal(plan.map_rows, 144);
    assert_int_equal(plan.q_map_rows, 192);
    assert_int_equal(plan.o_map_rows, 0);   /* O leaves from registers (no ASYNC_O in narrow panels) */
    assert_int_equal(ln_plan_bind(&fake, &plan, FAKE_MODULE, NULL), CUDA_SUCCESS);
    ln_problem p = sample_problem(1, 2);
    p.dtype = 2;
    p.seqlen_q = p.seqlen_k = 300;
    p.causal = 0;
    p.head_dim = p.head_dim_v = 96;
    p.q_stride[2] = p.k_stride[2] = p.v_stride[2] = p.o_stride[2] = 96;
    p.q_stride[1] = p.k_stride[1] = p.v_stride[1] = p.o_stride[1] = 96 * 300;
    p.q_stride[0] = p.k_stride[0] = p.v_stride[0] = p.o_stride[0] = 2 * 96 * 300;
    ncalls = 0;
    memset(&encoded, 0, sizeof encoded);
    assert_int_equal(ln_launch(&fake, &plan, &p, NULL), CUDA_SUCCESS);
    assert_int_equal(encoded.calls, 3);   /* K, V, Q */
    for (int m = 0; m < 3; m++) {
        assert_int_equal(encoded.box[m][0], 32);
        assert_int_equal(encoded.swizzle[m], CU_TENSOR_MAP_SWIZZLE_64B);
        assert_int_equal(encoded.dims[m][0], 96);
    }
    c.p[GEN_HEAD_DIM] = c.p[GEN_HEAD_DIM_V] = 128;
    c.p[GEN_BLOCK_N] = 128;
    assert_int_equal(ln_plan_make(&c, LN_FORWARD, 300, 300, &plan, err, sizeof err), 0);
    assert_int_equal(plan.map_row_bytes, 128);
    c.p[GEN_HEAD_DIM] = c.p[GEN_HEAD_DIM_V] = 96;
    c.p[GEN_BLOCK_M] = 64;
    c.p[GEN_NUM_WARPS] = 4;   /* no producer: cp.async writes the 128-byte pattern */
    c.p[GEN_P_SMEM] = c.p[GEN_PINGPONG] = 0;
    assert_int_equal(ln_plan_make(&c, LN_FORWARD, 300, 300, &plan, err, sizeof err), 0);
    assert_int_equal(plan.map_row_bytes, 128);
    ft_fwd_args a;
    memset(&a, 0, sizeof a);
    ln_fwd_args(&p, 1, 0, 0, 1, &a);
    assert_int_equal(ln_fwd_tensor_maps(&fake, &p, 64, 0, 0, 32, &a), CUDA_ERROR_INVALID_VALUE);
    (void)state;
}

/* Attention sinks: the reference takes them (GEN_FEATURE_SINKS), its argument blocks carry the
 * logits and (backward) their gradient, the same pointers in every slice of a split batch (one a
 * query head, summed over the batch), the gradient zeroed once before the first launch; a
 * family without the feature refuses the problem. */
static void sinks_reach_the_reference_and_nothing_else(void **state)
{
    for (int op = LN_FORWARD; op <= LN_BACKWARD; op++) {
        reset(state);
        gen_config c = sample_config("ref", 0, 0);
        c.p[GEN_BLOCK_M] = c.p[GEN_BLOCK_N] = c.p[GEN_NUM_WARPS] = 4;
        ln_plan plan;
        char err[256];
        assert_int_equal(ln_plan_make(&c, (ln_op)op, 40, 24, &plan, err, sizeof err), 0);
        assert_true(plan.features & GEN_FEATURE_SINKS);
        assert_int_equal(ln_plan_bind(&fake, &plan, FAKE_MODULE, NULL), CUDA_SUCCESS);
        ncalls = 0;
        ln_problem p = sample_problem(16, 4096);   /* 65536 rows of the grid: two slices */
        p.dtype = 0;
        p.sinks = 0xc0000000, p.dsinks = 0xd0000000;
        block_is_backward = op == LN_BACKWARD;
        assert_int_equal(ln_launch(&fake, &plan, &p, NULL), CUDA_SUCCESS);
        int launches = 0, first_launch = -1;
        for (int k = 0; k < ncalls; k++) {
            if (!strcmp(calls[k].what, "memset") && calls[k].ptr == p.dsinks) {
                assert_int_equal(op, LN_BACKWARD);
                assert_int_equal(calls[k].bytes, (size_t)4096 * 4);   /* heads x fp32, zeros */
                assert_int_equal(first_launch, -1);                    /* before every launch */
            }
            if (strcmp(calls[k].what, "launch"))
                continue;
            first_launch = first_launch < 0 ? k : first_launch;
            launches++;
            if (op == LN_BACKWARD) {
                assert_int_equal(addr(calls[k].bwd.sinks), p.sinks);
                assert_int_equal(addr(calls[k].bwd.dsinks), p.dsinks);
            } else {
                assert_int_equal(addr(calls[k].fwd.sinks), p.sinks);
            }
        }
        assert_int_equal(launches, 2 * plan.count);
    }
    /* A fused family does not take them: its launch refuses the problem. */
    reset(state);
    const gen_config c = sample_config("bwd_mma", 2, 0);
    ln_plan plan;
    char err[256];
    assert_int_equal(ln_plan_make(&c, LN_BACKWARD, 40, 24, &plan, err, sizeof err), 0);
    assert_false(plan.features & GEN_FEATURE_SINKS);
    assert_int_equal(ln_plan_bind(&fake, &plan, FAKE_MODULE, NULL), CUDA_SUCCESS);
    ln_problem p = sample_problem(2, 3);
    p.sinks = 0xc0000000;
    block_is_backward = 1;
    assert_int_equal(ln_launch(&fake, &plan, &p, NULL), CUDA_ERROR_INVALID_VALUE);
}

/* bwd_wgmma DQ_INIT store: the kernels store each query tile's first dQ share, so the launch
 * zeroes the order area alone (a ticket per batch, then the semaphores that count the shares),
 * not the accumulator before it; zero (the default) zeroes both. */
static void stored_first_share_zeroes_only_the_order_area(void **state)
{
    gen_config c = family_config("bwd_wgmma", 2, FT_DQ_ATOMIC);
    c.p[GEN_HEAD_DIM] = c.p[GEN_HEAD_DIM_V] = 64;
    c.p[GEN_BLOCK_M] = 64, c.p[GEN_BLOCK_N] = 128, c.p[GEN_NUM_WARPS] = 12;
    for (int init = FT_DQ_INIT_ZERO; init <= FT_DQ_INIT_STORE; init++) {
        reset(state);
        block_is_backward = 1;
        c.p[GEN_DQ_INIT] = init;
        char why[256];
        assert_int_equal(gen_validate(&c, 232448, why, sizeof why), 0);
        ln_plan plan;
        assert_int_equal(ln_plan_make(&c, LN_BACKWARD, 40, 24, &plan, why, sizeof why), 0);
        assert_int_equal(plan.accum_stored, init == FT_DQ_INIT_STORE);
        assert_int_equal(ln_plan_bind(&fake, &plan, FAKE_MODULE, NULL), CUDA_SUCCESS);
        ncalls = 0;
        ln_problem p = sample_problem(3, 5);
        p.dtype = 2;
        p.head_dim = p.head_dim_v = 64;
        p.v_stride[2] = p.o_stride[2] = 64;
        assert_int_equal(ln_launch(&fake, &plan, &p, NULL), CUDA_SUCCESS);
        /* The accumulator: 15 heads x 40 rows x the widest head dim of the catalogue for 64. */
        const size_t accum = (size_t)15 * 40 * ln_accum_head_dim(64) * 4, order = ((size_t)3 + 15 * 3) * 4;
        assert_int_equal(ln_dq_order_offset(&p), accum);
        assert_string_equal(calls[0].what, "memset");
        assert_int_equal(calls[0].ptr, p.dq_accum + (init == FT_DQ_INIT_STORE ? accum : 0));
        assert_int_equal(calls[0].bytes, (init == FT_DQ_INIT_STORE ? 0 : accum) + order);
    }
    /* Only beside a producer, whose dQ warp stores: the consumers alone add. */
    char why[256];
    c.p[GEN_NUM_WARPS] = 8;
    assert_int_not_equal(gen_validate(&c, 232448, why, sizeof why), 0);
    assert_non_null(strstr(why, "DQ_INIT=1"));
}

/* bwd_wgmma PERSISTENT: only ft_bwd_dkdv is persistent (grid.x its units: key tiles x K/V heads
 * x batch, at most the resident blocks; grid.y 1); the delta pass and the dQ conversion keep one
 * block a query tile. */
static void hopper_backward_persistent_grid(void **state)
{
    gen_config c = family_config("bwd_wgmma", 2, FT_DQ_ATOMIC);
    c.p[GEN_HEAD_DIM] = c.p[GEN_HEAD_DIM_V] = 64;
    c.p[GEN_BLOCK_M] = 64, c.p[GEN_BLOCK_N] = 128, c.p[GEN_NUM_WARPS] = 12;
    static const struct {
        int persistent, batch, heads;
        unsigned dkdv_gx, dkdv_gy;
    } cases[] = {
        { 0, 3, 5, 1, 15 },     /* one block a key tile: 24 keys in one 128-key tile, 15 heads */
        { 1, 3, 5, 15, 1 },     /* fewer units than resident blocks: one each */
        { 1, 40, 9, 264, 1 },   /* 360 units on 264 blocks */
    };
    for (int i = 0; i < ARRAY_LEN(cases); i++) {
        reset(state);
        block_is_backward = 1;
        c.p[GEN_PERSISTENT] = cases[i].persistent;
        char why[256];
        assert_int_equal(gen_validate(&c, 232448, why, sizeof why), 0);
        ln_plan plan;
        assert_int_equal(ln_plan_make(&c, LN_BACKWARD, 40, 24, &plan, why, sizeof why), 0);
        assert_int_equal(ln_plan_bind(&fake, &plan, FAKE_MODULE, NULL), CUDA_SUCCESS);
        ln_problem p = sample_problem(cases[i].batch, cases[i].heads);
        p.dtype = 2;
        p.head_dim = p.head_dim_v = 64;
        p.v_stride[2] = p.o_stride[2] = 64;
        assert_int_equal(ln_launch(&fake, &plan, &p, NULL), CUDA_SUCCESS);
        int launches = 0;
        for (int k = 0; k < ncalls; k++) {
            if (strcmp(calls[k].what, "launch"))
                continue;
            launches++;
            if (!strcmp(calls[k].name, "ft_bwd_dkdv")) {
                assert_int_equal(calls[k].gx, cases[i].dkdv_gx);
                assert_int_equal(calls[k].gy, cases[i].dkdv_gy);
            } else {   /* a query tile of 40 rows, every head */
                assert_int_equal(calls[k].gx, 1);
                assert_int_equal(calls[k].gy, (unsigned)(cases[i].batch * cases[i].heads));
            }
        }
        assert_int_equal(launches, 3);
    }
    /* The rules: a producer and the keys split, dQ in any order; a packed batch's walk with
     * 64-row query tiles. */
    char why[256];
    c.p[GEN_PERSISTENT] = 1;
    c.p[GEN_DQ_MODE] = FT_DQ_ORDERED;
    assert_int_not_equal(gen_validate(&c, 232448, why, sizeof why), 0);
    assert_non_null(strstr(why, "PERSISTENT=1"));
    c.p[GEN_DQ_MODE] = FT_DQ_ATOMIC;
    c.p[GEN_NUM_WARPS] = 8;
    assert_int_not_equal(gen_validate(&c, 232448, why, sizeof why), 0);
    assert_non_null(strstr(why, "PERSISTENT=1"));
    c.p[GEN_NUM_WARPS] = 12;
    c.p[GEN_VARLEN] = 1;
    assert_int_equal(gen_validate(&c, 232448, why, sizeof why), 0);
    c.p[GEN_BLOCK_M] = 128;
    assert_int_not_equal(gen_validate(&c, 232448, why, sizeof why), 0);
    assert_non_null(strstr(why, "VARLEN=1 and BLOCK_M=128"));
}

/* ---- launches and batch splitting ---------------------------------------------------------- */

static const struct {
    int batch, heads;
    int slices;                 /* launches of each step */
} split_cases[] = {
    { 200000, 1, 4 },           /* batch*heads 200000: 65535 + 65535 + 65535 + 3395 */
    { 50000, 4, 4 },            /* 16383 batches (65532 rows of the grid) a launch */
    { 3, 30000, 2 },            /* 2 batches, then 1 */
    { 7, 65535, 7 },            /* one batch a launch */
    { 16, 4096, 2 },            /* 65536, one more than fits: 15 batches, then 1 */
    { 15, 4369, 1 },            /* 65535 exactly: one launch */
};

static void batches_split_under_the_grid_limit(void **state)
{
    const gen_config c = sample_config("bwd_mma", 2, 0);
    for (int i = 0; i < ARRAY_LEN(split_cases); i++) {
        reset(state);
        ln_plan plan;
        char err[256];
        assert_int_equal(ln_plan_make(&c, LN_BACKWARD, 40, 24, &plan, err, sizeof err), 0);
        assert_int_equal(ln_plan_bind(&fake, &plan, FAKE_MODULE, NULL), CUDA_SUCCESS);
        ncalls = 0;
        ln_problem p = sample_problem(split_cases[i].batch, split_cases[i].heads);
        block_is_backward = 1;
        CUstream stream = (CUstream)0x77;
        assert_int_equal(ln_launch(&fake, &plan, &p, stream), CUDA_SUCCESS);
        assert_false(overflow);
        /* DQ_MODE 0: the accumulator of the whole batch and the dQ order area after it (a ticket
         * per batch, ceil(40 / 16) semaphores per head) are zeroed once, before any launch. */
        const size_t accum_bytes = (size_t)p.batch * p.heads * 40 * 64 * 4;
        assert_string_equal(calls[0].what, "memset");
        assert_int_equal(calls[0].ptr, p.dq_accum);
        assert_int_equal(calls[0].bytes, accum_bytes + ((size_t)p.batch + (size_t)p.batch * p.heads * 3) * 4);
        assert_ptr_equal(calls[0].stream, stream);
        int slices = (ncalls - 1) / plan.count;
        const int want = split_cases[i].batch * split_cases[i].heads > 65535 ? split_cases[i].slices : 1;
        if (slices != want || (ncalls - 1) % plan.count)
            fail_msg("split case %d: %d calls for %d steps, expected %d slices", i, ncalls, plan.count, want);
        long long next = 0;   /* the first batch the next slice must start at */
        for (int s = 0; s < slices; s++) {
            for (int k = 0; k < plan.count; k++) {
                const call *l = &calls[1 + s * plan.count + k];
                assert_string_equal(l->what, "launch");
                assert_string_equal(l->name, plan.steps[k].entry->name);
                assert_int_equal(l->gx, plan.steps[k].grid_x);
                assert_int_equal(l->bx, plan.steps[k].block_x);
                assert_int_equal(l->smem, plan.steps[k].smem);
                assert_int_equal(l->gz, 1);
                assert_int_equal(l->by, 1);
                assert_int_equal(l->bz, 1);
                assert_ptr_equal(l->stream, stream);
                assert_true(l->gy >= 1 && l->gy <= 65535);
                assert_int_equal(l->gy, (unsigned)(l->bwd.batch * p.heads));
                /* The slice's block: batch b0 = next, every pointer moved there. */
                const ft_bwd_args *a = &l->bwd;
                const long long rows = next * p.heads * 40;
                assert_int_equal(addr(a->q), p.q + next * p.q_stride[0] * 2);
                assert_int_equal(addr(a->dout), p.dout + next * p.o_stride[0] * 2);
                assert_int_equal(addr(a->dv), p.dv + next * p.v_stride[0] * 2);
                assert_int_equal(addr(a->lse), p.lse + rows * 4);
                assert_int_equal(addr(a->delta), p.delta + rows * 4);
                assert_int_equal(addr(a->dq_accum), p.dq_accum + rows * 64 * 4);
                /* The slice's ticket and semaphores: its first batch's. */
                assert_int_equal(addr(a->dq_ticket), p.dq_accum + accum_bytes + next * 4);
                assert_int_equal(addr(a->dq_sems), p.dq_accum + accum_bytes + (p.batch + next * p.heads * 3) * 4);
                if (k > 0)   /* every step of a slice takes the same block */
                    assert_memory_equal(a, &calls[1 + s * plan.count].bwd, sizeof *a);
            }
            next += calls[1 + s * plan.count].bwd.batch;
        }
        assert_int_equal(next, split_cases[i].batch);   /* every batch exactly once */
    }
}

static void launch_rejects_what_cannot_run(void **state)
{
    (void)state;
    const gen_config c = sample_config("fwd_mma", 2, 0);
    ln_plan plan;
    char err[256];
    assert_int_equal(ln_plan_make(&c, LN_FORWARD, 40, 24, &plan, err, sizeof err), 0);
    ln_problem p = sample_problem(2, 65536);
    assert_int_equal(ln_launch(&fake, &plan, &p, NULL), CUDA_ERROR_INVALID_VALUE);   /* heads alone > grid.y */
    p = sample_problem(2, 0);
    assert_int_equal(ln_launch(&fake, &plan, &p, NULL), CUDA_ERROR_INVALID_VALUE);
    p = sample_problem(0, 2);
    assert_int_equal(ln_launch(&fake, &plan, &p, NULL), CUDA_ERROR_INVALID_VALUE);
    p = sample_problem(2, 2);
    p.seqlen_k = 25;   /* not the lengths the plan's grids are for */
    assert_int_equal(ln_launch(&fake, &plan, &p, NULL), CUDA_ERROR_INVALID_VALUE);
    assert_int_equal(ncalls, 0);
    /* The first failing launch stops the rest and is returned. */
    const gen_config b = sample_config("bwd_mma", 2, 1);
    assert_int_equal(ln_plan_make(&b, LN_BACKWARD, 40, 24, &plan, err, sizeof err), 0);
    assert_int_equal(ln_plan_bind(&fake, &plan, FAKE_MODULE, NULL), CUDA_SUCCESS);
    ncalls = 0;
    p = sample_problem(2, 2);
    block_is_backward = 1;
    fail_launch_index = 1;
    fail_launch_at_call = CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
    assert_int_equal(ln_launch(&fake, &plan, &p, NULL), CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
    assert_int_equal(count_calls("launch"), 2);
    assert_int_equal(count_calls("memset"), 0);   /* DQ_MODE 1 has no accumulator */
    assert_null(calls[0].bwd.dq_accum);
}

/* Grouped K/V heads and a softcap reach the argument blocks; a key-major step (a dK/dV step)
 * runs over the K/V heads, the others over the query heads; a family that does not take a
 * feature refuses the problem before launching anything, as does a heads_k not dividing heads. */
static void grouped_heads_and_softcap_launch(void **state)
{
    (void)state;
    ln_problem p = sample_problem(3, 6);
    p.heads_k = 2;
    p.softcap = 1.5;
    ft_bwd_args a;
    ln_bwd_args(&p, 0, 0, 3, &a);
    assert_int_equal(a.heads, 6);
    assert_int_equal(a.heads_k, 2);
    assert_true(a.softcap == 1.5);
    const gen_config r = sample_config("ref", 1, 0);
    ln_plan plan;
    char err[256];
    assert_int_equal(ln_plan_make(&r, LN_BACKWARD, 40, 24, &plan, err, sizeof err), 0);
    assert_int_equal(ln_plan_bind(&fake, &plan, FAKE_MODULE, NULL), CUDA_SUCCESS);
    ncalls = 0;
    block_is_backward = 1;
    assert_int_equal(ln_launch(&fake, &plan, &p, NULL), CUDA_SUCCESS);
    assert_int_equal(ncalls, plan.count);
    for (int i = 0; i < ncalls; i++) {
        const int key_major = !strcmp(calls[i].name, "ft_ref_bwd_dkdv");
        assert_int_equal(calls[i].gy, key_major ? 3 * 2 : 3 * 6);
        assert_int_equal(calls[i].bwd.heads_k, 2);
        assert_true(calls[i].bwd.softcap == 1.5);
    }
    /* 4 K/V heads do not divide 6 query heads, even for the reference. */
    p.heads_k = 4;
    ncalls = 0;
    assert_int_equal(ln_launch(&fake, &plan, &p, NULL), CUDA_ERROR_INVALID_VALUE);
    /* A fused backward takes grouped heads (its dK/dV step over the K/V heads); compiled without
     * the softcap (SOFTCAP 0) it refuses one, alone or with grouping. */
    gen_config m = sample_config("bwd_mma", 2, 1);
    assert_int_equal(ln_plan_make(&m, LN_BACKWARD, 40, 24, &plan, err, sizeof err), 0);
    assert_int_equal(ln_plan_bind(&fake, &plan, FAKE_MODULE, NULL), CUDA_SUCCESS);
    ncalls = 0;
    p.heads_k = 0;
    p.softcap = 1.5;
    assert_int_equal(ln_launch(&fake, &plan, &p, NULL), CUDA_ERROR_INVALID_VALUE);
    p.heads_k = 2;
    assert_int_equal(ln_launch(&fake, &plan, &p, NULL), CUDA_ERROR_INVALID_VALUE);
    assert_int_equal(ncalls, 0);
    p.softcap = 0;
    assert_int_equal(ln_launch(&fake, &plan, &p, NULL), CUDA_SUCCESS);
    assert_int_equal(ncalls, plan.count);
    for (int i = 0; i < ncalls; i++)
        assert_int_equal(calls[i].gy, !strcmp(calls[i].name, "ft_bwd_dkdv") ? 3 * 2 : 3 * 6);
    ncalls = 0;
    p.heads_k = 6;   /* heads_k = heads is no grouping */
    assert_int_equal(ln_launch(&fake, &plan, &p, NULL), CUDA_SUCCESS);
    for (int i = 0; i < ncalls; i++)
        assert_int_equal(calls[i].gy, 3 * 6);
    /* Compiled with it (SOFTCAP 1), the same family takes a softcap and refuses a problem without. */
    m.p[GEN_SOFTCAP] = 1;
    assert_int_equal(ln_plan_make(&m, LN_BACKWARD, 40, 24, &plan, err, sizeof err), 0);
    assert_int_equal(ln_plan_bind(&fake, &plan, FAKE_MODULE, NULL), CUDA_SUCCESS);
    ncalls = 0;
    assert_int_equal(ln_launch(&fake, &plan, &p, NULL), CUDA_ERROR_INVALID_VALUE);
    assert_int_equal(ncalls, 0);
    p.softcap = 30;
    p.heads_k = 2;
    assert_int_equal(ln_launch(&fake, &plan, &p, NULL), CUDA_SUCCESS);
    assert_int_equal(ncalls, plan.count);
    for (int i = 0; i < ncalls; i++)
        assert_true(calls[i].bwd.softcap == 30);
}

/* A head dim the runtime does not compile runs padded: ln_padded_head_dim names the compiled one,
 * the workspace's dQ accumulator is that wide, a plan records the data's dims its kernels were
 * compiled for (DATA_DIM) and launches nothing for other dims. */
static void padded_head_dims_launch(void **state)
{
    (void)state;
    const int dims[][2] = { { 1, 32 }, { 16, 32 }, { 32, 32 }, { 33, 64 }, { 40, 64 }, { 80, 96 },
                            { 129, 192 }, { 200, 256 }, { 256, 256 }, { 300, 300 } };
    for (int i = 0; i < ARRAY_LEN(dims); i++)
        assert_int_equal(ln_padded_head_dim(dims[i][0]), dims[i][1]);
    assert_int_equal(ln_workspace_bytes(1, 3, 5, 40, 0, 40, NULL), ln_workspace_bytes(1, 3, 5, 40, 0, 64, NULL));

    gen_config c = sample_config("bwd_mma", 2, 0);   /* DQ_MODE atomic: an accumulator */
    c.p[GEN_DATA_DIM] = 40;
    c.p[GEN_DATA_DIM_V] = 24;
    ln_plan plan;
    char err[256];
    assert_int_equal(ln_plan_make(&c, LN_BACKWARD, 40, 24, &plan, err, sizeof err), 0);
    assert_int_equal(plan.head_dim, 40);
    assert_int_equal(plan.head_dim_v, 24);
    assert_int_equal(plan.accum_cols, 64);
    assert_int_equal(ln_plan_bind(&fake, &plan, FAKE_MODULE, NULL), CUDA_SUCCESS);
    ln_problem p = sample_problem(3, 5);
    block_is_backward = 1;
    ncalls = 0;
    assert_int_equal(ln_launch(&fake, &plan, &p, NULL), CUDA_ERROR_INVALID_VALUE);   /* 64, 32: not the data's */
    assert_int_equal(ncalls, 0);
    p.head_dim = 40;
    assert_int_equal(ln_launch(&fake, &plan, &p, NULL), CUDA_ERROR_INVALID_VALUE);   /* 40, 32 */
    p.head_dim_v = 24;
    assert_int_equal(ln_launch(&fake, &plan, &p, NULL), CUDA_SUCCESS);
    assert_string_equal(calls[0].what, "memset");   /* the accumulator, 64 columns wide, and the order area */
    assert_int_equal(calls[0].bytes, (size_t)3 * 5 * 40 * 64 * 4 + ((size_t)3 + (size_t)3 * 5 * 3) * 4);
    assert_int_equal(ncalls, 1 + plan.count);
    /* Without DATA_DIM the plan takes the compiled dims. */
    c.p[GEN_DATA_DIM] = c.p[GEN_DATA_DIM_V] = 0;
    assert_int_equal(ln_plan_make(&c, LN_BACKWARD, 40, 24, &plan, err, sizeof err), 0);
    assert_int_equal(plan.head_dim, 64);
    assert_int_equal(plan.head_dim_v, 32);
}

static void forward_launch_takes_the_forward_block(void **state)
{
    (void)state;
    const gen_config c = sample_config("ref", 1, 0);
    ln_plan plan;
    char err[256];
    assert_int_equal(ln_plan_make(&c, LN_FORWARD, 40, 24, &plan, err, sizeof err), 0);
    assert_int_equal(ln_plan_bind(&fake, &plan, FAKE_MODULE, NULL), CUDA_SUCCESS);
    ncalls = 0;
    ln_problem p = sample_problem(3, 5);
    block_is_backward = 0;
    assert_int_equal(ln_launch(&fake, &plan, &p, NULL), CUDA_SUCCESS);
    assert_int_equal(ncalls, 1);
    assert_string_equal(calls[0].name, "ft_ref_fwd");
    assert_int_equal(calls[0].gx, 10);
    assert_int_equal(calls[0].gy, 15);
    assert_int_equal(calls[0].bx, 128);
    ft_fwd_args want;
    ln_fwd_args(&p, 1, 0, 0, 3, &want);
    assert_memory_equal(&calls[0].fwd, &want, sizeof want);
}

/* A forward whose keys SPLITS blocks share: its main step takes SPLITS blocks a query tile, with
 * PACK_GQA over the packed rows of a group (seqlen_q * heads / heads_k) and the K/V heads; the
 * combine step runs over the query heads; the partials lie in the forward's workspace (the
 * layout of ln_fwd_workspace_bytes) and move with a batch slice as lse does; without a workspace
 * as large as that, nothing launches. */
static void split_forward_launch(void **state)
{
    (void)state;
    gen_config c = sample_config("fwd_mma", 1, 0);
    c.p[GEN_BLOCK_M] = 16;
    c.p[GEN_NUM_WARPS] = 1;
    c.p[GEN_SPLITS] = 6;
    c.p[GEN_PACK_GQA] = 1;
    ln_plan plan;
    char err[256];
    assert_int_equal(ln_plan_make(&c, LN_FORWARD, 40, 24, &plan, err, sizeof err), 0);
    assert_int_equal(plan.count, 2);
    assert_int_equal(plan.splits, 6);
    assert_int_equal(plan.part_cols, 32);
    assert_int_equal(plan.steps[0].splits, 6);
    assert_int_equal(plan.steps[0].pack_rows, 16);
    assert_int_equal(plan.steps[1].splits, 1);
    assert_int_equal(plan.steps[1].pack_rows, 0);
    assert_int_equal(plan.steps[1].grid_x, 3);   /* ceil(40 / 16) query tiles of a head */
    assert_int_equal(ln_plan_bind(&fake, &plan, FAKE_MODULE, NULL), CUDA_SUCCESS);

    ln_problem p = sample_problem(3, 6);
    p.heads_k = 2;   /* groups of 3: 120 packed rows a K/V head, 8 tiles of 16 */
    const size_t rows = 3 * 6 * 40;
    size_t lse_offset;
    const size_t bytes = ln_fwd_workspace_bytes(6, rows, 32, &lse_offset);
    assert_int_equal(lse_offset, (6 * rows * 32 * 4 + 255) / 256 * 256);
    assert_int_equal(bytes, lse_offset + 6 * rows * 4);
    assert_int_equal(ln_fwd_workspace_bytes(1, rows, 32, NULL), 0);
    ncalls = 0;
    block_is_backward = 0;
    assert_int_equal(ln_launch(&fake, &plan, &p, NULL), CUDA_ERROR_INVALID_VALUE);   /* no workspace */
    p.split_ws = 0xc0000000;
    p.split_ws_bytes = bytes - 1;
    assert_int_equal(ln_launch(&fake, &plan, &p, NULL), CUDA_ERROR_INVALID_VALUE);
    assert_int_equal(ncalls, 0);
    p.split_ws_bytes = bytes;
    assert_int_equal(ln_launch(&fake, &plan, &p, NULL), CUDA_SUCCESS);
    assert_int_equal(ncalls, 2);
    assert_string_equal(calls[0].name, "ft_fwd");
    assert_int_equal(calls[0].gx, 8 * 6);
    assert_int_equal(calls[0].gy, 3 * 2);
    assert_int_equal(calls[0].bx, 32);
    assert_string_equal(calls[1].name, "ft_fwd_combine");
    assert_int_equal(calls[1].gx, 3);
    assert_int_equal(calls[1].gy, 3 * 6);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(addr(calls[i].fwd.o_part), 0xc0000000);
        assert_int_equal(addr(calls[i].fwd.lse_part), 0xc0000000 + lse_offset);
        assert_int_equal(calls[i].fwd.part_rows, rows);
    }
    /* Batches 2.. of the problem: their partial rows, in every split's block of all the rows. */
    ft_fwd_args a;
    ln_fwd_args(&p, 6, 32, 2, 1, &a);
    assert_int_equal(addr(a.o_part), 0xc0000000 + 2 * 6 * 40 * 32 * 4);
    assert_int_equal(addr(a.lse_part), 0xc0000000 + lse_offset + 2 * 6 * 40 * 4);
    assert_int_equal(a.part_rows, rows);
    /* One split: no combine step, no partials, no workspace. */
    c.p[GEN_SPLITS] = 1;
    assert_int_equal(ln_plan_make(&c, LN_FORWARD, 40, 24, &plan, err, sizeof err), 0);
    assert_int_equal(plan.count, 1);
    assert_int_equal(plan.splits, 1);
    ln_fwd_args(&p, 1, 32, 0, 3, &a);
    assert_null(a.o_part);
    assert_null(a.lse_part);
}

/* A backward whose groups' query heads SPLITS blocks share: its dK/dV step takes SPLITS blocks a
 * key tile, the reduce step one, both over the K/V heads; the partial dK and dV lie in the split
 * workspace (ln_bwd_split_bytes) and move with a batch slice; a group SPLITS does not divide, or
 * too small a workspace, launches nothing. */
static void split_backward_launch(void **state)
{
    (void)state;
    gen_config c = sample_config("bwd_wgmma", 1, 0);
    c.p[GEN_BLOCK_N] = 64;
    c.p[GEN_SPLITS] = 2;
    ln_plan plan;
    char err[256];
    assert_int_equal(ln_plan_make(&c, LN_BACKWARD, 40, 24, &plan, err, sizeof err), 0);
    assert_int_equal(plan.splits, 2);
    assert_int_equal(plan.count, 4);
    assert_string_equal(plan.steps[1].entry->name, "ft_bwd_dkdv");
    assert_int_equal(plan.steps[1].grid_x, 2);   /* one key tile of 64, two blocks */
    assert_string_equal(plan.steps[2].entry->name, "ft_bwd_dkdv_reduce");
    assert_int_equal(plan.steps[2].grid_x, 1);
    assert_int_equal(ln_plan_bind(&fake, &plan, FAKE_MODULE, NULL), CUDA_SUCCESS);

    ln_problem p = sample_problem(3, 6);
    p.heads_k = 3;   /* groups of 2 */
    const size_t rows = 3 * 3 * 24;
    size_t dv_offset;
    const size_t bytes = ln_bwd_split_bytes(2, rows, 64, 32, &dv_offset);
    assert_int_equal(dv_offset, (2 * rows * 64 * 4 + 255) / 256 * 256);
    assert_int_equal(bytes, dv_offset + 2 * rows * 32 * 4);
    assert_int_equal(ln_split_workspace_bytes(&plan, &p), bytes);
    ncalls = 0;
    block_is_backward = 1;
    assert_int_equal(ln_launch(&fake, &plan, &p, NULL), CUDA_ERROR_INVALID_VALUE);   /* no workspace */
    p.split_ws = 0xc0000000;
    p.split_ws_bytes = bytes - 1;
    assert_int_equal(ln_launch(&fake, &plan, &p, NULL), CUDA_ERROR_INVALID_VALUE);
    p.split_ws_bytes = bytes;
    p.heads_k = 2;   /* groups of 3: 2 does not divide them */
    assert_int_equal(ln_launch(&fake, &plan, &p, NULL), CUDA_ERROR_INVALID_VALUE);
    assert_int_equal(ncalls, 0);
    p.heads_k = 3;
    assert_int_equal(ln_launch(&fake, &plan, &p, NULL), CUDA_SUCCESS);
    assert_int_equal(count_calls("launch"), 4);
    for (int i = 0; i < ncalls; i++) {
        if (strcmp(calls[i].what, "launch"))
            continue;
        if (!strcmp(calls[i].name, "ft_bwd_dkdv") || !strcmp(calls[i].name, "ft_bwd_dkdv_reduce")) {
            assert_int_equal(calls[i].gx, !strcmp(calls[i].name, "ft_bwd_dkdv") ? 2 : 1);
            assert_int_equal(calls[i].gy, 3 * 3);
        }
        assert_int_equal(addr(calls[i].bwd.dk_part), 0xc0000000);
        assert_int_equal(addr(calls[i].bwd.dv_part), 0xc0000000 + dv_offset);
        assert_int_equal(calls[i].bwd.part_rows, rows);
    }
    ft_bwd_args a;
    ln_bwd_args(&p, 0, 1, 2, &a);
    ln_bwd_split_args(&p, 2, 64, 32, 1, &a);
    assert_int_equal(addr(a.dk_part), 0xc0000000 + 1 * 3 * 24 * 64 * 4);
    assert_int_equal(addr(a.dv_part), 0xc0000000 + dv_offset + 1 * 3 * 24 * 32 * 4);
    ln_bwd_split_args(&p, 1, 64, 32, 0, &a);   /* one share: nothing changes */
    assert_int_equal(addr(a.dk_part), 0xc0000000 + 1 * 3 * 24 * 64 * 4);
}

/* ---- the tuner's utilities ----------------------------------------------------------------- */

static CUresult launch_params(CUfunction fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                              unsigned bz, unsigned smem, CUstream stream, void **params, void **extra)
{
    CUresult rc = fake_launch(fn, gx, gy, gz, bx, by, bz, smem, stream, params, extra);
    call *c = &calls[ncalls - 1];
    if (!strcmp(c->name, "ft_ref_fill_normal")) {
        memcpy(c->raw, params[0], 8);
        memcpy(c->raw + 8, params[1], 8);
        memcpy(c->raw + 16, params[2], 8);
    } else {
        memcpy(c->raw, params[0], 8);
        memcpy(c->raw + 8, params[1], 8);
        memcpy(c->raw + 16, params[2], 8);
        memcpy(c->raw + 24, params[3], 4);
        memcpy(c->raw + 28, params[4], 8);
    }
    return rc;
}

static void utilities_launch_grid_stride(void **state)
{
    (void)state;
    cu_driver d = fake;
    d.LaunchKernel = launch_params;
    block_is_backward = -1;
    for (int sm = 0; sm <= 132; sm += 132) {
        reset(state);
        block_is_backward = -1;
        ln_utilities u;
        assert_int_equal(ln_utilities_load(&d, FAKE_MODULE, sm, &u), CUDA_SUCCESS);
        assert_int_equal(ln_fill_normal(&d, &u, 0x1234, 1000, 99, (CUstream)0x5), CUDA_SUCCESS);
        assert_int_equal(ln_compare(&d, &u, 0x1000, 0x2000, 777, 1, 0x3000, (CUstream)0x5), CUDA_SUCCESS);
        const call *fill = &calls[2], *cmp = &calls[3];
        assert_string_equal(fill->name, "ft_ref_fill_normal");
        assert_string_equal(cmp->name, "ft_ref_compare");
        const unsigned blocks = sm ? 132 * 8 : 1024;
        for (const call *l = fill; l <= cmp; l++) {
            assert_int_equal(l->gx, blocks);
            assert_int_equal(l->gy, 1);
            assert_int_equal(l->bx, 256);
            assert_int_equal(l->smem, 0);
            assert_ptr_equal(l->stream, (CUstream)0x5);
        }
        CUdeviceptr dst, got, want, stats;
        long long n;
        unsigned long long seed;
        int acc;
        memcpy(&dst, fill->raw, 8), memcpy(&n, fill->raw + 8, 8), memcpy(&seed, fill->raw + 16, 8);
        assert_int_equal(dst, 0x1234);
        assert_int_equal(n, 1000);
        assert_int_equal(seed, 99);
        memcpy(&got, cmp->raw, 8), memcpy(&want, cmp->raw + 8, 8), memcpy(&n, cmp->raw + 16, 8);
        memcpy(&acc, cmp->raw + 24, 4), memcpy(&stats, cmp->raw + 28, 8);
        assert_int_equal(got, 0x1000);
        assert_int_equal(want, 0x2000);
        assert_int_equal(n, 777);
        assert_int_equal(acc, 1);
        assert_int_equal(stats, 0x3000);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(entry_dims_follow_the_contract, reset),
        cmocka_unit_test_setup(cluster_grids_round_up, reset),
        cmocka_unit_test_setup(cluster_plans_launch_whole_clusters, reset),
        cmocka_unit_test_setup(steps_follow_each_family, reset),
        cmocka_unit_test_setup(every_family_has_its_steps, reset),
        cmocka_unit_test_setup(module_load_opts_in_once, reset),
        cmocka_unit_test_setup(module_load_failure_names_the_call, reset),
        cmocka_unit_test_setup(workspace_layout, reset),
        cmocka_unit_test_setup(forward_args_from_a_problem, reset),
        cmocka_unit_test_setup(backward_args_from_a_problem, reset),
        cmocka_unit_test_setup(tensor_maps_describe_the_slice, reset),
        cmocka_unit_test_setup(hopper_backward_key_maps, reset),
        cmocka_unit_test_setup(hopper_forward_maps_and_persistent_grid, reset),
        cmocka_unit_test_setup(narrow_panels_encode_64_byte_boxes, reset),
        cmocka_unit_test_setup(hopper_backward_persistent_grid, reset),
        cmocka_unit_test_setup(stored_first_share_zeroes_only_the_order_area, reset),
        cmocka_unit_test_setup(sinks_reach_the_reference_and_nothing_else, reset),
        cmocka_unit_test_setup(batches_split_under_the_grid_limit, reset),
        cmocka_unit_test_setup(launch_rejects_what_cannot_run, reset),
        cmocka_unit_test_setup(grouped_heads_and_softcap_launch, reset),
        cmocka_unit_test_setup(padded_head_dims_launch, reset),
        cmocka_unit_test_setup(forward_launch_takes_the_forward_block, reset),
        cmocka_unit_test_setup(split_forward_launch, reset),
        cmocka_unit_test_setup(split_backward_launch, reset),
        cmocka_unit_test_setup(utilities_launch_grid_stride, reset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
