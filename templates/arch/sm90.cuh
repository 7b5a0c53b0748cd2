// sm90.cuh: Hopper's warpgroup tensor cores for the sm_90a families: shared-memory matrix
// descriptors, wgmma.mma_async wrappers (16-bit: SS at N = 32 and 64 to 192 in steps of 16, the
// widths of score tiles; RS at 64, 96, 128 and 192, head dims; in f32 the same in bfloat16, for
// its parts; f32 as TF32: SS at 32 to 128 in steps of 32, RS at 64, 96 and 128), the fences and
// waits around them, the 128-byte-swizzled panel layout the descriptors read (with its cp.async
// loader), and the copy engine's bulk reduction into global memory. A family that includes this part must name target_arch "sm_90a" (wgmma
// does not assemble elsewhere).
#if DTYPE == FT_DTYPE_F16 || DTYPE == FT_DTYPE_BF16 || DTYPE == FT_DTYPE_F32
#if DTYPE == FT_DTYPE_BF16 || DTYPE == FT_DTYPE_F32   // f32: its bfloat16 parts (BF16_PARTS)
#define FT_WG_TYPES ".f32.bf16.bf16"
#else
#define FT_WG_TYPES ".f32.f16.f16"
#endif
#define FT_WG_ACC_16 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15}"
#define FT_WG_ACC_32 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}"
#define FT_WG_ACC_40 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39}"
#define FT_WG_ACC_48 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47}"
#define FT_WG_ACC_56 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55}"
#define FT_WG_ACC_64 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}"
#define FT_WG_ACC_72 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,%64,%65,%66,%67,%68,%69,%70,%71}"
#define FT_WG_ACC_80 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79}"
#define FT_WG_ACC_88 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,%80,%81,%82,%83,%84,%85,%86,%87}"
#define FT_WG_ACC_96 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95}"
#define FT_ACC8(d, i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), \
                      "+f"(d[i + 4]), "+f"(d[i + 5]), "+f"(d[i + 6]), "+f"(d[i + 7])
#define FT_ACC16(d, i) FT_ACC8(d, i), FT_ACC8(d, i + 8)
#define FT_ACC32(d, i) FT_ACC16(d, i), FT_ACC16(d, i + 16)
#define FT_ACC40(d, i) FT_ACC32(d, i), FT_ACC8(d, i + 32)
#define FT_ACC48(d, i) FT_ACC32(d, i), FT_ACC16(d, i + 32)
#define FT_ACC64(d, i) FT_ACC32(d, i), FT_ACC32(d, i + 32)
#define FT_ACC56(d, i) FT_ACC48(d, i), FT_ACC8(d, i + 48)
#define FT_ACC72(d, i) FT_ACC64(d, i), FT_ACC8(d, i + 64)
#define FT_ACC80(d, i) FT_ACC64(d, i), FT_ACC16(d, i + 64)
#define FT_ACC88(d, i) FT_ACC80(d, i), FT_ACC8(d, i + 80)
#define FT_ACC96(d, i) FT_ACC64(d, i), FT_ACC32(d, i + 64)

// A shared-memory matrix descriptor: start address, leading and stride byte offsets, and the
// swizzle of ROW-byte rows in bits 62-63 (128 bytes: mode 1; 64 bytes: mode 2). Addresses and
// offsets are stored divided by 16.
template <int ROW = 128>
FT_DEVICE unsigned long long wg_desc(unsigned addr, unsigned lbo, unsigned sbo)
{
    static_assert(ROW == 128 || ROW == 64, "wg_desc: 128- or 64-byte swizzled rows");
    constexpr unsigned long long mode = ROW == 128 ? 1ull : 2ull;
    return (unsigned long long)((addr & 0x3FFFF) >> 4) | ((unsigned long long)(lbo >> 4) << 16) |
           ((unsigned long long)(sbo >> 4) << 32) | (mode << 62);
}

