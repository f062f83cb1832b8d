/* sg_netallow.c - network allow-list entries: parse, format, cover, match. */
#include "sg_netallow.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#define DEFAULT_PORT_A 80u
#define DEFAULT_PORT_B 443u
#define LABEL_MAX 63

/* A DNS name: labels of [a-z0-9_-] (1..63 bytes, no leading/trailing '-'),
 * lower-cased into out. */
static int parse_name(const char *s, size_t n, char *out)
{
    if (n == 0 || n > SG_NETALLOW_HOST_MAX)
        return -EINVAL;
    size_t label = 0;
    for (size_t i = 0; i < n; i++) {
        char c = (char)tolower((unsigned char)s[i]);
        if (c == '.') {
            if (label == 0 || out[i - 1] == '-')
                return -EINVAL;
            label = 0;
        } else if (isalnum((unsigned char)c) || c == '_' || (c == '-' && label > 0)) {
            if (++label > LABEL_MAX)
                return -EINVAL;
        } else {
            return -EINVAL;
        }
        out[i] = c;
    }
    out[n] = '\0';
    return label > 0 && out[n - 1] != '-' ? 0 : -EINVAL;
}

/* ":port" at s (or nothing): 1..65535, digits only. */
static int parse_port(const char *s, unsigned *ret)
{
    *ret = 0;
    if (*s == '\0')
        return 0;
    if (*s++ != ':' || *s == '\0' || strlen(s) > 5)
        return -EINVAL;
    unsigned v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return -EINVAL;
        v = v * 10 + (unsigned)(*s - '0');
    }
    if (v == 0 || v > 65535)
        return -EINVAL;
    *ret = v;
    return 0;
}

/* Split text into the host part (copied to host) and the port. */
static int split(const char *text, char *host, size_t hostsz, unsigned *ret_port)
{
    const char *end;
    if (text[0] == '[') {
        const char *close = strchr(text, ']');
        if (!close)
            return -EINVAL;
        text++;
        end = close;
        if (parse_port(close + 1, ret_port) < 0)
            return -EINVAL;
    } else {
        const char *colon = strchr(text, ':');
        if (colon && strchr(colon + 1, ':'))
            return -EINVAL; /* a bare IPv6 address: write it in brackets */
        end = colon ? colon : text + strlen(text);
        if (parse_port(end, ret_port) < 0)
            return -EINVAL;
    }
    size_t n = (size_t)(end - text);
    if (n == 0 || n >= hostsz)
        return -EINVAL;
    memcpy(host, text, n);
    host[n] = '\0';
    return 0;
}

static int printable_word(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] <= ' ' || s[i] >= 0x7f)
            return 0;
    return n > 0;
}

int sg_netallow_parse(const char *text, struct sg_netallow_entry *ret, struct sg_error *err)
{
    size_t n = text ? strlen(text) : 0;
    if (n == 0 || n > SG_NETALLOW_TEXT_MAX || !printable_word(text, n))
        return sg_error_set(err, -EINVAL,
                            "expected a host name, \"*.\" wildcard, \"*\" or network, with an "
                            "optional :port, of at most %d bytes",
                            SG_NETALLOW_TEXT_MAX);
    struct sg_netallow_entry e = {0};
    char host[SG_NETALLOW_TEXT_MAX + 1];
    int bracket = text[0] == '[';
    if (split(text, host, sizeof(host), &e.port) < 0)
        return sg_error_set(err, -EINVAL, "'%s': expected host[:port] (IPv6 in brackets)", text);
    if (strcmp(host, "*") == 0 && !bracket) {
        e.kind = SG_NETALLOW_ANY;
    } else if (host[0] == '*' && host[1] == '.' && !bracket) {
        e.kind = SG_NETALLOW_SUFFIX;
        if (parse_name(host + 2, strlen(host + 2), e.host) < 0 || !strchr(e.host, '.'))
            return sg_error_set(
                err, -EINVAL, "'%s': a wildcard is \"*.\" and a name of two labels or more", text);
    } else if (sg_cidr_parse(host, &e.net, NULL) == 0) {
        e.kind = SG_NETALLOW_CIDR;
        if (bracket != (e.net.family == AF_INET6))
            return sg_error_set(err, -EINVAL, "'%s': write IPv6 (only) in brackets", text);
    } else if (strchr(host, '/') || bracket) {
        return sg_error_set(err, -EINVAL, "'%s' is not a valid network", text);
    } else {
        e.kind = SG_NETALLOW_HOST;
        if (parse_name(host, strlen(host), e.host) < 0)
            return sg_error_set(err, -EINVAL, "'%s' is not a valid host name", text);
    }
    *ret = e;
    return 0;
}

