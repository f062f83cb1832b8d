/* docker.h - a small Docker Engine API client over the unix socket (libcurl).
 *
 * Every call opens its own connection, has a deadline, and caps the reply it
 * will read: dockerd's replies are parsed as untrusted input (the parsers are
 * pure functions, fuzzed in tests/fuzz/fuzz_attach_frames.c).
 *
 * Errors: -EHOSTDOWN when dockerd cannot be reached (socket missing, refused,
 * connection dropped), -ETIMEDOUT past the deadline, -ENOENT for a 404,
 * -EPROTO for a malformed reply, -EIO for any other non-success status (the
 * engine's "message" is copied into err).
 */
#ifndef SG_EXEC_DOCKER_H
#define SG_EXEC_DOCKER_H

#include <stdbool.h>
#include <stddef.h>

#include "buf.h"
#include "sg_error.h"

#define DOCKER_API_PREFIX "/v1.41"
#define DOCKER_ID_LEN 64
#define DOCKER_REPLY_MAX (1u * 1024u * 1024u)      /* any single reply */
#define DOCKER_LIST_REPLY_MAX (8u * 1024u * 1024u) /* container lists */
#define DOCKER_LIST_MAX 4096u                      /* ids taken from one list */
#define DOCKER_CALL_TIMEOUT_MS 30000L

struct docker_client;

struct docker_state {
    bool running;
    bool oom_killed;
    int exit_code;
    char status[32]; /* "created", "running", "exited", ... */
    char error[256]; /* State.Error, may be empty */
};

/* Create a client for the socket at path (copied). Caller frees with
 * docker_client_free(). */
int docker_client_new(const char *socket_path, struct docker_client **ret, struct sg_error *err);
void docker_client_free(struct docker_client *dc);
const char *docker_client_socket(const struct docker_client *dc);

/* One raw API call. path starts with '/' and excludes DOCKER_API_PREFIX; body
 * may be NULL. The reply body (capped at max_reply) is appended to ret_body,
 * which the caller initialised and frees. Any HTTP status is returned in
 * *ret_status; only transport failures are errors here. */
int docker_call(struct docker_client *dc, const char *method, const char *path, const char *body,
                long timeout_ms, size_t max_reply, long *ret_status, struct sg_buf *ret_body,
                struct sg_error *err);

int docker_ping(struct docker_client *dc, long timeout_ms, struct sg_error *err);

/* Whether dockerd has a runtime registered under name. */
int docker_runtime_registered(struct docker_client *dc, const char *name, bool *ret_found,
                              struct sg_error *err);

/* 0 when the image exists locally, -ENOENT when not. ret_split (optional)
 * says whether its label DOCKER_LABEL_IDENTITY is "split" (the runner drops
 * the job into its own identity and view: sandbox.h). */
#define DOCKER_LABEL_IDENTITY "org.sandgate.identity"
int docker_image_exists(struct docker_client *dc, const char *image, bool *ret_split,
                        struct sg_error *err);

/* POST /containers/create with a JSON body; the new id goes to ret_id. */
int docker_create(struct docker_client *dc, const char *body, char ret_id[DOCKER_ID_LEN + 1],
                  struct sg_error *err);
int docker_start(struct docker_client *dc, const char *id, struct sg_error *err);
/* Force-remove (kills first); a container already gone, or whose removal
 * another client has under way (HTTP 409), is success. */
int docker_remove(struct docker_client *dc, const char *id, long timeout_ms, struct sg_error *err);
/* Wait until the container is not running (bounded by timeout_ms). */
int docker_wait(struct docker_client *dc, const char *id, long timeout_ms, int *ret_exit,
                struct sg_error *err);
int docker_inspect(struct docker_client *dc, const char *id, struct docker_state *ret,
                   struct sg_error *err);
/* The container's IPv4 address on Docker network `network` (inspect's
 * NetworkSettings.Networks.<network>.IPAddress), as text. */
#define DOCKER_IP_TEXT_MAX 46
int docker_container_ip(struct docker_client *dc, const char *id, const char *network,
                        char ret_ip[DOCKER_IP_TEXT_MAX], struct sg_error *err);
/* The container's memory use now (as `docker stats` shows it), in bytes. */
/* Did dockerd report an out-of-memory kill ("oom" event) for container id
 * between since_s and until_s (Unix seconds, until_s not in the future)?
 * State.OOMKilled misses the kill when dockerd handles the exit before the
 * OOM event (seen with runsc about 1 in 8); the event itself is still sent. */
int docker_oom_event(struct docker_client *dc, const char *id, double since_s, double until_s,
                     bool *ret_seen, struct sg_error *err);

int docker_memory_usage(struct docker_client *dc, const char *id, unsigned long long *ret_bytes,
                        struct sg_error *err);
/* Ids of all containers (any state) with label key=value. *ret_ids is an
 * array of *ret_n ids; caller frees with free(). */
int docker_list_by_label(struct docker_client *dc, const char *key, const char *value,
                         char (**ret_ids)[DOCKER_ID_LEN + 1], size_t *ret_n, struct sg_error *err);

/* Pure parsers of engine replies (untrusted input). Each returns 0 or -EPROTO. */
int docker_parse_create(const char *body, size_t len, char ret_id[DOCKER_ID_LEN + 1]);
int docker_parse_inspect(const char *body, size_t len, struct docker_state *ret);
int docker_parse_ip(const char *body, size_t len, const char *network,
                    char ret_ip[DOCKER_IP_TEXT_MAX]);
/* True when the events stream text holds an "oom" event of container id. */
bool docker_parse_oom_events(const char *body, size_t len, const char *id);
int docker_parse_wait(const char *body, size_t len, int *ret_exit);
/* An image inspect reply: is Config.Labels[DOCKER_LABEL_IDENTITY] "split"? */
int docker_parse_image_split(const char *body, size_t len, bool *ret_split);
int docker_parse_runtimes(const char *body, size_t len, const char *name, bool *ret_found);
int docker_parse_list(const char *body, size_t len, char (**ret_ids)[DOCKER_ID_LEN + 1],
                      size_t *ret_n);
/* memory_stats.usage minus the inactive page cache, from a stats reply. */
int docker_parse_stats_memory(const char *body, size_t len, unsigned long long *ret_bytes);
/* Copy the engine's {"message": "..."} into out (empty when absent). */
void docker_parse_message(const char *body, size_t len, char *out, size_t outsz);
/* True when s is exactly DOCKER_ID_LEN lowercase hex digits. */
bool docker_id_valid(const char *s);

#endif
