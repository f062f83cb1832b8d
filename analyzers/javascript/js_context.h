/* js_context.h - constructs V8 reads by a context tree-sitter does not
 * have, so the two would read different programs. Both families were found
 * by the differential fuzzer (tests/fuzz/diff/).
 *
 * `await` and `yield` where Node reads an identifier.
 * The Node runner compiles main.js as the body of a plain function (not
 * async, not a generator, sloppy: images/nodejs/runner.js), so there - and
 * in any function that is not async (a generator) - `await` (`yield`) is an
 * ordinary identifier to V8. tree-sitter-javascript has no such context: it
 * always reads an await (yield) expression. The two then read different
 * programs: `await /x;require("child_process").execSync("id");1/g` is an
 * await of a regex literal to tree-sitter and two divisions around a live
 * require() to V8. The differential fuzzer found this family
 * (tests/fuzz/diff/). Fail closed: an await (yield) expression whose
 * nearest enclosing function is not async (a generator) is rejected.
 *
 * `let` where tree-sitter reads a name. In sloppy code `let` is also an
 * identifier; tree-sitter reads `let` + line break + `x` as the name `let`
 * and then `x`, V8 (as the standard says) the declaration `let x`, and
 * `let[a] = b` as a destructuring declaration rather than an element
 * assignment. Fail closed: any identifier `let` is rejected (js_rules.c,
 * check_identifier); nobody names a variable `let`.
 */
#ifndef SG_JS_CONTEXT_H
#define SG_JS_CONTEXT_H

#include "js_ctx.h"

/* Check the await_expression or yield_expression at ctx->path[ctx->depth]. */
void js_check_context_keyword(struct js_ctx *ctx);

/* A function (arrow, method) whose `async` is followed by a line break:
 * V8 reads `async` as an identifier of its own and the function as a
 * plain one; tree-sitter reads an async function. Rejected as
 * SG_RULE_CONTEXT_KEYWORD. Checks the node at ctx->path[ctx->depth]; a
 * no-op for other nodes. */
void js_check_async_line_break(struct js_ctx *ctx);

/* A class field named `static` (`get`, `set`) with no
 * value: tree-sitter reads `static` + line break + `m() {}` as a field named
 * `static` and an instance method, V8 as the static method m (found by
 * diff_javascript). Rejected as SG_RULE_CONTEXT_KEYWORD; checks the node at
 * ctx->path[ctx->depth], a no-op for other nodes. */
void js_check_field_keyword(struct js_ctx *ctx);

/* A legacy octal literal followed by '.' (`041.`): tree-sitter reads the
 * decimal 41. (then `x` on the next line as a name), V8 the octal 33 and
 * `.x` as a property access on it. Rejected as SG_RULE_SYNTAX_ERROR, like
 * the other constructs the two parsers read differently. Checks the number
 * at ctx->path[ctx->depth]. */
void js_check_number(struct js_ctx *ctx);

#endif
