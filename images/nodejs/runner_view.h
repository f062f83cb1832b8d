/* runner_view.h - the filesystem view of a Node.js job under the identity
 * split (images/nodejs/README.md): what the node child sees, set up by the
 * child itself while it is still root, between fork and exec.
 *
 * In a mount namespace of its own (the runner's stays as it was):
 *   /proc  a new proc of the child's own PID namespace: PID 1 is the child,
 *          the runner (its environment, command line, fds) is not there;
 *   /etc   an empty read-only tmpfs holding only RUNNER_VIEW_ETC (files and
 *          directories bound from the image, links copied), plus
 *          RUNNER_VIEW_ETC_NET in a networked sandbox;
 * and a capability bounding set of SETUID and SETGID only, so node starts
 * as root with no capability but the two it needs to drop itself to the
 * job's uid (runner.js). /opt/sandgate is root's, mode 0700 (the image):
 * node reads it as root at start, the job cannot.
 */
#ifndef RUNNER_VIEW_H
#define RUNNER_VIEW_H

/* What a Node job may read of /etc: the dynamic linker's cache, user and
 * group names (os.userInfo), the name service switch, time zone. */
#define RUNNER_VIEW_ETC                                                                            \
    "ld.so.cache", "passwd", "group", "nsswitch.conf", "host.conf", "gai.conf", "localtime",       \
        "timezone", "os-release"
/* and in a networked sandbox: the resolver's (the egress proxy's name) */
#define RUNNER_VIEW_ETC_NET "hosts", "resolv.conf"

/* Sets the view up in the calling (forked, root, single-threaded) process;
 * staging is an existing empty directory to mount a scratch tmpfs on (it is
 * unmounted again). Returns 0 or a negative errno; the process is then
 * unusable for a job (exit). */
int runner_view_enter(const char *staging, int networked);

#endif
