/* status.c - status names and messages, version, enum names, per-thread errors. */
#include <stdio.h>
#include <string.h>

#include "internal.h"

static _Thread_local char tl_message[512];
static _Thread_local int tl_cuda_error;
/* > 0 while a ranking loop tries kernels it expects to refuse: w4a16_fail then returns the status
   without formatting a message nobody reads (internal.h, w4a16_quiet_begin) */
static _Thread_local int tl_quiet;

unsigned w4a16_version(void) { return W4A16_VERSION_NUMBER; }
const char *w4a16_version_string(void) { return W4A16_VERSION_STRING; }

const char *w4a16_status_name(w4a16_status status) {
  switch (status) {
#define W4A16_X_(name, value, desc) \
  case W4A16_STATUS_##name:         \
    return "W4A16_STATUS_" #name;
    W4A16_STATUS_TABLE(W4A16_X_)
#undef W4A16_X_
  }
  return "W4A16_STATUS_UNKNOWN";
}

const char *w4a16_status_string(w4a16_status status) {
  switch (status) {
#define W4A16_X_(name, value, desc) \
  case W4A16_STATUS_##name:         \
    return desc;
    W4A16_STATUS_TABLE(W4A16_X_)
#undef W4A16_X_
  }
  return "unknown status value";
}

const char *w4a16_last_error_message(void) { return tl_message; }
int w4a16_last_cuda_error(void) { return tl_cuda_error; }

void w4a16_clear_error(void) { tl_message[0] = '\0'; }

void w4a16_quiet_begin(void) { ++tl_quiet; }
void w4a16_quiet_end(void) { --tl_quiet; }

w4a16_status w4a16_fail(w4a16_status status, const char *fmt, ...) {
  if (tl_quiet > 0) return status;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(tl_message, sizeof tl_message, fmt, ap);
  va_end(ap);
  return status;
}

w4a16_status w4a16_fail_cuda(int cuda_error, const char *what) {
  tl_cuda_error = cuda_error;
  return w4a16_fail(W4A16_STATUS_CUDA_ERROR, "%s failed with CUDA error %d", what, cuda_error);
}

const char *w4a16_dtype_name(w4a16_dtype dtype) {
  switch (dtype) {
  case W4A16_DTYPE_F16: return "f16";
  case W4A16_DTYPE_BF16: return "bf16";
  }
  return "?";
}

const char *w4a16_quant_mode_name(w4a16_quant_mode mode) {
  switch (mode) {
  case W4A16_PER_COLUMN_SCALE_ONLY: return "PER_COLUMN_SCALE_ONLY";
  case W4A16_FINEGRAINED_SCALE_ONLY: return "FINEGRAINED_SCALE_ONLY";
  case W4A16_FINEGRAINED_SCALE_AND_ZEROS: return "FINEGRAINED_SCALE_AND_ZEROS";
  }
  return "?";
}

const char *w4a16_family_name(w4a16_family family) {
  switch (family) {
  case W4A16_FAMILY_SM80: return "sm80";
  case W4A16_FAMILY_SM90: return "sm90";
  case W4A16_FAMILY_GEMV: return "gemv";
  }
  return "?";
}

const char *w4a16_schedule_name(w4a16_schedule schedule) {
  switch (schedule) {
  case W4A16_SCHEDULE_MULTISTAGE: return "multistage";
  case W4A16_SCHEDULE_COOPERATIVE: return "cooperative";
  case W4A16_SCHEDULE_PINGPONG: return "pingpong";
  case W4A16_SCHEDULE_GEMV: return "gemv";
  case W4A16_SCHEDULE_GEMV_TMA: return "tma";
  }
  return "?";
}