// The descriptor of the matrix `bytes` past the one desc describes (bytes a compile-time constant
// in the callers): a shared-memory window address stays below 256 KB, so the start-address field
// never carries into the next. A k-loop's descriptors are then one base and an immediate add each,
// where wg_desc per step cost masks and shifts on every operand.
// WIDE (the default): one 64-bit add (UIADD3.64); adding to the low word alone and keeping the
// high word made ptxas rebuild the high word before every wgmma (a UMOV each; notes/kernels.md).
// Not WIDE: the low word alone, where the 64-bit values cost registers a kernel lacks
// (bwd_wgmma's columns split between consumers spilled 8-24 bytes with them).
template <bool WIDE = true>
FT_DEVICE unsigned long long wg_desc_add(unsigned long long desc, unsigned bytes)
{
    if constexpr (WIDE)
        return desc + (bytes >> 4);
    else
        return (desc & 0xFFFFFFFF00000000ull) | (unsigned)((unsigned)desc + (bytes >> 4));
}

// D (64xN, f32) (+)= A (64x16, shared; K-major, or M-major when TRANS_A) * B (16xN, shared;
// K-major, or N-major when TRANS_B). accumulate = 0 overwrites D. The operand numbers after the
// R accumulators are passed as literals (OA, OB: descriptors; OF: the accumulate flag; OT:
// TRANS_B; OTA: TRANS_A).
template <int N, int TRANS_B, int TRANS_A = 0> struct wg_ss;
template <int N, int TRANS_B> struct wg_rs;
#define FT_WG_SS(N, R, LIST, ACC, OA, OB, OF, OT, OTA)                                           \
    template <int TRANS_B, int TRANS_A> struct wg_ss<N, TRANS_B, TRANS_A> {                     \
        static FT_DEVICE void run(float (&d)[R], unsigned long long a, unsigned long long b,     \
                                  int accumulate)                                                \
        {                                                                                        \
            asm volatile("{ .reg .pred p; setp.ne.b32 p, " OF ", 0;\n"                            \
                         "wgmma.mma_async.sync.aligned.m64n" #N "k16" FT_WG_TYPES " " LIST ", "  \
                         OA ", " OB ", p, 1, 1, " OTA ", " OT "; }"                               \
                         : ACC(d, 0)                                                              \
                         : "l"(a), "l"(b), "r"(accumulate), "n"(TRANS_B), "n"(TRANS_A));         \
        }                                                                                        \
    };
// The same with A (64x16) from registers, in the layout of a 64x16 accumulator tile packed
// to 16-bit pairs: a[0] row g cols 2q, 2q+1; a[1] row g+8; a[2] cols +8; a[3] both (g: lane/4
// plus 16 per warp, q: lane%4). OA0..OA3: A registers; OB, OF, OT as above.
#define FT_WG_RS(N, R, LIST, ACC, OA0, OA1, OA2, OA3, OB, OF, OT)                                \
    template <int TRANS_B> struct wg_rs<N, TRANS_B> {                                           \
        static FT_DEVICE void run(float (&d)[R], const unsigned (&a)[4], unsigned long long b,   \
                                  int accumulate)                                                \
        {                                                                                        \
            asm volatile("{ .reg .pred p; setp.ne.b32 p, " OF ", 0;\n"                            \
                         "wgmma.mma_async.sync.aligned.m64n" #N "k16" FT_WG_TYPES " " LIST ", {"  \
                         OA0 "," OA1 "," OA2 "," OA3 "}, " OB ", p, 1, 1, " OT "; }"              \
                         : ACC(d, 0)                                                              \
                         : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(accumulate),   \
                           "n"(TRANS_B));                                                         \
        }                                                                                        \
    };
