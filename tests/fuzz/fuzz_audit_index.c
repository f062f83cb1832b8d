/* Fuzz the audit index's reader of the audit log (gw_audit_index.h): the
 * input is a log file (any bytes: partial, overlong, non-JSON or hostile
 * lines) indexed from scratch; every line is indexed or skipped, never
 * twice, the position never passes the file's end, and the console's
 * summary query runs over whatever was indexed. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gw_audit_index.h"
#include "gw_audit_summary.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char db[64], logp[64];
static struct gw_audit_index *x;

static int summary(sqlite3 *d, void *arg)
{
    (void)arg;
    json_t *out = NULL;
    int rc = gw_audit_summary(d, NULL, 1795737600000LL, &out);
    json_decref(out);
    return rc == SQLITE_OK ? 0 : -1;
}

static void cleanup(void)
{
    static const char *const ext[] = {"", "-wal", "-shm"};
    char path[80];
    gw_audit_index_close(x);
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof(path), "%s%s", db, ext[i]);
        unlink(path);
    }
    unlink(logp);
}

static void setup(void)
{
    snprintf(db, sizeof(db), "/tmp/sg-fuzz-aidx-%d.db", (int)getpid());
    snprintf(logp, sizeof(logp), "/tmp/sg-fuzz-aidx-%d.log", (int)getpid());
    struct gw_audit_index_config c = {db, logp, 3650, 1000, 0};
    struct sg_error err = {0};
    if (gw_audit_index_open(&c, 0, &x, &err) < 0)
        abort();
    atexit(cleanup);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!x)
        setup();
    FILE *f = fopen(logp, "w");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
        abort();
    size_t lines = 0;
    for (size_t i = 0; i < size; i++)
        lines += data[i] == '\n';
    uint64_t n = 0;
    struct sg_error err = {0};
    const char *logs[] = {logp};
    if (gw_audit_index_rebuild(x, logs, 1, &n, &err) < 0)
        abort();
    struct gw_audit_index_stats st;
    gw_audit_index_get_stats(x, &st);
    if (n > lines || st.offset > size || gw_audit_index_read(x, 5000, summary, NULL) < 0)
        abort();
    return 0;
}
