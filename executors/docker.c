#include "docker.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct docker_client {
    char socket_path[4096];
};

struct reply_sink {
    struct sg_buf *body;
    int overflow;
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static void curl_init_once(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

int docker_client_new(const char *socket_path, struct docker_client **ret, struct sg_error *err)
{
    if (strlen(socket_path) >= sizeof(((struct docker_client *)0)->socket_path))
        return sg_error_set(err, -ENAMETOOLONG, "docker socket path too long");
    pthread_once(&curl_once, curl_init_once);
    struct docker_client *dc = calloc(1, sizeof(*dc));
    if (!dc)
        return sg_error_set(err, -ENOMEM, "out of memory");
    snprintf(dc->socket_path, sizeof(dc->socket_path), "%s", socket_path);
    *ret = dc;
    return 0;
}

void docker_client_free(struct docker_client *dc)
{
    free(dc);
}

const char *docker_client_socket(const struct docker_client *dc)
{
    return dc->socket_path;
}

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *userdata)
{
    struct reply_sink *s = userdata;
    size_t n = size * nmemb;
    if (sg_buf_append(s->body, ptr, n) < 0) {
        s->overflow = 1;
        return 0; /* makes curl fail with CURLE_WRITE_ERROR */
    }
    return n;
}

static int map_curl_error(CURLcode rc, int overflow, const char *sock, struct sg_error *err)
{
    if (overflow)
        return sg_error_set(err, -E2BIG, "docker reply exceeds its size cap");
    switch (rc) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
        return sg_error_set(err, -EHOSTDOWN, "dockerd unreachable at %s: %s", sock,
                            curl_easy_strerror(rc));
    case CURLE_OPERATION_TIMEDOUT:
        return sg_error_set(err, -ETIMEDOUT, "dockerd did not answer in time");
    default:
        return sg_error_set(err, -EIO, "docker API call failed: %s", curl_easy_strerror(rc));
    }
}

int docker_call(struct docker_client *dc, const char *method, const char *path, const char *body,
                long timeout_ms, size_t max_reply, long *ret_status, struct sg_buf *ret_body,
                struct sg_error *err)
{
    char url[2048];
    if ((size_t)snprintf(url, sizeof(url), "http://docker%s%s", DOCKER_API_PREFIX, path) >=
        sizeof(url))
        return sg_error_set(err, -ENAMETOOLONG, "docker API path too long");
    CURL *c = curl_easy_init();
    if (!c)
        return sg_error_set(err, -ENOMEM, "curl_easy_init failed");
    struct curl_slist *hdrs = curl_slist_append(NULL, "Content-Type: application/json");
    ret_body->cap = max_reply;
    struct reply_sink sink = {.body = ret_body};
    curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, dc->socket_path);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms < 5000 ? timeout_ms : 5000L);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &sink);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http");
    if (body) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
    } else if (strcmp(method, "POST") == 0) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, "");
    }
    CURLcode rc = curl_easy_perform(c);
    int r = 0;
    if (rc != CURLE_OK)
        r = map_curl_error(rc, sink.overflow, dc->socket_path, err);
    else
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, ret_status);
    curl_slist_free_all(hdrs);
    curl_easy_cleanup(c);
    return r;
}

/* A call whose reply status must be one of ok1/ok2; anything else becomes an
 * error carrying the engine's message. */
static int call_expect(struct docker_client *dc, const char *method, const char *path,
                       const char *body, long timeout_ms, long ok1, long ok2,
                       struct sg_buf *ret_body, struct sg_error *err)
{
    long status = 0;
    int r =
        docker_call(dc, method, path, body, timeout_ms, DOCKER_REPLY_MAX, &status, ret_body, err);
    if (r < 0)
        return r;
    if (status == ok1 || status == ok2)
        return 0;
    char msg[256];
    docker_parse_message(ret_body->data, ret_body->len, msg, sizeof(msg));
    int code = status == 404 ? -ENOENT : status == 409 ? -EALREADY : -EIO;
    return sg_error_set(err, code, "docker %s %s: HTTP %ld: %s", method, path, status,
                        msg[0] ? msg : "(no message)");
}

