#include "flavour.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static bool name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
}

static bool module_char(char c)
{
    return name_char(c) || c == '.' || c == '@' || c == '/';
}

/* Whether s[0..len) is a module name; what: "flavour" or "set". */
static int check_module(const struct flavour *f, const char *what, const char *s, size_t len,
                        struct sg_error *err)
{
    if (len == 0 || len > FLAVOUR_MODULE_MAX)
        return sg_error_set(err, -EINVAL, "%s '%s': module names are 1..%u bytes", what, f->name,
                            FLAVOUR_MODULE_MAX);
    for (size_t i = 0; i < len; i++)
        if (!module_char(s[i]))
            return sg_error_set(err, -EINVAL,
                                "%s '%s': module '%.*s' has a character "
                                "outside [A-Za-z0-9_.@/-]",
                                what, f->name, (int)len, s);
    return 0;
}

/* One module name from s[0..len). */
static int add_module(struct flavour *f, const char *s, size_t len, struct sg_error *err)
{
    int r = check_module(f, "flavour", s, len, err);
    if (r < 0)
        return r;
    if (f->n_modules >= FLAVOUR_MODULES_MAX)
        return sg_error_set(err, -EINVAL, "flavour '%s': more than %u modules", f->name,
                            FLAVOUR_MODULES_MAX);
    for (unsigned i = 0; i < f->n_modules; i++)
        if (strlen(f->modules[i]) == len && memcmp(f->modules[i], s, len) == 0)
            return sg_error_set(err, -EINVAL, "flavour '%s': module '%.*s' listed twice", f->name,
                                (int)len, s);
    memcpy(f->modules[f->n_modules], s, len);
    f->modules[f->n_modules++][len] = '\0';
    return 0;
}

static int parse_size(const char *s, struct flavour *f, struct sg_error *err)
{
    unsigned long v = 0;
    if (!*s)
        return sg_error_set(err, -EINVAL, "flavour '%s': empty size after ':'", f->name);
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > FLAVOUR_SIZE_MAX)
            return sg_error_set(err, -EINVAL, "flavour '%s': size must be 0..%u", f->name,
                                FLAVOUR_SIZE_MAX);
        v = v * 10 + (unsigned long)(*s - '0');
    }
    if (v > FLAVOUR_SIZE_MAX)
        return sg_error_set(err, -EINVAL, "flavour '%s': size must be 0..%u", f->name,
                            FLAVOUR_SIZE_MAX);
    f->size = (unsigned)v;
    f->size_set = true;
    return 0;
}

int flavour_parse(const char *spec, struct flavour *ret, struct sg_error *err)
{
    memset(ret, 0, sizeof(*ret));
    size_t len = strlen(spec);
    if (len == 0 || len > FLAVOUR_SPEC_MAX)
        return sg_error_set(err, -EINVAL, "a flavour is name=mod1,mod2:size (1..%u bytes)",
                            FLAVOUR_SPEC_MAX);
    size_t nl = strcspn(spec, "=:");
    if (nl == 0 || nl > FLAVOUR_NAME_MAX)
        return sg_error_set(err, -EINVAL, "flavour name must be 1..%u bytes of [A-Za-z0-9_-]",
                            FLAVOUR_NAME_MAX);
    for (size_t i = 0; i < nl; i++)
        if (!name_char(spec[i]))
            return sg_error_set(err, -EINVAL,
                                "flavour name '%.*s' has a character outside "
                                "[A-Za-z0-9_-]",
                                (int)nl, spec);
    memcpy(ret->name, spec, nl);
    const char *p = spec + nl;
    if (*p == '=') {
        p++;
        const char *colon = strchr(p, ':');
        const char *end = colon ? colon : p + strlen(p);
        while (p < end) {
            size_t ml = strcspn(p, ",:");
            if (p + ml > end)
                ml = (size_t)(end - p);
            int r = add_module(ret, p, ml, err);
            if (r < 0)
                return r;
            p += ml;
            if (*p == ',')
                p++;
        }
        p = end;
    }
    if (*p == ':')
        return parse_size(p + 1, ret, err);
    return 0;
}

