/* The on-disk session records (executors/sessions_store.h): a record
 * written is read back the same, the boot id is kept, and a damaged or
 * foreign record is removed, never trusted. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sessions_int.h"
#include "sessions_store.h"

static char dir[64];

static void setup(void)
{
    snprintf(dir, sizeof(dir), "/tmp/sg-sstore-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(sessions_store, .init = setup, .fini = teardown);

static struct session *sample(void)
{
    struct session *x = calloc(1, sizeof(*x));
    sg_buf_init(&x->history, SESSIONS_HISTORY_MAX);
    memset(x->id, 'a', SESSIONS_BOOT_HEX);
    x->id[SESSIONS_BOOT_HEX] = '-';
    memset(x->id + SESSIONS_BOOT_HEX + 1, 'b', SESSIONS_RAND_HEX);
    memset(x->key, 'c', SESSIONS_KEY_HEX);
    memset(x->sb.id, 'd', DOCKER_ID_LEN);
    snprintf(x->tenant, sizeof(x->tenant), "t.alice");
    snprintf(x->label, sizeof(x->label), "default");
    x->created_wall = 1000;
    x->used_wall = 1100;
    x->idle_s = 600;
    x->life_s = 3600;
    x->timeout_ms = 5000;
    x->cells = 2;
    x->memory_kb = -1;
    x->max_output = 1024;
    sg_buf_append(&x->history, "x = 1\ny = 2\n", 12);
    return x;
}

static void write_file(const char *name, const char *text)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

static bool exists(const char *name)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    return access(path, F_OK) == 0;
}

/* Save x (busy or not) with its history, load the directory into *r. */
static size_t save_and_load(struct session *x, bool busy, struct sstore_record **r)
{
    size_t n = 0;
    cr_assert_eq(sstore_save(dir, x, "plain", busy), 0);
    cr_assert_eq(sstore_append_history(dir, x->id, x->history.data, x->history.len), 0);
    cr_assert_eq(sstore_load(dir, r, &n, NULL), 0);
    return n;
}

Test(sessions_store, a_record_reads_back_as_written)
{
    struct session *x = sample();
    struct sstore_record *r = NULL;
    size_t n = save_and_load(x, true, &r);
    cr_assert_eq(n, 1);
    cr_assert_str_eq(r[0].id, x->id);
    cr_assert_str_eq(r[0].tenant, "t.alice");
    cr_assert_str_eq(r[0].key, x->key);
    cr_assert_str_eq(r[0].container, x->sb.id);
    cr_assert_str_eq(r[0].flavour, "plain");
    cr_assert_eq(r[0].busy, true);
    cr_assert_eq(r[0].cells, 2);
    cr_assert_eq(r[0].memory_kb, -1);
    cr_assert_eq(r[0].history_len, 12);
    cr_assert_eq(memcmp(r[0].history, "x = 1\ny = 2\n", 12), 0);
    sstore_records_free(r, n);
    sstore_remove(dir, x->id);
    cr_assert_eq(sstore_load(dir, &r, &n, NULL), 0);
    cr_assert_eq(n, 0);
    sstore_records_free(r, n);
    sg_buf_free(&x->history);
    free(x);
}

Test(sessions_store, the_boot_id_is_kept)
{
    char a[SESSIONS_BOOT_HEX + 1], b[SESSIONS_BOOT_HEX + 1];
    bool kept = true;
    cr_assert_eq(sstore_boot_id(dir, a, &kept, NULL), 0);
    cr_assert_eq(kept, false);
    cr_assert_eq(strlen(a), SESSIONS_BOOT_HEX);
    cr_assert_eq(sstore_boot_id(dir, b, &kept, NULL), 0);
    cr_assert_eq(kept, true);
    cr_assert_str_eq(a, b);
    write_file("boot_id", "not hex at all!!");
    cr_assert_eq(sstore_boot_id(dir, b, &kept, NULL), 0);
    cr_assert_eq(kept, false);
    cr_assert_str_neq(a, b);
}

Test(sessions_store, damaged_and_foreign_records_are_removed)
{
    struct session *x = sample();
    cr_assert_eq(sstore_save(dir, x, "plain", false), 0);
    /* history shorter than the record says: broken, removed */
    cr_assert_eq(sstore_append_history(dir, x->id, "x = 1\n", 6), 0);
    write_file("junk.json", "{");
    write_file("cut.json.tmp", "{\"id\"");
    write_file("ffffffffffffffff-00000000000000000000000000000000.json",
               "{\"id\":\"aaaaaaaaaaaaaaaa-bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\"}");
    struct sstore_record *r = NULL;
    size_t n = 0;
    cr_assert_eq(sstore_load(dir, &r, &n, NULL), 0);
    cr_assert_eq(n, 0);
    sstore_records_free(r, n);
    cr_assert(!exists("junk.json"));
    cr_assert(!exists("cut.json.tmp"));
    cr_assert(!exists("ffffffffffffffff-00000000000000000000000000000000.json"));
    char name[SESSIONS_ID_LEN + 8];
    snprintf(name, sizeof(name), "%s.json", x->id);
    cr_assert(!exists(name));
    snprintf(name, sizeof(name), "%s.hist", x->id);
    cr_assert(!exists(name));
    sg_buf_free(&x->history);
    free(x);
}

Test(sessions_store, a_record_with_a_bad_tenant_or_key_is_not_trusted)
{
    struct session *x = sample();
    snprintf(x->tenant, sizeof(x->tenant), "t/../x");
    struct sstore_record *r = NULL;
    size_t n = save_and_load(x, false, &r);
    cr_assert_eq(n, 0);
    sstore_records_free(r, n);
    sg_buf_free(&x->history);
    free(x);
}
