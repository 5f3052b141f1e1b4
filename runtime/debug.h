/*
 * debug.h - measurement overrides (not installed, not part of the library's contract).
 *
 * Environment variables that change how the runtime plans a launch, so that an alternative
 * schedule can be timed without a rebuild. They are read once per process, on the first call
 * that plans a launch (w4a16_debug()), into one struct; nothing reads the environment on the call
 * path (the plan and the kernels' launches read the struct). Unset, each takes the default below,
 * which is what the library does. The user settings W4A16_LOG_LEVEL and W4A16_CACHE_PATH are
 * documented in w4a16.h and read elsewhere.
 *
 *   W4A16_SM90_STREAMK=0|1|2     stream-K: 0 never; 1 wherever the output tiles leave a wave
 *                                part-empty (no efficiency bound); 2 also in place of split-K
 *                                (default: runtime/plan.c's rule)
 *   W4A16_SM90_STREAMK_MIN_M=m   stream-K's smallest M for every tile, without the small-M rule of
 *                                the tile_k 256 tiles (default: 65; 1 for tile_k 256)
 *   W4A16_SM90_SPLIT=n           split-K into n slices where the workspace holds their partials
 *   W4A16_SM90_SPLIT_SLOTS=1     the largest split whose units fit one wave of CTA slots (SMs x CTAs
 *                                per SM), at most 12, where the workspace holds it
 *   W4A16_SM90_NO_PDL=<any>      plain stream order: no programmatic dependent launch, no prefetch
 *   W4A16_SM90_PREFETCH=n        weights of the first stages read before griddepcontrol.wait: 0 none
 *                                (and every kernel lets its dependent launch only after its wait);
 *                                n > 0 at most n stages; -d max(2, k-blocks / d)
 *   W4A16_SM90_SK_DP=0|1|2|3     stream-K's data-parallel tiles a cluster: 0 none; 1 the rule; 2 one
 *                                fewer than W = (tiles - 1) / clusters where positive; 3 W always
 *   W4A16_SM90_SKEW=0            stream-K's parts equal but for the remainder (no shrinking parts)
 *   W4A16_SM90_KPAIR=0           no K pair: stream-K or split-K where it would run
 *   W4A16_SM90_KPAIR_LEAD=d      the K pair's lead for the tiles that hand over in two halves
 *   W4A16_SM90_S2D=n             scale rows by one copy of the 2-D map from n rows a stage on; 0:
 *                                a bulk copy a row always (the N and K tails still take the map)
 *   W4A16_SM90_SCHUNK=0|2        scale rows by chunks: 0 never; 2 in every launch, not only the K pair's
 *   W4A16_SM90_A3D=0             a stage's activations by KT 2-D copies instead of one 3-D copy
 *   W4A16_SM90_CLIP_BOX=0        the last token tile's boxes of TM rows, not clipped to its rows
 *   W4A16_GEMV_NO_PDL=<any>      GEMV and grouped kernels: plain stream order (no programmatic dependent launch)
 *   W4A16_GEMV_PDL_TRIGGER=early|late|auto   the register-staged GEMV lets its dependent launch
 *                                right after its griddepcontrol.wait, after its main loop, or (auto,
 *                                the default) early only where the grid exceeds one wave
 *   W4A16_GEMV_TMA_CTAS=n        the TMA GEMV on at most n CTAs (several units a CTA; tests use it)
 *   W4A16_GEMV_TMA_BESIDE=1      the next kernel's CTAs also beside a TMA GEMV grid of at most one CTA
 *                                per SM whose units do not fit the stages issued before the wait
 *   W4A16_GEMV_TMA_GENERIC=<any> the TMA GEMV's generic consumer for every call (tests use it)
 *   W4A16_GEMV_TMA_PCZ=col|group|sub  per-column zero points (group = K) in the TMA GEMV: its
 *                                per-column consumer (W4A16_GEMV_TMA_PCOL), the consumer of zero points
 *                                in groups (a scale and zero row streamed per stage), or the per-column
 *                                one without its integer-offset path, for every tile; default: the rule
 *                                (gemv_tma_launch.cuh)
 *   W4A16_GEMV_TMA_PERM=1|0      act-order (w4a16_gemm_args.a_perm) at M = 1: 1 the row gathered inside
 *                                the TMA GEMV where it can (W4A16_GEMV_TMA_PERM) in every call; 0 never
 *                                (w4a16_gather_k into the workspace and the GEMV on that, as at every
 *                                other M); unset: inside the GEMV only in calls with W4A16_GEMM_NO_PDL
 *                                (H100 Llama-3-8B decode step, docs/PERFORMANCE.md: with the programmatic
 *                                launch the gather kernel costs less, in plain stream order the in-kernel
 *                                gather does)
 */
#ifndef W4A16_DEBUG_H
#define W4A16_DEBUG_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct w4a16_debug_settings {
  int sm90_streamk;       /* W4A16_SM90_STREAMK; -1: the rule */
  int sm90_streamk_min_m; /* W4A16_SM90_STREAMK_MIN_M; -1: the rule */
  int sm90_split;         /* W4A16_SM90_SPLIT; 0: the rule */
  int sm90_split_slots;   /* W4A16_SM90_SPLIT_SLOTS set */
  int sm90_pdl;           /* 0 where W4A16_SM90_NO_PDL is set, else 1 */
  int sm90_prefetch_set;  /* W4A16_SM90_PREFETCH set: sm90_prefetch is Params::prefetch */
  int sm90_prefetch;
  int sm90_sk_dp;         /* W4A16_SM90_SK_DP; 1: the rule */
  int sm90_skew;          /* W4A16_SM90_SKEW; 1: the rule */
  int sm90_kpair;         /* W4A16_SM90_KPAIR; 1: the rule */
  int sm90_kpair_lead;    /* W4A16_SM90_KPAIR_LEAD; -1: the kernel's */
  int sm90_s2d_min_rows;  /* W4A16_SM90_S2D as rows (1 << 30 for 0); 0: the rule */
  int sm90_schunk;        /* W4A16_SM90_SCHUNK; 1: the rule (the K pair only) */
  int sm90_act_3d;        /* W4A16_SM90_A3D; 1: the rule */
  int sm90_clip_box;      /* W4A16_SM90_CLIP_BOX; 1: the rule */
  int gemv_pdl;           /* 0 where W4A16_GEMV_NO_PDL is set, else 1 */
  int gemv_pdl_trigger;   /* W4A16_GEMV_PDL_TRIGGER: 0 early, 1 late, 2 auto (the default) */
  int gemv_tma_ctas;      /* W4A16_GEMV_TMA_CTAS; 0: the rule */
  int gemv_tma_beside;    /* W4A16_GEMV_TMA_BESIDE=1 */
  int gemv_tma_generic;   /* W4A16_GEMV_TMA_GENERIC set */
  int gemv_pcz;           /* W4A16_GEMV_TMA_PCZ: 0 the rule, 1 col, 2 group, 3 sub */
  int gemv_tma_perm;      /* W4A16_GEMV_TMA_PERM: 1 always, 0 never, -1 (unset) with W4A16_GEMM_NO_PDL */
} w4a16_debug_settings;

/* The process's settings, read from the environment on the first call (thread-safe). */
const w4a16_debug_settings *w4a16_debug(void);
/* The same, writable: for tests that measure a rule under an override (not thread-safe against
   concurrent launches). */
w4a16_debug_settings *w4a16_debug_for_tests(void);

#ifdef __cplusplus
}
#endif

#endif
