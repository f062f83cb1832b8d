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

/* Write the report for results[0..n) to out. Returns 0, or -ENOMEM / -EIO. */
int check_report_write(FILE *out, enum check_format format, const struct sg_policy *policy,
                       const struct check_result *results, size_t n);

#endif
