/* strset.h - building and freeing struct sg_strset (declared in policy.h,
 * where the lookups live). Used by the policy loader. */
#ifndef SG_STRSET_H
#define SG_STRSET_H

#include <stddef.h>

#include "policy.h"

/* Take ownership of items[0..count) (strings and array, malloc'ed) and sort
 * them into set. A duplicate entry fails with -EEXIST and *ret_dup (if not
 * NULL) pointing at it inside the set; the set still owns the items, so the
 * caller frees it with sg_strset_free() either way. */
int sg_strset_adopt(struct sg_strset *set, char **items, size_t count, const char **ret_dup);

/* Replace set's items with set ∪ other (remove = 0) or set \ other
 * (remove = 1); other is unchanged. -ENOMEM leaves set as it was. */
int sg_strset_combine(struct sg_strset *set, const struct sg_strset *other, int remove);

/* Free the items; the struct itself is the caller's. NULL is a no-op. */
void sg_strset_free(struct sg_strset *set);

#endif
