/* select_internal.h - selection internals: the hook w4a16_gemm uses when no kernel
   is given, and the pieces of the heuristic and the cache that tests
   reach directly (not installed). */
#ifndef W4A16_SELECT_INTERNAL_H
#define W4A16_SELECT_INTERNAL_H

#include "internal.h"
#include "log.h"
#include "w4a16/select.h"

/* The kernel to run problem on the device dev describes (w4a16_current_device's record
   of the current device; a caller may override its sm_count or cc): the config cache's
   first entry that can implement it and runs there, else the heuristic's first pick;
   NULL (with the thread's message set) if none can. Memoized per problem and device;
   thread-safe. Takes the record instead of reading the current device again: it runs
   on every w4a16_gemm call without a kernel. */
const w4a16_kernel_desc *w4a16_select_kernel(const w4a16_problem *problem, const w4a16_device_info *dev);

/* The built-in rule table: heuristics/rules.tsv rendered by the generator into the
   build's generated/heuristic_rules.c. */
extern const w4a16_heuristic_rule w4a16_builtin_rules[];
extern const size_t w4a16_builtin_rule_count;

/* The heuristic over an explicit rule table (tests hand their own rules).
   dev: when non-NULL, also require w4a16_kernel_runs_here(kernel, dev) (the
   table must then be the registry); when NULL, only sm_min <= cc <= sm_max.
   mem_gbps: the device's peak DRAM bandwidth, GB/s (0 = unknown; see the rules'
   mem_gbps_min). */
w4a16_status w4a16_heuristic_query_rules(const w4a16_heuristic_rule *rules, size_t nrules,
                                         const w4a16_kernel_desc *table, size_t count, int sm_count,
                                         int cc, int mem_gbps, const w4a16_device_info *dev,
                                         const w4a16_problem *problem, int requested,
                                         w4a16_heuristic_result out[], int *returned);

/* The cost model's estimate (microseconds) of kernel on problem with split-K
   factor split (stream-K as the launch plan's rules take it) on a device of
   sm_count SMs; *waves_eff receives the waves efficiency (may be NULL). Exposed
   for tests; the query itself estimates each kernel with its plan. */
float w4a16_heuristic_estimate_us(const w4a16_kernel_desc *kernel, const w4a16_problem *problem,
                                  int sm_count, int split, float *waves_eff);

/* Bumped whenever the entries of any config cache change (selection memo key). */
unsigned w4a16_cache_generation(void);

#endif