int flavour_set_add(struct flavour_set *s, const char *spec, struct sg_error *err)
{
    if (s->n >= FLAVOUR_MAX)
        return sg_error_set(err, -E2BIG, "more than %u flavours", FLAVOUR_MAX);
    int r = flavour_parse(spec, &s->f[s->n], err);
    if (r == 0)
        s->n++;
    return r;
}

int flavour_set_add_list(struct flavour_set *s, const char *list, struct sg_error *err)
{
    if (strlen(list) > FLAVOUR_SPEC_MAX)
        return sg_error_set(err, -EINVAL, "flavour list longer than %u bytes", FLAVOUR_SPEC_MAX);
    char one[FLAVOUR_SPEC_MAX + 1];
    const char *p = list;
    while (*p) {
        size_t n = strcspn(p, "; \t\n");
        if (n) {
            memcpy(one, p, n);
            one[n] = '\0';
            int r = flavour_set_add(s, one, err);
            if (r < 0)
                return r;
        }
        p += n;
        if (*p)
            p++;
    }
    return 0;
}

void flavour_set_defaults(struct flavour_set *s, bool python)
{
    static const char *const py[] = {"plain", "numpy=numpy:1", "pandas=numpy,pandas:1",
                                     "matplotlib=numpy,pandas,matplotlib:1"};
    memset(s, 0, sizeof(*s));
    size_t n = python ? sizeof(py) / sizeof(py[0]) : 1;
    for (size_t i = 0; i < n; i++)
        flavour_set_add(s, py[i], NULL); /* constant specs: cannot fail */
}

static bool same_modules(const struct flavour *a, const struct flavour *b)
{
    if (a->n_modules != b->n_modules)
        return false;
    for (unsigned i = 0; i < a->n_modules; i++) {
        bool found = false;
        for (unsigned k = 0; k < b->n_modules && !found; k++)
            found = strcmp(a->modules[i], b->modules[k]) == 0;
        if (!found)
            return false;
    }
    return true;
}

static bool costlier(const struct flavour *a, const struct flavour *b)
{
    return a->n_modules != b->n_modules ? a->n_modules > b->n_modules
                                        : a->n_provides > b->n_provides;
}

int flavour_set_finish(struct flavour_set *s, unsigned plain_size, struct sg_error *err)
{
    if (s->n == 0)
        return sg_error_set(err, -EINVAL, "at least one flavour is needed");
    for (unsigned i = 0; i < s->n; i++) {
        struct flavour *f = &s->f[i];
        if (!f->size_set)
            f->size = f->n_modules ? 1 : plain_size;
        for (unsigned k = 0; k < i; k++) {
            if (strcmp(s->f[k].name, f->name) == 0)
                return sg_error_set(err, -EINVAL, "flavour '%s' is defined twice", f->name);
            if (same_modules(&s->f[k], f) && strcmp(s->f[k].image, f->image) == 0)
                return sg_error_set(err, -EINVAL,
                                    "flavours '%s' and '%s' pre-import the same "
                                    "modules",
                                    s->f[k].name, f->name);
        }
    }
    /* insertion sort, stable: cost order is module count, then the modules
     * a set's image adds, then the order given */
    for (unsigned i = 1; i < s->n; i++) {
        struct flavour t = s->f[i];
        unsigned k = i;
        for (; k > 0 && costlier(&s->f[k - 1], &t); k--)
            s->f[k] = s->f[k - 1];
        s->f[k] = t;
    }
    return 0;
}

/* Length of the top-level part of a module name: "pandas" of "pandas.io",
 * "lodash" of "lodash/fp", "@scope/pkg" of "@scope/pkg/sub". */
static size_t top_len(const char *m)
{
    if (strncmp(m, "node:", 5) == 0)
        return strlen(m);
    if (m[0] == '@') {
        const char *slash = strchr(m, '/');
        return slash ? (size_t)(slash - m) + 1 + strcspn(slash + 1, "/.") : strlen(m);
    }
    return strcspn(m, "./");
}

