/* json_nesting.h - how deep a JSON value nests, with one definition for the
 * gateway and the executor: containers count ({} and [] are one level each),
 * scalars do not. Both daemons cap `arguments` with it, so whatever the
 * gateway forwards the executor accepts. */
#ifndef SG_JSON_NESTING_H
#define SG_JSON_NESTING_H

#include <jansson.h>
#include <stddef.h>

/* 1 when v nests more than max containers deep; stops walking at max + 1,
 * so the recursion is bounded by the cap, not by the input. */
int sg_json_nesting_exceeds(json_t *v, size_t max);

#endif
