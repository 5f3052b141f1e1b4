/* debug.c - the measurement overrides of debug.h, read once per process. */
#include "debug.h"

#include <pthread.h>
#include <stdlib.h>

static w4a16_debug_settings g_debug;
static pthread_once_t g_debug_once = PTHREAD_ONCE_INIT;

/* the integer value of variable name, or dflt where it is unset or empty */
static int env_int(const char *name, int dflt) {
  const char *e = getenv(name);
  return e && *e ? atoi(e) : dflt;
}

/* 0 where variable name is set to 0, else 1 */
static int env_on(const char *name) { return env_int(name, 1) != 0; }

static void debug_init(void) {
  w4a16_debug_settings *d = &g_debug;
  d->sm90_streamk = env_int("W4A16_SM90_STREAMK", -1);
  d->sm90_streamk_min_m = env_int("W4A16_SM90_STREAMK_MIN_M", -1);
  d->sm90_split = env_int("W4A16_SM90_SPLIT", 0);
  d->sm90_split_slots = getenv("W4A16_SM90_SPLIT_SLOTS") != NULL;
  d->sm90_pdl = getenv("W4A16_SM90_NO_PDL") == NULL;
  d->sm90_prefetch_set = getenv("W4A16_SM90_PREFETCH") != NULL;
  d->sm90_prefetch = env_int("W4A16_SM90_PREFETCH", 0);
  d->sm90_sk_dp = env_int("W4A16_SM90_SK_DP", 1);
  d->sm90_skew = env_on("W4A16_SM90_SKEW");
  d->sm90_kpair = env_on("W4A16_SM90_KPAIR");
  d->sm90_kpair_lead = env_int("W4A16_SM90_KPAIR_LEAD", -1);
  const char *s2d = getenv("W4A16_SM90_S2D");
  d->sm90_s2d_min_rows = s2d ? (atoi(s2d) > 0 ? atoi(s2d) : 1 << 30) : 0;
  d->sm90_schunk = env_int("W4A16_SM90_SCHUNK", 1);
  d->sm90_act_3d = env_on("W4A16_SM90_A3D");
  d->sm90_clip_box = env_on("W4A16_SM90_CLIP_BOX");
  d->gemv_pdl = getenv("W4A16_GEMV_NO_PDL") == NULL;
  const char *trig = getenv("W4A16_GEMV_PDL_TRIGGER");
  d->gemv_pdl_trigger = trig && trig[0] == 'e' ? 0 : trig && trig[0] == 'l' ? 1 : 2;
  d->gemv_tma_ctas = env_int("W4A16_GEMV_TMA_CTAS", 0);
  const char *beside = getenv("W4A16_GEMV_TMA_BESIDE");
  d->gemv_tma_beside = beside && beside[0] == '1';
  d->gemv_tma_generic = getenv("W4A16_GEMV_TMA_GENERIC") != NULL;
  const char *pcz = getenv("W4A16_GEMV_TMA_PCZ");
  d->gemv_pcz = !pcz ? 0 : pcz[0] == 'c' ? 1 : pcz[0] == 'g' ? 2 : pcz[0] == 's' ? 3 : 0;
  d->gemv_tma_perm = env_int("W4A16_GEMV_TMA_PERM", -1);
}

const w4a16_debug_settings *w4a16_debug(void) {
  pthread_once(&g_debug_once, debug_init);
  return &g_debug;
}

w4a16_debug_settings *w4a16_debug_for_tests(void) {
  pthread_once(&g_debug_once, debug_init);
  return &g_debug;
}