static bool top_eq(const char *a, const char *b)
{
    size_t la = top_len(a), lb = top_len(b);
    return la == lb && memcmp(a, b, la) == 0;
}

bool flavour_provides(const struct flavour *f, const char *top)
{
    for (unsigned i = 0; i < f->n_modules; i++)
        if (top_eq(f->modules[i], top))
            return true;
    return false;
}

bool flavour_installs(const struct flavour *f, const char *top)
{
    for (unsigned i = 0; i < f->n_provides; i++)
        if (top_eq(f->provides[i], top))
            return true;
    return false;
}

int flavour_add_provides(struct flavour *f, const char *module, struct sg_error *err)
{
    size_t len = strlen(module);
    int r = check_module(f, "set", module, len, err);
    if (r < 0)
        return r;
    if (flavour_installs(f, module))
        return 0; /* two packages of a set may share a top-level name */
    if (f->n_provides >= FLAVOUR_PROVIDES_MAX)
        return sg_error_set(err, -EINVAL, "set '%s': more than %u modules", f->name,
                            FLAVOUR_PROVIDES_MAX);
    memcpy(f->provides[f->n_provides++], module, len + 1);
    return 0;
}

void flavour_preimport(const struct flavour *f, char *out, size_t outsz)
{
    size_t used = 0;
    if (outsz)
        out[0] = '\0';
    for (unsigned i = 0; i < f->n_modules && used < outsz; i++) {
        int n = snprintf(out + used, outsz - used, "%s%s", i ? "," : "", f->modules[i]);
        if (n < 0)
            break;
        used += (size_t)n;
    }
}

/* The job's heavy imports: those some flavour pre-imports (deduplicated). */
static size_t heavy_imports(const struct flavour_set *s, const char *const *imports, size_t n,
                            const char **ret, size_t cap)
{
    size_t k = 0;
    for (size_t i = 0; i < n && k < cap; i++) {
        bool heavy = false, dup = false;
        for (unsigned f = 0; f < s->n && !heavy; f++)
            heavy = flavour_provides(&s->f[f], imports[i]);
        for (size_t j = 0; j < k && !dup; j++)
            dup = top_eq(ret[j], imports[i]);
        if (heavy && !dup)
            ret[k++] = imports[i];
    }
    return k;
}

/* How many of heavy[] f provides; *ret_extra: whether f carries a module the
 * job does not use. */
static unsigned coverage(const struct flavour *f, const char *const *heavy, size_t nh,
                         bool *ret_extra)
{
    unsigned c = 0;
    for (size_t i = 0; i < nh; i++)
        c += flavour_provides(f, heavy[i]);
    bool extra = false;
    for (unsigned m = 0; m < f->n_modules && !extra; m++) {
        bool used = false;
        for (size_t i = 0; i < nh && !used; i++)
            used = top_eq(f->modules[m], heavy[i]);
        extra = !used;
    }
    *ret_extra = extra;
    return c;
}

/* Which flavours install every import some flavour installs (used[f] =
 * true marks the others as not to be tried); the first import none can
 * serve with the rest, or NULL. */
static const char *eligible(const struct flavour_set *s, const char *const *imports, size_t n,
                            bool *used)
{
    const char *missing = NULL;
    for (size_t i = 0; i < n; i++) {
        bool required = false;
        for (unsigned f = 0; f < s->n && !required; f++)
            required = flavour_installs(&s->f[f], imports[i]);
        for (unsigned f = 0; f < s->n && required; f++)
            if (!flavour_installs(&s->f[f], imports[i]))
                used[f] = true;
        if (required && !missing)
            missing = imports[i];
    }
    for (unsigned f = 0; f < s->n; f++)
        if (!used[f])
            return NULL;
    return missing;
}