FT_WG_SS(32, 16, FT_WG_ACC_16, FT_ACC16, "%16", "%17", "%18", "%19", "%20")
FT_WG_SS(64, 32, FT_WG_ACC_32, FT_ACC32, "%32", "%33", "%34", "%35", "%36")
FT_WG_SS(80, 40, FT_WG_ACC_40, FT_ACC40, "%40", "%41", "%42", "%43", "%44")
FT_WG_SS(96, 48, FT_WG_ACC_48, FT_ACC48, "%48", "%49", "%50", "%51", "%52")
FT_WG_SS(112, 56, FT_WG_ACC_56, FT_ACC56, "%56", "%57", "%58", "%59", "%60")
FT_WG_SS(128, 64, FT_WG_ACC_64, FT_ACC64, "%64", "%65", "%66", "%67", "%68")
FT_WG_SS(144, 72, FT_WG_ACC_72, FT_ACC72, "%72", "%73", "%74", "%75", "%76")
FT_WG_SS(160, 80, FT_WG_ACC_80, FT_ACC80, "%80", "%81", "%82", "%83", "%84")
FT_WG_SS(176, 88, FT_WG_ACC_88, FT_ACC88, "%88", "%89", "%90", "%91", "%92")
FT_WG_SS(192, 96, FT_WG_ACC_96, FT_ACC96, "%96", "%97", "%98", "%99", "%100")
FT_WG_RS(64, 32, FT_WG_ACC_32, FT_ACC32, "%32", "%33", "%34", "%35", "%36", "%37", "%38")
FT_WG_RS(96, 48, FT_WG_ACC_48, FT_ACC48, "%48", "%49", "%50", "%51", "%52", "%53", "%54")
FT_WG_RS(128, 64, FT_WG_ACC_64, FT_ACC64, "%64", "%65", "%66", "%67", "%68", "%69", "%70")
FT_WG_RS(192, 96, FT_WG_ACC_96, FT_ACC96, "%96", "%97", "%98", "%99", "%100", "%101", "%102")
#if DTYPE == FT_DTYPE_F32
// ---- f32 on TF32 tensor cores: k-steps of 8 floats (32 bytes, as a 16-bit k-step), both
// operands K-major (the .tf32 forms take no transpose). D (64xN, f32) (+)= A (64x8) * B (8xN),
// A from shared memory (wg_ss_tf32) or registers (wg_rs_tf32: a[0] row g col q, a[1] row g+8,
// a[2] col q+4, a[3] both; g: lane/4 plus 16 per warp, q: lane%4), B from shared memory; the
// operands' low 13 bits are ignored (callers pass parts already rounded to TF32).
template <int N> struct wg_ss_tf32;
template <int N> struct wg_rs_tf32;
#define FT_WG_SS_TF32(N, R, LIST, ACC, OA, OB, OF)                                               \
    template <> struct wg_ss_tf32<N> {                                                          \
        static FT_DEVICE void run(float (&d)[R], unsigned long long a, unsigned long long b,     \
                                  int accumulate)                                                \
        {                                                                                        \
            asm volatile("{ .reg .pred p; setp.ne.b32 p, " OF ", 0;\n"                           \
                         "wgmma.mma_async.sync.aligned.m64n" #N "k8.f32.tf32.tf32 " LIST ", "     \
                         OA ", " OB ", p, 1, 1; }"                                                \
                         : ACC(d, 0)                                                              \
                         : "l"(a), "l"(b), "r"(accumulate));                                      \
        }                                                                                        \
    };
#define FT_WG_RS_TF32(N, R, LIST, ACC, OA0, OA1, OA2, OA3, OB, OF)                               \
    template <> struct wg_rs_tf32<N> {                                                          \
        static FT_DEVICE void run(float (&d)[R], const unsigned (&a)[4], unsigned long long b,   \
                                  int accumulate)                                                \
        {                                                                                        \
            asm volatile("{ .reg .pred p; setp.ne.b32 p, " OF ", 0;\n"                           \
                         "wgmma.mma_async.sync.aligned.m64n" #N "k8.f32.tf32.tf32 " LIST ", {"    \
                         OA0 "," OA1 "," OA2 "," OA3 "}, " OB ", p, 1, 1; }"                      \
                         : ACC(d, 0)                                                              \
                         : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(accumulate)); \
        }                                                                                        \
    };