int docker_ping(struct docker_client *dc, long timeout_ms, struct sg_error *err)
{
    struct sg_buf b;
    sg_buf_init(&b, DOCKER_REPLY_MAX);
    int r = call_expect(dc, "GET", "/_ping", NULL, timeout_ms, 200, 200, &b, err);
    sg_buf_free(&b);
    return r;
}

int docker_runtime_registered(struct docker_client *dc, const char *name, bool *ret_found,
                              struct sg_error *err)
{
    struct sg_buf b;
    sg_buf_init(&b, DOCKER_REPLY_MAX);
    int r = call_expect(dc, "GET", "/info", NULL, DOCKER_CALL_TIMEOUT_MS, 200, 200, &b, err);
    if (r == 0 && docker_parse_runtimes(b.data, b.len, name, ret_found) < 0)
        r = sg_error_set(err, -EPROTO, "malformed /info reply from dockerd");
    sg_buf_free(&b);
    return r;
}

/* Image references and ids go into URL paths: allow only the characters a
 * reference can hold, so nothing can smuggle a query or another path. */
static int path_safe(const char *s)
{
    if (!*s || strlen(s) > 512)
        return 0;
    for (; *s; s++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-/:@", *s))
            return 0;
    return 1;
}

int docker_image_exists(struct docker_client *dc, const char *image, bool *ret_split,
                        struct sg_error *err)
{
    if (!path_safe(image))
        return sg_error_set(err, -EINVAL, "image reference has unexpected characters");
    char path[600];
    snprintf(path, sizeof(path), "/images/%s/json", image);
    struct sg_buf b;
    sg_buf_init(&b, DOCKER_REPLY_MAX);
    int r = call_expect(dc, "GET", path, NULL, DOCKER_CALL_TIMEOUT_MS, 200, 200, &b, err);
    if (r == 0 && ret_split && docker_parse_image_split(b.data, b.len, ret_split) < 0)
        r = sg_error_set(err, -EPROTO, "malformed image inspect reply from dockerd");
    sg_buf_free(&b);
    return r;
}

int docker_create(struct docker_client *dc, const char *body, char ret_id[DOCKER_ID_LEN + 1],
                  struct sg_error *err)
{
    struct sg_buf b;
    sg_buf_init(&b, DOCKER_REPLY_MAX);
    int r = call_expect(dc, "POST", "/containers/create", body, DOCKER_CALL_TIMEOUT_MS, 201, 201,
                        &b, err);
    if (r == 0 && docker_parse_create(b.data, b.len, ret_id) < 0)
        r = sg_error_set(err, -EPROTO, "malformed create reply from dockerd");
    sg_buf_free(&b);
    return r;
}

/* A call on /containers/{id}{suffix}. */
static int id_call(struct docker_client *dc, const char *method, const char *id, const char *suffix,
                   long timeout_ms, long ok1, long ok2, struct sg_buf *b, struct sg_error *err)
{
    if (!docker_id_valid(id))
        return sg_error_set(err, -EINVAL, "invalid container id");
    char path[256];
    snprintf(path, sizeof(path), "/containers/%s%s", id, suffix);
    return call_expect(dc, method, path, NULL, timeout_ms, ok1, ok2, b, err);
}

int docker_start(struct docker_client *dc, const char *id, struct sg_error *err)
{
    struct sg_buf b;
    sg_buf_init(&b, DOCKER_REPLY_MAX);
    int r = id_call(dc, "POST", id, "/start", DOCKER_CALL_TIMEOUT_MS, 204, 304, &b, err);
    sg_buf_free(&b);
    return r;
}

int docker_remove(struct docker_client *dc, const char *id, long timeout_ms, struct sg_error *err)
{
    struct sg_buf b;
    sg_buf_init(&b, DOCKER_REPLY_MAX);
    int r = id_call(dc, "DELETE", id, "?force=1&v=1", timeout_ms, 204, 204, &b, err);
    sg_buf_free(&b);
    /* 409 to a forced removal: another removal of it is under way (a crashed
     * executor's restart meets dockerd still removing its sandboxes). It is
     * going; should that removal fail, the label brings it to a sweep. */
    return r == -ENOENT || r == -EALREADY ? 0 : r;
}

int docker_wait(struct docker_client *dc, const char *id, long timeout_ms, int *ret_exit,
                struct sg_error *err)
{
    struct sg_buf b;
    sg_buf_init(&b, DOCKER_REPLY_MAX);
    int r = id_call(dc, "POST", id, "/wait?condition=not-running", timeout_ms, 200, 200, &b, err);
    if (r == 0 && docker_parse_wait(b.data, b.len, ret_exit) < 0)
        r = sg_error_set(err, -EPROTO, "malformed wait reply from dockerd");
    sg_buf_free(&b);
    return r;
}

int docker_inspect(struct docker_client *dc, const char *id, struct docker_state *ret,
                   struct sg_error *err)
{
    struct sg_buf b;
    sg_buf_init(&b, DOCKER_REPLY_MAX);
    int r = id_call(dc, "GET", id, "/json", DOCKER_CALL_TIMEOUT_MS, 200, 200, &b, err);
    if (r == 0 && docker_parse_inspect(b.data, b.len, ret) < 0)
        r = sg_error_set(err, -EPROTO, "malformed inspect reply from dockerd");
    sg_buf_free(&b);
    return r;
}

int docker_parse_ip(const char *body, size_t len, const char *network,
                    char ret_ip[DOCKER_IP_TEXT_MAX])
{
    json_t *root = json_loadb(body, len, 0, NULL);
    json_t *nets = json_object_get(json_object_get(root, "NetworkSettings"), "Networks");
    const char *ip =
        json_string_value(json_object_get(json_object_get(nets, network), "IPAddress"));
    struct in_addr a;
    int r = ip && inet_pton(AF_INET, ip, &a) == 1 ? 0 : -EPROTO;
    if (r == 0)
        snprintf(ret_ip, DOCKER_IP_TEXT_MAX, "%s", ip);
    json_decref(root);
    return r;
}

int docker_container_ip(struct docker_client *dc, const char *id, const char *network,
                        char ret_ip[DOCKER_IP_TEXT_MAX], struct sg_error *err)
{
    struct sg_buf b;
    sg_buf_init(&b, DOCKER_REPLY_MAX);
    int r = id_call(dc, "GET", id, "/json", DOCKER_CALL_TIMEOUT_MS, 200, 200, &b, err);
    if (r == 0 && docker_parse_ip(b.data, b.len, network, ret_ip) < 0)
        r = sg_error_set(err, -EPROTO, "container %.12s has no address on network %s", id, network);
    sg_buf_free(&b);
    return r;
}

int docker_oom_event(struct docker_client *dc, const char *id, double since_s, double until_s,
                     bool *ret_seen, struct sg_error *err)
{
    *ret_seen = false;
    if (!docker_id_valid(id))
        return sg_error_set(err, -EINVAL, "invalid container id");
    /* filters={"container":["ID"],"event":["oom"]}, URL-encoded; until in
     * the past makes dockerd answer from its recent-events buffer at once. */
    char path[512];
    snprintf(path, sizeof(path),
             "/events?since=%.3f&until=%.3f&filters=%%7B%%22container%%22%%3A%%5B%%22%s%%22%%5D"
             "%%2C%%22event%%22%%3A%%5B%%22oom%%22%%5D%%7D",
             since_s, until_s, id);
    struct sg_buf b;
    sg_buf_init(&b, DOCKER_REPLY_MAX);
    int r = call_expect(dc, "GET", path, NULL, DOCKER_CALL_TIMEOUT_MS, 200, 200, &b, err);
    if (r == 0)
        *ret_seen = docker_parse_oom_events(b.data, b.len, id);
    sg_buf_free(&b);
    return r;
}

int docker_memory_usage(struct docker_client *dc, const char *id, unsigned long long *ret_bytes,
                        struct sg_error *err)
{
    struct sg_buf b;
    sg_buf_init(&b, DOCKER_REPLY_MAX);
    int r = id_call(dc, "GET", id, "/stats?stream=false&one-shot=true", DOCKER_CALL_TIMEOUT_MS, 200,
                    200, &b, err);
    if (r == 0 && docker_parse_stats_memory(b.data, b.len, ret_bytes) < 0)
        r = sg_error_set(err, -EPROTO, "malformed stats reply from dockerd");
    sg_buf_free(&b);
    return r;
}

int docker_list_by_label(struct docker_client *dc, const char *key, const char *value,
                         char (**ret_ids)[DOCKER_ID_LEN + 1], size_t *ret_n, struct sg_error *err)
{
    if (!path_safe(key) || !path_safe(value))
        return sg_error_set(err, -EINVAL, "label has unexpected characters");
    char path[1400];
    /* filters={"label":["key=value"]}, URL-encoded */
    snprintf(path, sizeof(path),
             "/containers/json?all=1&filters=%%7B%%22label%%22%%3A%%5B%%22%s%%3D%s%%22%%5D%%7D",
             key, value);
    struct sg_buf b;
    sg_buf_init(&b, DOCKER_LIST_REPLY_MAX);
    long status = 0;
    int r = docker_call(dc, "GET", path, NULL, DOCKER_CALL_TIMEOUT_MS, DOCKER_LIST_REPLY_MAX,
                        &status, &b, err);
    if (r == 0 && status != 200)
        r = sg_error_set(err, -EIO, "docker list containers: HTTP %ld", status);
    if (r == 0 && docker_parse_list(b.data, b.len, ret_ids, ret_n) < 0)
        r = sg_error_set(err, -EPROTO, "malformed container list from dockerd");
    sg_buf_free(&b);
    return r;
}

/* ---- pure parsers ---- */

bool docker_id_valid(const char *s)
{
    size_t i = 0;
    for (; s[i]; i++)
        if (i >= DOCKER_ID_LEN || !((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return false;
    return i == DOCKER_ID_LEN;
}

static json_t *load(const char *body, size_t len)
{
    if (!body || len == 0)
        return NULL;
    return json_loadb(body, len, 0, NULL);
}

int docker_parse_create(const char *body, size_t len, char ret_id[DOCKER_ID_LEN + 1])
{
    json_t *j = load(body, len);
    const char *id = json_string_value(json_object_get(j, "Id"));
    int r = -EPROTO;
    if (id && docker_id_valid(id)) {
        memcpy(ret_id, id, DOCKER_ID_LEN + 1);
        r = 0;
    }
    json_decref(j);
    return r;
}

static int int_field(json_t *o, const char *key, int *ret)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_integer(v))
        return -EPROTO;
    json_int_t n = json_integer_value(v);
    if (n < -2147483647LL || n > 2147483647LL)
        return -EPROTO;
    *ret = (int)n;
    return 0;
}

int docker_parse_image_split(const char *body, size_t len, bool *ret_split)
{
    json_t *j = load(body, len);
    json_t *cfg = json_object_get(j, "Config");
    int r = json_is_object(j) ? 0 : -EPROTO;
    const char *v =
        json_string_value(json_object_get(json_object_get(cfg, "Labels"), DOCKER_LABEL_IDENTITY));
    *ret_split = v && strcmp(v, "split") == 0;
    json_decref(j);
    return r;
}

int docker_parse_inspect(const char *body, size_t len, struct docker_state *ret)
{
    json_t *j = load(body, len);
    json_t *st = json_object_get(j, "State");
    int r = -EPROTO;
    memset(ret, 0, sizeof(*ret));
    if (!json_is_object(st) || int_field(st, "ExitCode", &ret->exit_code) < 0)
        goto out;
    ret->running = json_is_true(json_object_get(st, "Running"));
    ret->oom_killed = json_is_true(json_object_get(st, "OOMKilled"));
    const char *s = json_string_value(json_object_get(st, "Status"));
    snprintf(ret->status, sizeof(ret->status), "%s", s ? s : "");
    const char *e = json_string_value(json_object_get(st, "Error"));
    snprintf(ret->error, sizeof(ret->error), "%s", e ? e : "");
    r = 0;
out:
    json_decref(j);
    return r;
}

/* One JSON object per line (the events stream); an "oom" event of this
 * container in either the current (Action, Actor.ID) or the old (status, id)
 * fields. A line that is not such an object is skipped. */
bool docker_parse_oom_events(const char *body, size_t len, const char *id)
{
    size_t off = 0;
    while (body && off < len) {
        const char *nl = memchr(body + off, '\n', len - off);
        size_t n = nl ? (size_t)(nl - (body + off)) : len - off;
        json_t *e = json_loadb(body + off, n, 0, NULL);
        const char *action = json_string_value(json_object_get(e, "Action"));
        const char *status = json_string_value(json_object_get(e, "status"));
        const char *eid = json_string_value(json_object_get(json_object_get(e, "Actor"), "ID"));
        if (!eid)
            eid = json_string_value(json_object_get(e, "id"));
        bool oom =
            ((action && strcmp(action, "oom") == 0) || (status && strcmp(status, "oom") == 0)) &&
            eid && strcmp(eid, id) == 0;
        json_decref(e);
        if (oom)
            return true;
        off += n + 1;
    }
    return false;
}

int docker_parse_wait(const char *body, size_t len, int *ret_exit)
{
    json_t *j = load(body, len);
    int r = int_field(j, "StatusCode", ret_exit);
    json_decref(j);
    return r;
}

int docker_parse_runtimes(const char *body, size_t len, const char *name, bool *ret_found)
{
    json_t *j = load(body, len);
    json_t *rt = json_object_get(j, "Runtimes");
    int r = -EPROTO;
    if (json_is_object(rt)) {
        *ret_found = json_object_get(rt, name) != NULL;
        r = 0;
    }
    json_decref(j);
    return r;
}

int docker_parse_list(const char *body, size_t len, char (**ret_ids)[DOCKER_ID_LEN + 1],
                      size_t *ret_n)
{
    json_t *j = load(body, len);
    int r = -EPROTO;
    char(*ids)[DOCKER_ID_LEN + 1] = NULL;
    size_t n = 0, i;
    json_t *c;
    if (!json_is_array(j) || json_array_size(j) > DOCKER_LIST_MAX)
        goto out;
    ids = calloc(json_array_size(j) + 1, sizeof(*ids));
    if (!ids) {
        r = -ENOMEM;
        goto out;
    }
    json_array_foreach(j, i, c)
    {
        const char *id = json_string_value(json_object_get(c, "Id"));
        if (!id || !docker_id_valid(id))
            goto out;
        memcpy(ids[n++], id, DOCKER_ID_LEN + 1);
    }
    *ret_ids = ids;
    *ret_n = n;
    ids = NULL;
    r = 0;
out:
    free(ids);
    json_decref(j);
    return r;
}

void docker_parse_message(const char *body, size_t len, char *out, size_t outsz)
{
    out[0] = '\0';
    json_t *j = load(body, len);
    const char *m = json_string_value(json_object_get(j, "message"));
    if (m)
        snprintf(out, outsz, "%s", m);
    json_decref(j);
}

int docker_parse_stats_memory(const char *body, size_t len, unsigned long long *ret_bytes)
{
    json_t *j = load(body, len);
    json_t *ms = json_object_get(j, "memory_stats");
    json_t *usage = json_object_get(ms, "usage");
    json_t *st = json_object_get(ms, "stats");
    int r = -EPROTO;
    if (json_is_integer(usage) && json_integer_value(usage) >= 0) {
        /* as `docker stats` shows it: the page cache that can be dropped
         * (inactive files; cgroup v1 then v2 name) is not the sandbox's */
        json_int_t u = json_integer_value(usage);
        json_t *inactive = json_object_get(st, "total_inactive_file");
        if (!inactive)
            inactive = json_object_get(st, "inactive_file");
        json_int_t in = json_is_integer(inactive) ? json_integer_value(inactive) : 0;
        *ret_bytes = (unsigned long long)(in >= 0 && in < u ? u - in : u);
        r = 0;
    }
    json_decref(j);
    return r;
}
