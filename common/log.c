#include "log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static atomic_int min_level = SG_LOG_INFO;

static const char *level_names[] = {"debug", "info", "warn", "error"};

void sg_log_set_level(enum sg_log_level level)
{
    atomic_store(&min_level, (int)level);
}

int sg_log_parse_level(const char *s, enum sg_log_level *ret_level)
{
    for (int i = 0; i < 4; i++) {
        if (s && strcmp(s, level_names[i]) == 0) {
            *ret_level = (enum sg_log_level)i;
            return 0;
        }
    }
    return -EINVAL;
}

void sg_log(enum sg_log_level level, const char *event, const char *fmt, ...)
{
    if ((int)level < atomic_load(&min_level) || level > SG_LOG_ERROR)
        return;
    char line[SG_LOG_LINE_MAX];
    struct timeval tv;
    struct tm tm;
    gettimeofday(&tv, NULL);
    gmtime_r(&tv.tv_sec, &tm);
    int n =
        snprintf(line, sizeof(line), "ts=%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ level=%s event=%s",
                 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                 (long)(tv.tv_usec / 1000), level_names[level], event);
    if (n < 0)
        return;
    size_t len = (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1;
    if (fmt && len < sizeof(line) - 2) {
        va_list ap;
        line[len++] = ' ';
        va_start(ap, fmt);
        int m = vsnprintf(line + len, sizeof(line) - len, fmt, ap);
        va_end(ap);
        if (m > 0)
            len += (size_t)m < sizeof(line) - len ? (size_t)m : sizeof(line) - len - 1;
    }
    if (len >= sizeof(line) - 1)
        len = sizeof(line) - 2;
    line[len++] = '\n';
    /* One write per line so concurrent threads never interleave. */
    ssize_t w = write(STDERR_FILENO, line, len);
    (void)w;
}

void sg_log_quote(const char *s, char *out, unsigned long outsz)
{
    static const char hex[] = "0123456789abcdef";
    size_t o = 0;
    if (outsz == 0)
        return;
    for (; s && *s && o + 5 < outsz; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            out[o++] = '\\';
            out[o++] = (char)c;
        } else if (c < 0x20 || c == 0x7f) {
            out[o++] = '\\';
            out[o++] = 'x';
            out[o++] = hex[c >> 4];
            out[o++] = hex[c & 15];
        } else {
            out[o++] = (char)c;
        }
    }
    out[o] = '\0';
}