void sg_netallow_format(const struct sg_netallow_entry *e, char *out, size_t outsz)
{
    char h[SG_NETALLOW_TEXT_MAX], port[16] = "";
    if (e->port)
        snprintf(port, sizeof(port), ":%u", e->port);
    switch (e->kind) {
    case SG_NETALLOW_ANY:
        snprintf(h, sizeof(h), "*");
        break;
    case SG_NETALLOW_SUFFIX:
        snprintf(h, sizeof(h), "*.%s", e->host);
        break;
    case SG_NETALLOW_CIDR: {
        char c[SG_CIDR_TEXT_MAX];
        sg_cidr_format(&e->net, c, sizeof(c));
        snprintf(h, sizeof(h), e->net.family == AF_INET6 ? "[%s]" : "%s", c);
        break;
    }
    default:
        snprintf(h, sizeof(h), "%s", e->host);
    }
    snprintf(out, outsz, "%s%s", h, port);
}

static int port_covers(unsigned outer, unsigned inner)
{
    return outer == inner || (outer == 0 && (inner == DEFAULT_PORT_A || inner == DEFAULT_PORT_B));
}

/* 1 when name lies strictly below suffix ("a.corp" below "corp"). */
static int below(const char *name, const char *suffix)
{
    size_t n = strlen(name), s = strlen(suffix);
    return n > s + 1 && name[n - s - 1] == '.' && strcmp(name + n - s, suffix) == 0;
}

int sg_netallow_covers(const struct sg_netallow_entry *outer, const struct sg_netallow_entry *inner)
{
    if (!port_covers(outer->port, inner->port))
        return 0;
    switch (outer->kind) {
    case SG_NETALLOW_ANY:
        return 1;
    case SG_NETALLOW_SUFFIX: /* "*.a.b" holds itself and "*.x.a.b"; "x.a.b" but not "a.b" */
        return (inner->kind == SG_NETALLOW_HOST && below(inner->host, outer->host)) ||
               (inner->kind == SG_NETALLOW_SUFFIX &&
                (strcmp(inner->host, outer->host) == 0 || below(inner->host, outer->host)));
    case SG_NETALLOW_CIDR:
        return inner->kind == SG_NETALLOW_CIDR && sg_cidr_contains(&outer->net, &inner->net);
    default:
        return inner->kind == SG_NETALLOW_HOST && strcmp(outer->host, inner->host) == 0;
    }
}

int sg_netallow_list_covers(const struct sg_netallow_entry *list, size_t n,
                            const struct sg_netallow_entry *e)
{
    for (size_t i = 0; i < n; i++)
        if (sg_netallow_covers(&list[i], e))
            return 1;
    return 0;
}

int sg_netallow_matches(const struct sg_netallow_entry *e, const char *host, unsigned port)
{
    if (!port_covers(e->port, port) || port == 0)
        return 0;
    struct sg_cidr addr;
    int is_addr = sg_cidr_parse(host, &addr, NULL) == 0 && sg_cidr_is_address(&addr);
    switch (e->kind) {
    case SG_NETALLOW_ANY:
        return 1;
    case SG_NETALLOW_CIDR:
        return is_addr && sg_cidr_contains(&e->net, &addr);
    case SG_NETALLOW_SUFFIX:
        return !is_addr && below(host, e->host);
    default:
        return !is_addr && strcasecmp(host, e->host) == 0;
    }
}