void flavour_choose(const struct flavour_set *s, const char *const *imports, size_t n,
                    struct flavour_choice *ret)
{
    const char *heavy[FLAVOUR_MAX * FLAVOUR_MODULES_MAX];
    size_t nh = heavy_imports(s, imports, n, heavy, sizeof(heavy) / sizeof(heavy[0]));
    unsigned cov[FLAVOUR_MAX];
    bool extra[FLAVOUR_MAX], used[FLAVOUR_MAX] = {false};
    memset(ret, 0, sizeof(*ret));
    ret->heavy = (unsigned)nh;
    ret->missing = eligible(s, imports, n, used);
    if (ret->missing)
        return;
    for (unsigned f = 0; f < s->n; f++)
        cov[f] = coverage(&s->f[f], heavy, nh, &extra[f]);
    /* ideal: the cheapest flavour that covers every heavy import */
    for (unsigned f = 0; f < s->n && ret->n == 0; f++) {
        if (!used[f] && cov[f] == nh) {
            ret->order[ret->n++] = f;
            used[f] = true;
        }
    }
    /* fall-backs: flavours carrying nothing the job does not use, most
     * coverage first, then cheapest */
    for (;;) {
        int best = -1;
        for (unsigned f = 0; f < s->n; f++)
            if (!used[f] && !extra[f] && (best < 0 || cov[f] > cov[best]))
                best = (int)f;
        if (best < 0)
            break;
        used[best] = true;
        ret->order[ret->n++] = (unsigned)best;
    }
    for (unsigned f = 0; f < s->n && ret->n == 0; f++)
        if (!used[f]) /* nothing fits: the cheapest sandbox still runs it */
            ret->order[ret->n++] = f;
}

void flavour_prefer(const struct flavour_set *s, const char *name, struct flavour_choice *c)
{
    unsigned f = 0;
    while (name && f < s->n && strcmp(s->f[f].name, name) != 0)
        f++;
    if (!name || f == s->n || c->n == 0)
        return;
    unsigned i = 0;
    while (i < c->n && c->order[i] != f)
        i++;
    if (i == c->n) {
        /* Not among the job's choices: taken only on the ideal flavour's
         * image (the same packages installed) and carrying every module it
         * pre-imports, so a package set the job needs is never traded for
         * the name a client sent. */
        const struct flavour *ideal = &s->f[c->order[0]];
        if (strcmp(s->f[f].image, ideal->image) != 0)
            return;
        for (unsigned m = 0; m < ideal->n_modules; m++)
            if (!flavour_provides(&s->f[f], ideal->modules[m]))
                return;
        if (c->n < FLAVOUR_MAX)
            c->n++;
    }
    for (unsigned k = i < c->n ? i : c->n - 1; k > 0; k--)
        c->order[k] = c->order[k - 1];
    c->order[0] = f;
}

int flavour_pick(const struct flavour_choice *c, const unsigned *idle)
{
    for (unsigned i = 0; i < c->n; i++)
        if (idle[c->order[i]] > 0)
            return (int)c->order[i];
    return -1;
}

unsigned flavour_mem_estimate(const struct flavour *f)
{
    if (f->mem_mb)
        return f->mem_mb;
    return FLAVOUR_MEM_BASE_MB + FLAVOUR_MEM_PER_MODULE_MB * f->n_modules;
}

void flavour_targets(const struct flavour_set *s, const unsigned *want, const unsigned *mem_mb,
                     unsigned budget_mb, unsigned *ret)
{
    unsigned long long used = 0;
    for (unsigned f = 0; f < s->n; f++)
        ret[f] = budget_mb ? 0 : want[f];
    if (!budget_mb)
        return;
    bool more = true;
    while (more) {
        more = false;
        for (unsigned f = 0; f < s->n; f++) {
            unsigned m = mem_mb[f] ? mem_mb[f] : 1;
            if (ret[f] < want[f] && used + m <= budget_mb) {
                ret[f]++;
                used += m;
                more = true;
            }
        }
    }
}

unsigned flavour_want(unsigned size, unsigned arrivals, unsigned window_ms, unsigned refill_ms)
{
    if (size == 0)
        return 0;
    unsigned long long need =
        window_ms ? ((unsigned long long)arrivals * refill_ms + window_ms - 1) / window_ms : 1;
    if (need < 1)
        need = 1;
    return need > size ? size : (unsigned)need;
}
