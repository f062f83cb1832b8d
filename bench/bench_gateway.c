/* bench_gateway - load generator and stub executor for bench/run-gateway.sh.
 *
 *   bench_gateway stub PORT
 *       a stub sandgate-executor on 127.0.0.1:PORT answering POST /v1/exec at
 *       once with a hello-world result (and GET /healthz); runs until killed.
 *   bench_gateway latency DIRECT_URL GATEWAY_URL N LANGUAGE
 *       N sequential hello-world jobs straight to the executor (/v1/exec) and
 *       N through the gateway (/run), interleaved, keep-alive; prints p50/p99
 *       of each and the gateway overhead (gateway minus direct).
 *   bench_gateway rps URL CONCURRENCY SECONDS BODY_FILE
 *       POST BODY_FILE to URL from CONCURRENCY keep-alive clients for SECONDS;
 *       prints requests/s and how many answers were not HTTP 200.
 *   bench_gateway rps-unique URL CONCURRENCY SECONDS BODY_FILE
 *       the same, but BODY_FILE holds the marker UNIQUE_MARKER (in a comment
 *       of the code) and every request replaces it with a different
 *       counter of the same length, so no two requests carry the same code
 *       (the gateway's verdict cache can never hit).
 */
#include <curl/curl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "b64.h"
#include "httpsrv.h"
#include "readfile.h"

#define MAX_SAMPLES 100000
#define MAX_THREADS 64
#define BODY_MAX (16u * 1024u * 1024u)
#define UNIQUE_MARKER "SGUNIQUE00000000"
#define UNIQUE_LEN (sizeof(UNIQUE_MARKER) - 1)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static size_t discard(char *p, size_t s, size_t n, void *ud)
{
    (void)p;
    (void)ud;
    return s * n;
}

static void stub_handler(void *ctx, const struct sg_http_request *req,
                         struct sg_http_response *resp)
{
    (void)ctx;
    resp->body = strdup(strcmp(req->url, "/healthz") == 0
                            ? "{\"status\":\"ok\"}"
                            : "{\"status\":\"success\",\"stdout\":\"hello\\n\",\"stderr\":\"\","
                              "\"exit_code\":0,\"detail\":null,\"time_used_ms\":0.1,"
                              "\"memory_used_kb\":0,\"resource_limit_type\":null,"
                              "\"unauthorized_access_type\":null,\"runtime_error_type\":null,"
                              "\"artifacts\":[],\"result\":{\"present\":true,\"value\":\"hello\","
                              "\"type\":\"json\"}}");
}

static int run_stub(int port)
{
    struct sg_httpsrv_config c = {
        .port = (uint16_t)port, .max_body = BODY_MAX, .max_connections = 256, .timeout_s = 60};
    struct sg_httpsrv *srv;
    struct sg_error err = {0};
    if (sg_httpsrv_start(&c, &(struct sg_http_handlers){.handle = stub_handler}, NULL, &srv, &err) <
        0) {
        fprintf(stderr, "stub: %s\n", err.msg);
        return 1;
    }
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    int sig;
    sigwait(&set, &sig);
    sg_httpsrv_stop(srv);
    return 0;
}

static CURL *client(const char *url, const char *body, struct curl_slist *hdrs)
{
    CURL *c = curl_easy_init();
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_TCP_NODELAY, 1L);
    return c;
}

/* One request; returns seconds, or -1 when it was not HTTP 200. */
static double timed(CURL *c)
{
    double t = now_s();
    long status = 0;
    if (curl_easy_perform(c) != CURLE_OK)
        return -1;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    return status == 200 ? now_s() - t : -1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double pct(double *v, size_t n, double p)
{
    return v[(size_t)(p * (double)(n - 1) + 0.5)];
}

static int run_latency(const char *direct, const char *gateway, size_t n, const char *lang)
{
    const char *code = strcmp(lang, "python") == 0
                           ? "def main():\n    print('hello')\n    return 'hello'\n"
                           : "function main() {\n  console.log('hello');\n  return 'hello';\n}\n"
                             "module.exports = { main };\n";
    char *code_b64 = NULL, direct_body[1024], gw_body[1024], exec_url[512], run_url[512];
    size_t blen;
    sg_b64_encode((const unsigned char *)code, strlen(code), &code_b64, &blen);
    snprintf(direct_body, sizeof(direct_body),
             "{\"job_id\":\"bench\",\"language\":\"%s\","
             "\"code\":\"%s\",\"arguments\":{}}",
             lang,
             strcmp(lang, "python") == 0
                 ? "def main():\\n    print('hello')\\n    return 'hello'\\n"
                 : "function main() {\\n  console.log('hello');\\n  return 'hello';\\n}\\n"
                   "module.exports = { main };\\n");
    snprintf(gw_body, sizeof(gw_body),
             "{\"code_b64\":\"%s\",\"language\":\"%s\","
             "\"arguments\":{}}",
             code_b64, lang);
    free(code_b64);
    snprintf(exec_url, sizeof(exec_url), "%s/v1/exec", direct);
    snprintf(run_url, sizeof(run_url), "%s/run", gateway);
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
    CURL *cd = client(exec_url, direct_body, h), *cg = client(run_url, gw_body, h);
    n = n > MAX_SAMPLES ? MAX_SAMPLES : n;
    double *d = calloc(n, sizeof(double)), *g = calloc(n, sizeof(double));
    for (size_t i = 0; i < 50; i++) /* warm up connections and caches */
        timed(cd), timed(cg);
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        d[i] = timed(cd);
        g[i] = timed(cg);
        bad += d[i] < 0 || g[i] < 0;
    }
    qsort(d, n, sizeof(double), cmp_double);
    qsort(g, n, sizeof(double), cmp_double);
    printf("hello-world %s, %zu sequential requests each (keep-alive):\n", lang, n);
    printf("  executor direct   p50 %.3f ms  p99 %.3f ms\n", pct(d, n, .5) * 1e3,
           pct(d, n, .99) * 1e3);
    printf("  through gateway   p50 %.3f ms  p99 %.3f ms\n", pct(g, n, .5) * 1e3,
           pct(g, n, .99) * 1e3);
    printf("  gateway overhead  p50 %.3f ms  p99 %.3f ms  (target p50 <= 1 ms)\n",
           (pct(g, n, .5) - pct(d, n, .5)) * 1e3, (pct(g, n, .99) - pct(d, n, .99)) * 1e3);
    if (bad)
        printf("  %d requests did not answer 200\n", bad);
    curl_easy_cleanup(cd);
    curl_easy_cleanup(cg);
    curl_slist_free_all(h);
    free(d);
    free(g);
    return bad ? 1 : 0;
}

