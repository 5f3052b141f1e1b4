/* log.c - the library's diagnostics: the log callback (w4a16_set_log_callback) and
   the default sink, stderr filtered by $W4A16_LOG_LEVEL. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

static pthread_mutex_t g_log_mu = PTHREAD_MUTEX_INITIALIZER;
static w4a16_log_fn g_log_fn;
static void *g_log_user;
static pthread_once_t g_log_once = PTHREAD_ONCE_INIT;
static int g_log_min = W4A16_LOG_WARNING; /* default sink's threshold; 4 = off */

const char *w4a16_log_level_name(w4a16_log_level level) {
  switch (level) {
  case W4A16_LOG_DEBUG: return "debug";
  case W4A16_LOG_INFO: return "info";
  case W4A16_LOG_WARNING: return "warning";
  case W4A16_LOG_ERROR: return "error";
  }
  return "?";
}

static void log_init(void) {
  const char *e = getenv("W4A16_LOG_LEVEL");
  if (!e || !*e) return;
  static const char *names[] = {"debug", "info", "warning", "error", "off"};
  for (int i = 0; i < 5; ++i)
    if (strcmp(e, names[i]) == 0) g_log_min = i;
}

void w4a16_set_log_callback(w4a16_log_fn fn, void *user) {
  pthread_mutex_lock(&g_log_mu);
  g_log_fn = fn;
  g_log_user = user;
  pthread_mutex_unlock(&g_log_mu);
}

void w4a16_log(w4a16_log_level level, const char *fmt, ...) {
  pthread_once(&g_log_once, log_init);
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  /* the callback is called under the lock: w4a16_set_log_callback() returning
     means the previous callback is no longer running (callbacks must not log) */
  pthread_mutex_lock(&g_log_mu);
  if (g_log_fn)
    g_log_fn(level, msg, g_log_user);
  else if ((int)level >= g_log_min)
    fprintf(stderr, "w4a16: %s: %s\n", w4a16_log_level_name(level), msg);
  pthread_mutex_unlock(&g_log_mu);
}
