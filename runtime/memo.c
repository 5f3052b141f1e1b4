/* memo.c - the memos of selections (internal.h, w4a16_memo): a key of the problem and the device
   -> the kernel the selection picked, so that a call with kernel NULL repeats no query. */
#include <string.h>

#include "internal.h"

/* A hash of the key's words: each word xored in, times the 64-bit FNV prime, folded by a shift (the
   words are small integers: the fold spreads their bits over the slot index) */
static uint64_t memo_hash(const uint64_t key[W4A16_MEMO_WORDS]) {
  uint64_t h = W4A16_FNV1A_OFFSET;
  for (int i = 0; i < W4A16_MEMO_WORDS; ++i) {
    h ^= key[i];
    h *= W4A16_FNV1A_PRIME;
    h ^= h >> 29;
  }
  return h;
}

static int memo_same(const w4a16_memo_entry *e, const uint64_t key[W4A16_MEMO_WORDS], unsigned generation) {
  return e->used && e->generation == generation && memcmp(e->key, key, sizeof e->key) == 0;
}

const w4a16_kernel_desc *w4a16_memo_get(w4a16_memo *m, const uint64_t key[W4A16_MEMO_WORDS], unsigned generation,
                                        int *source) {
  const uint64_t h = memo_hash(key);
  const w4a16_kernel_desc *kd = NULL;
  pthread_mutex_lock(&m->mu);
  for (int i = 0; i < W4A16_MEMO_PROBE; ++i) {
    const w4a16_memo_entry *e = &m->slot[(h + (uint64_t)i) % W4A16_MEMO_SIZE];
    if (memo_same(e, key, generation)) {
      kd = e->kd;
      if (source) *source = e->source;
      break;
    }
  }
  pthread_mutex_unlock(&m->mu);
  return kd;
}

void w4a16_memo_put(w4a16_memo *m, const uint64_t key[W4A16_MEMO_WORDS], unsigned generation,
                    const w4a16_kernel_desc *kd, int source) {
  const uint64_t h = memo_hash(key);
  pthread_mutex_lock(&m->mu);
  w4a16_memo_entry *slot = &m->slot[h % W4A16_MEMO_SIZE];
  for (int i = 0; i < W4A16_MEMO_PROBE; ++i) {
    w4a16_memo_entry *e = &m->slot[(h + (uint64_t)i) % W4A16_MEMO_SIZE];
    if (!e->used || e->generation != generation || memcmp(e->key, key, sizeof e->key) == 0) {
      slot = e;
      break;
    }
  }
  memcpy(slot->key, key, sizeof slot->key);
  slot->generation = generation;
  slot->source = source;
  slot->kd = kd;
  slot->used = 1;
  pthread_mutex_unlock(&m->mu);
}