FT_WG_SS_TF32(32, 16, FT_WG_ACC_16, FT_ACC16, "%16", "%17", "%18")
FT_WG_SS_TF32(64, 32, FT_WG_ACC_32, FT_ACC32, "%32", "%33", "%34")
FT_WG_SS_TF32(96, 48, FT_WG_ACC_48, FT_ACC48, "%48", "%49", "%50")
FT_WG_SS_TF32(128, 64, FT_WG_ACC_64, FT_ACC64, "%64", "%65", "%66")
FT_WG_RS_TF32(64, 32, FT_WG_ACC_32, FT_ACC32, "%32", "%33", "%34", "%35", "%36", "%37")
FT_WG_RS_TF32(96, 48, FT_WG_ACC_48, FT_ACC48, "%48", "%49", "%50", "%51", "%52", "%53")
FT_WG_RS_TF32(128, 64, FT_WG_ACC_64, FT_ACC64, "%64", "%65", "%66", "%67", "%68", "%69")
#endif

FT_DEVICE void wg_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
FT_DEVICE void wg_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
FT_DEVICE void wg_wait_all() { asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory"); }
// Waits until at most PENDING committed groups are still in flight (the older ones have landed).
template <int PENDING> FT_DEVICE void wg_wait()
{
    asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(PENDING) : "memory");
}
#if DTYPE != FT_DTYPE_F32
// A 64xN fp32 accumulator tile as the A registers of the next product (the RS form): its
// columns 16kk..16kk+15, packed to 16-bit pairs, are exactly the A operand of k-step kk.
template <int STEPS> FT_DEVICE void wg_acc_to_a(unsigned (&a)[STEPS][4], const float (&c)[STEPS * 8])
{
#pragma unroll
    for (int kk = 0; kk < STEPS; kk++) {
        a[kk][0] = pack2(c[kk * 8 + 0], c[kk * 8 + 1]);
        a[kk][1] = pack2(c[kk * 8 + 2], c[kk * 8 + 3]);
        a[kk][2] = pack2(c[kk * 8 + 4], c[kk * 8 + 5]);
        a[kk][3] = pack2(c[kk * 8 + 6], c[kk * 8 + 7]);
    }
}
#endif
// The compiler sees an accumulator as written when the wgmma is issued, not when it lands:
// pin each register behind the wait so no read of it moves above the wait.
template <int R> FT_DEVICE void wg_pin(float (&d)[R])
{
#pragma unroll
    for (int i = 0; i < R; i++)
        asm volatile("" : "+f"(d[i])::"memory");
}
// cp.async and plain stores write through the generic proxy; wgmma and the bulk copies read
// through the async proxy.
FT_DEVICE void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }
// The same for global memory: orders the copy engine's bulk reductions against this thread's
// plain loads and stores there (a semaphore's acquire before a reduce, a finished reduce before
// the release).
FT_DEVICE void fence_proxy_async_global() { asm volatile("fence.proxy.async.global;" ::: "memory"); }

// ---- warp specialization ----------------------------------------------------------------
// (Named barriers, which any warps of a block may meet at: arch/sm80.cuh.)
// Moves registers between warpgroups: every warp of a warpgroup executes one of these, the
// givers (dec) before the takers (inc) can proceed. The kernel needs __launch_bounds__ with a
// minimum of one block so ptxas knows the count at entry.
template <int REGS> FT_DEVICE void setmaxnreg_dec()
{
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(REGS));
}
template <int REGS> FT_DEVICE void setmaxnreg_inc()
{
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(REGS));
}

