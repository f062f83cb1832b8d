/* json_raw.h - a result value carried as JSON text ("value_json").
 *
 * jansson stops at signed 64-bit integers ("too big integer"), but JSON and
 * the runners' languages do not: Python returns 2**64 exactly, JavaScript
 * writes 1e20 as 100000000000000000000. Such a value travels from the runner
 * through the executor to the gateway as its JSON text, checked here, and the
 * gateway writes that text into the client's answer unchanged, so clients see
 * the exact number (executors/PROTOCOL.md). One definition for the Node
 * runner, the executor and the gateway.
 */
#ifndef SG_JSON_RAW_H
#define SG_JSON_RAW_H

#include <stddef.h>

/* Deepest result value the runners return, in containers ({} and [] count
 * one level each, as in json_nesting.h). Well inside jansson's own parser
 * limit (2048), so every daemon parses and writes what a runner sends. */
#define SG_JSON_RESULT_DEPTH_MAX 512

/* 1 when text[0..len) is exactly one JSON value of any type (surrounding
 * whitespace allowed; NUL escapes in strings allowed) whose numbers a double
 * can hold (integers beyond 64 bits included; NaN, Infinity and 1e400 are not
 * JSON numbers here) and that nests at most max_depth containers deep. */
int sg_json_raw_ok(const char *text, size_t len, size_t max_depth);

#endif
