#include "gw_relay.h"

#include <errno.h>
#include <jansson.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "gw_sse.h"
#include "membudget.h"

struct relay {
    CURL *c;
    const struct gw_exec_hooks *h;
    struct gw_answer *body;
    struct gw_sse sse;
    int mode; /* 0 undecided, 1 plain body, 2 event stream */
    int aborted, bad, got_result;
    size_t sse_reserved; /* budget bytes reserved for the parser's own buffers */
};

static int on_event(void *ud, const char *event, const char *data, size_t len)
{
    struct relay *x = ud;
    if (!event)
        return 0; /* the executor's heartbeat: the gateway sends its own */
    if (strcmp(event, "result") == 0) {
        if (x->got_result)
            return -EPROTO;
        x->got_result = 1;
        return gw_answer_append(x->body, data, len) < 0 ? -E2BIG : 0;
    }
    if (strcmp(event, "stdout") != 0 && strcmp(event, "stderr") != 0)
        return -EPROTO;
    /* What reaches the client is {"text": string} as the gateway writes it,
     * whatever the executor sent. */
    json_t *in = json_loadb(data, len, JSON_REJECT_DUPLICATES, NULL);
    json_t *text = json_object_get(in, "text");
    json_t *clean =
        json_is_string(text) && json_object_size(in) == 1 ? json_pack("{s:O}", "text", text) : NULL;
    char *out = clean ? json_dumps(clean, JSON_COMPACT) : NULL;
    json_decref(clean);
    json_decref(in);
    if (!out)
        return -EPROTO;
    int r = x->h->event(x->h->ud, event, out, strlen(out));
    free(out);
    if (r < 0) {
        x->aborted = 1;
        return -ECONNRESET;
    }
    return 0;
}

static int decide_mode(struct relay *x)
{
    long status = 0;
    const char *ct = NULL;
    curl_easy_getinfo(x->c, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_getinfo(x->c, CURLINFO_CONTENT_TYPE, &ct);
    if (status != 200 || !ct || strncasecmp(ct, "text/event-stream", 17) != 0)
        return 1;
    if (x->h->start && x->h->start(x->h->ud) < 0)
        x->aborted = 1;
    return 2;
}

/* The parser holds the event being read twice at most (its line, then its
 * data) before on_event takes it into the counted answer: before n more
 * bytes go in, what its buffers may then hold is reserved beside the answer
 * (the stdout and stderr events of a chatty job reuse the same room). */
static int reserve_for_parser(struct relay *x, size_t n)
{
    return gw_answer_reserve_beside(x->body, &x->sse_reserved,
                                    x->sse.line.alloc + x->sse.data.alloc + 2 * n,
                                    x->body->buf.len + x->sse.data.len + n);
}

static size_t on_data(char *data, size_t size, size_t nmemb, void *ud)
{
    struct relay *x = ud;
    size_t n = size * nmemb;
    if (!x->mode)
        x->mode = decide_mode(x);
    if (x->aborted)
        return 0;
    if (x->mode == 1)
        return gw_answer_append(x->body, data, n) == 0 ? n : 0;
    if (x->got_result)
        return n; /* nothing may follow the result; the executor ends here */
    if (reserve_for_parser(x, n) < 0)
        return 0; /* refused: the caller answers its door's busy answer */
    int r = gw_sse_feed(&x->sse, data, n, on_event, x);
    if (r < 0 && !x->aborted)
        x->bad = 1;
    return r < 0 ? 0 : n;
}

/* The client's socket signalled: hung up, or bytes the client sent (then
 * stop watching it: the tick still checks). */
static void client_signal(const struct curl_waitfd *w, int *watch)
{
    char peek;
    if (w->revents && recv(w->fd, &peek, 1, MSG_PEEK | MSG_DONTWAIT) > 0)
        *watch = 0;
}

static void run_multi(struct relay *x, CURLM *m, CURLcode *ret_rc)
{
    int running = 1, watch = 1;
    *ret_rc = CURLE_OK;
    while (running && !x->aborted) {
        if (curl_multi_perform(m, &running) != CURLM_OK)
            break;
        if (!running || x->aborted)
            break;
        int fd = watch && x->h->client_fd ? x->h->client_fd(x->h->ud) : -1;
        struct curl_waitfd w = {.fd = fd, .events = CURL_WAIT_POLLIN};
        curl_multi_poll(m, fd >= 0 ? &w : NULL, fd >= 0 ? 1 : 0, GW_RELAY_TICK_MS, NULL);
        if (fd >= 0)
            client_signal(&w, &watch);
        if (x->h->idle && x->h->idle(x->h->ud) < 0)
            x->aborted = 1;
    }
    CURLMsg *msg;
    int left;
    while ((msg = curl_multi_info_read(m, &left)))
        if (msg->msg == CURLMSG_DONE)
            *ret_rc = msg->data.result;
}

enum gw_relay_end gw_relay_perform(CURL *c, const struct gw_exec_hooks *h, struct gw_answer *body,
                                   CURLcode *ret_rc)
{
    struct relay x = {.c = c, .h = h, .body = body};
    gw_sse_init(&x.sse, body->buf.cap);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &x);
    CURLM *m = curl_multi_init();
    *ret_rc = CURLE_OUT_OF_MEMORY;
    if (m && curl_multi_add_handle(m, c) == CURLM_OK) {
        run_multi(&x, m, ret_rc);
        curl_multi_remove_handle(m, c); /* aborted: closes the connection */
    }
    curl_multi_cleanup(m);
    gw_sse_free(&x.sse);
    sg_membudget_release(body->budget, x.sse_reserved);
    if (x.aborted)
        return GW_RELAY_ABORTED;
    if (x.mode == 2 && x.bad)
        return GW_RELAY_BAD_STREAM;
    if (x.mode == 2 && *ret_rc == CURLE_OK && !x.got_result)
        return GW_RELAY_NO_RESULT;
    return GW_RELAY_DONE;
}