// ---- the copy engine (TMA) ------------------------------------------------------------------
// An mbarrier in shared memory (8 bytes) that completes a phase when `count` threads have
// arrived and every byte they announced has landed. Initialise before any use, then
// mbar_init_fence so the copy engine sees it, then a block barrier before others wait on it.
FT_DEVICE void mbar_init(unsigned bar, unsigned count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
FT_DEVICE void mbar_init_fence() { asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory"); }
// Arrives once and announces `bytes` more to land before the current phase completes.
FT_DEVICE void mbar_arrive_expect(unsigned bar, unsigned bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}
// Arrives once (release: this thread's writes before it are seen by whoever waits on the phase).
FT_DEVICE void mbar_arrive(unsigned bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}
// Waits until the phase of parity `parity` (0 for the first, 1 for the second, ...) completes.
FT_DEVICE void mbar_wait(unsigned bar, unsigned parity)
{
    asm volatile("{\n"
                 ".reg .pred done;\n"
                 "WAIT:\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
                 "@!done bra WAIT;\n"
                 "}\n" ::"r"(bar), "r"(parity) : "memory");
}
// Copies the box at (c0, c1, c2, c3) of the tensor `map` describes (a __grid_constant__ kernel
// argument) to dst, in the map's swizzle; the bytes complete on mbarrier `bar`.
FT_DEVICE void tma_load_4d(unsigned dst, const ft_tensor_map *map, unsigned bar, int c0, int c1, int c2, int c3)
{
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%3, %4, %5, %6}], [%2];"
                 ::"r"(dst), "l"((unsigned long long)map), "r"(bar), "r"(c0), "r"(c1), "r"(c2), "r"(c3) : "memory");
}

// The same box, written to dst in every block of the cluster whose bit is set in `blocks` (bit
// r: the block of rank r), each completing its bytes on its own mbarrier at `bar` (dst and bar
// are this block's addresses; each block has them at the same place).
FT_DEVICE void tma_load_4d_multicast(unsigned dst, const ft_tensor_map *map, unsigned bar, unsigned short blocks, int c0,
                                     int c1, int c2, int c3)
{
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
                 " [%0], [%1, {%4, %5, %6, %7}], [%2], %3;"
                 ::"r"(dst), "l"((unsigned long long)map), "r"(bar), "h"(blocks), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
                 : "memory");
}

// ---- clusters ------------------------------------------------------------------------------
// This block's rank in its cluster.
FT_DEVICE unsigned cluster_rank()
{
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}
// Arrives once on the mbarrier at `bar` (an address of this block's shared memory) in the
// cluster's block of rank `rank`. For giving back a ring slot the other block's copy engine will
// overwrite: what makes that safe is that this thread's reads of the slot are complete (it has
// waited for the products that read it), not the arrival's ordering, which is the default
// (release at the block's scope), as CUTLASS's cluster pipelines arrive. At the cluster's scope
// it compiled to a MEMBAR.ALL.GPU before each arrival and cost the forward 13-27 %
// (notes/kernels.md).
FT_DEVICE void mbar_arrive_cluster(unsigned bar, unsigned rank)
{
    asm volatile("{\n"
                 ".reg .b32 remote;\n"
                 "mapa.shared::cluster.u32 remote, %0, %1;\n"
                 "mbarrier.arrive.shared::cluster.b64 _, [remote];\n"
                 "}\n" ::"r"(bar), "r"(rank) : "memory");
}
// Every thread of every block of the cluster meets here: a block's mbarriers are initialised
// before another block arrives on them or multicasts to them, and no block leaves (its shared
// memory given to another) while the others may still do either.
FT_DEVICE void cluster_sync()
{
    asm volatile("barrier.cluster.arrive.release;\n"
                 "barrier.cluster.wait.acquire;" ::: "memory");
}

// Copies src (in the map's swizzle) to the box at (c0, c1, c2, c3) of the tensor `map` describes
// (a __grid_constant__ kernel argument), leaving out what lies past the tensor. One thread
// issues it; it joins the thread's open bulk group (bulk_commit, then bulk_wait_read before
// src is written again).
FT_DEVICE void tma_store_4d(const ft_tensor_map *map, unsigned src, int c0, int c1, int c2, int c3)
{
    asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.bulk_group [%0, {%2, %3, %4, %5}], [%1];"
                 ::"l"((unsigned long long)map), "r"(src), "r"(c0), "r"(c1), "r"(c2), "r"(c3) : "memory");
}

