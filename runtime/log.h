/* log.h - the library's diagnostics sink (log.c), for every runtime file that reports
   something to the log callback (not installed). */
#ifndef W4A16_LOG_H
#define W4A16_LOG_H

#include "internal.h"
#include "w4a16/select.h"

/* Send one diagnostic line to the log callback, else to stderr at or above
   $W4A16_LOG_LEVEL (printf-style). */
void w4a16_log(w4a16_log_level level, const char *fmt, ...) W4A16_PRINTF(2, 3);

#endif
