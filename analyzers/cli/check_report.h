/* check_report.h - sandgate-check's output formats: compiler-style text,
 * JSON, and SARIF 2.1.0. */
#ifndef SG_CHECK_REPORT_H
#define SG_CHECK_REPORT_H

#include <stdio.h>

#include "analyze.h"
#include "policy.h"

#define SG_CHECK_VERSION "0.1.0"

enum check_format { CHECK_FORMAT_TEXT = 0, CHECK_FORMAT_JSON, CHECK_FORMAT_SARIF };

/* One analysed input. Borrowed by the writers. */
struct check_result {
    const char *file; /* as given on the command line; "-" for standard input */
    enum sg_lang lang;
    struct sg_analysis analysis;
};

/* "text", "json", "sarif". Returns 0 or -EINVAL. */
int check_format_from_name(const char *name, enum check_format *ret_format);

/* Text format, one input at a time (while its source is at hand): one
 * "file:line:col: error[rule]: message" line per violation, followed by the
 * source line (sanitised) and a caret line under the span. Returns 0 or -EIO. */
int check_report_text(FILE *out, const struct check_result *r, const char *src, size_t len);

/* Write the JSON or SARIF report for results[0..n) to out (nothing for the
 * text format, which is streamed). Returns 0, or -ENOMEM / -EIO. */
int check_report_write(FILE *out, enum check_format format, const struct sg_policy *policy,
                       const struct check_result *results, size_t n);

#endif