// Bulk reduction by the copy engine: dst[i] += src[i] in fp32 over `bytes` (a multiple of 16,
// both ends 16-byte aligned), each element added atomically. One thread issues it; it joins the
// thread's open bulk group, and bulk_commit closes the group.
FT_DEVICE void bulk_reduce_add_f32(float *dst, unsigned src, unsigned bytes)
{
    asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], %2;"
                 ::"l"(__cvta_generic_to_global(dst)), "r"(src), "r"(bytes) : "memory");
}
// The same as a plain copy: dst[i] = src[i] (a query tile's first dQ share, DQ_INIT store).
FT_DEVICE void bulk_store(float *dst, unsigned src, unsigned bytes)
{
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;"
                 ::"l"(__cvta_generic_to_global(dst)), "r"(src), "r"(bytes) : "memory");
}
FT_DEVICE void bulk_commit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }
// Waits until at most PENDING of the thread's bulk groups still read their shared-memory
// source (the source may then be overwritten).
template <int PENDING> FT_DEVICE void bulk_wait_read()
{
    asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(PENDING) : "memory");
}
// Four 8x8 matrices of 16-bit elements to shared memory (stmatrix .x4, one instruction for what
// takes four 4-byte stores): register i of every lane is row lane/4, columns 2(lane%4) and +1 of
// matrix i, the mma fragment's layout; lanes 8i..8i+7 give the addresses of matrix i's 8 rows
// (16 bytes each). Every lane of the warp takes part.
FT_DEVICE void stmatrix_x4(unsigned addr, unsigned r0, unsigned r1, unsigned r2, unsigned r3)
{
    asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(r0), "r"(r1),
                 "r"(r2), "r"(r3)
                 : "memory");
}

// The same with each matrix stored transposed (.trans: thread t's pair of row t/4 lands in
// column t/4 of rows 2(t%4) and 2(t%4) + 1).
FT_DEVICE void stmatrix_x4_trans(unsigned addr, unsigned r0, unsigned r1, unsigned r2, unsigned r3)
{
    asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(r0),
                 "r"(r1), "r"(r2), "r"(r3)
                 : "memory");
}

// Waits until at most PENDING of the thread's bulk groups are still incomplete.
template <int PENDING> FT_DEVICE void bulk_wait()
{
    asm volatile("cp.async.bulk.wait_group %0;" ::"n"(PENDING) : "memory");
}

// Byte offset of 16-byte chunk `chunk` of row `row` in a tile of ROWS rows stored as panels of
// 128 bytes a row (64 16-bit columns, or 32 floats): panel chunk/8 starts at (chunk/8)*ROWS*128, and within a panel
// the chunk moves to (chunk%8) ^ (row%8), wgmma's 128-byte swizzle. The tile must start
// 1024-byte aligned (the swizzle is a function of address bits 4-9).
template <int ROWS> FT_DEVICE unsigned panel_offset(int row, int chunk)
{
    return (chunk / 8) * (ROWS * 128) + row * 128 + (((chunk & 7) ^ (row & 7)) << 4);
}

// Copies a ROWS x COLS tile (row stride `stride` elements, `valid` rows in range) into the
// panel layout with 16-byte cp.async by THREADS threads (t: this one's index, 0..THREADS-1);
// rows past `valid` and columns past DATA (the data's head dim) are zero-filled. A COLS that is
// not a multiple of 64 leaves the rest of its last panel unwritten.
template <int ROWS, int COLS, int DATA, bool EVEN, int THREADS>
FT_DEVICE void load_panels(unsigned smem, const elem_t *gmem, long long stride, int valid, int t = threadIdx.x)
{
    constexpr int CHUNKS = COLS / 8;
#pragma unroll
    for (int it = 0; it < (ROWS * CHUNKS + THREADS - 1) / THREADS; it++) {
        const int i = it * THREADS + t;
        if ((ROWS * CHUNKS) % THREADS != 0 && i >= ROWS * CHUNKS)
            break;
        const int row = i / CHUNKS;
        const int chunk = i % CHUNKS;
        const bool in = (EVEN || row < valid) && (DATA == COLS || chunk * 8 < DATA);
        const elem_t *src = in ? gmem + row * stride + chunk * 8 : gmem;
        cp_async_16(smem + panel_offset<ROWS>(row, chunk), src, in ? 16 : 0);
    }
}
#endif