struct load {
    const char *url, *body;
    int unique;
    double until;
    atomic_long ok, bad;
    atomic_uint next_thread;
};

static void *load_main(void *arg)
{
    struct load *l = arg;
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
    h = curl_slist_append(h, "Expect:");
    char *body = strdup(l->body); /* this thread's copy, rewritten per request */
    char *mark = body && l->unique ? strstr(body, UNIQUE_MARKER) : NULL;
    /* process id and thread in the top bits: unique across runs as well */
    unsigned long long seq = ((unsigned long long)getpid() & 0xfffffu) << 44 |
                             ((unsigned long long)atomic_fetch_add(&l->next_thread, 1) & 0xffu)
                                 << 36;
    CURL *c = client(l->url, body, h);
    while (body && now_s() < l->until) {
        if (mark) { /* same length: curl sends strlen(body) bytes */
            char num[UNIQUE_LEN + 1];
            snprintf(num, sizeof(num), "%016llx", seq++);
            memcpy(mark, num, UNIQUE_LEN);
        }
        if (timed(c) >= 0)
            atomic_fetch_add(&l->ok, 1);
        else
            atomic_fetch_add(&l->bad, 1);
    }
    curl_easy_cleanup(c);
    curl_slist_free_all(h);
    free(body);
    return NULL;
}

static int run_rps(const char *url, int conc, double secs, const char *body_file, int unique)
{
    char *body = NULL;
    size_t len;
    struct sg_error err = {0};
    if (sg_read_file_capped(body_file, BODY_MAX, &body, &len, &err) < 0) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    if (unique && !strstr(body, UNIQUE_MARKER)) {
        fprintf(stderr, "rps-unique: %s holds no %s marker\n", body_file, UNIQUE_MARKER);
        free(body);
        return 1;
    }
    conc = conc < 1 ? 1 : conc > MAX_THREADS ? MAX_THREADS : conc;
    struct load l = {.url = url, .body = body, .unique = unique};
    pthread_t th[MAX_THREADS];
    double t0 = now_s();
    l.until = t0 + secs;
    for (int i = 0; i < conc; i++)
        pthread_create(&th[i], NULL, load_main, &l);
    for (int i = 0; i < conc; i++)
        pthread_join(th[i], NULL);
    double el = now_s() - t0;
    printf("  concurrency %d: %.0f requests/s (%ld ok, %ld not 200, %.1f s)\n", conc,
           (double)atomic_load(&l.ok) / el, atomic_load(&l.ok), atomic_load(&l.bad), el);
    free(body);
    return atomic_load(&l.bad) ? 1 : 0;
}

int main(int argc, char **argv)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    if (argc == 3 && strcmp(argv[1], "stub") == 0)
        return run_stub(atoi(argv[2]));
    if (argc == 6 && strcmp(argv[1], "latency") == 0)
        return run_latency(argv[2], argv[3], (size_t)atol(argv[4]), argv[5]);
    if (argc == 6 && (strcmp(argv[1], "rps") == 0 || strcmp(argv[1], "rps-unique") == 0))
        return run_rps(argv[2], atoi(argv[3]), atof(argv[4]), argv[5],
                       strcmp(argv[1], "rps-unique") == 0);
    fprintf(stderr, "usage: bench_gateway stub PORT | latency DIRECT GATEWAY N LANG | "
                    "rps|rps-unique URL CONC SECONDS BODY_FILE\n");
    return 2;
}
