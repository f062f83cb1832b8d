#include "runner_view.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#define CAP_MAX 63 /* highest capability number tried (EINVAL past the kernel's last) */
#define VIEW_TMPFS_FLAGS (MS_NOSUID | MS_NODEV | MS_NOEXEC)

/* One entry of the image's /etc (seen under from) made visible in /etc:
 * a link copied, a file or directory bound. Absent: nothing. */
static int keep(const char *from, const char *name)
{
    char src[PATH_MAX], dst[PATH_MAX], link[PATH_MAX];
    struct stat st;
    snprintf(src, sizeof(src), "%s/%s", from, name);
    snprintf(dst, sizeof(dst), "/etc/%s", name);
    if (lstat(src, &st) < 0)
        return errno == ENOENT ? 0 : -errno;
    if (S_ISLNK(st.st_mode)) {
        ssize_t n = readlink(src, link, sizeof(link) - 1);
        if (n < 0)
            return -errno;
        link[n] = '\0';
        return symlink(link, dst) < 0 ? -errno : 0;
    }
    if (S_ISDIR(st.st_mode)) {
        if (mkdir(dst, 0755) < 0)
            return -errno;
    } else if (S_ISREG(st.st_mode)) {
        int fd = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0)
            return -errno;
        close(fd);
    } else {
        return 0; /* nothing else is kept */
    }
    return mount(src, dst, NULL, MS_BIND | MS_REC, NULL) < 0 ? -errno : 0;
}

/* /etc becomes a read-only tmpfs with only the kept entries. */
static int etc_view(const char *staging, int networked)
{
    static const char *const names[] = {RUNNER_VIEW_ETC};
    static const char *const net_names[] = {RUNNER_VIEW_ETC_NET};
    char old[PATH_MAX];
    snprintf(old, sizeof(old), "%s/etc", staging);
    if (mount("tmpfs", staging, "tmpfs", VIEW_TMPFS_FLAGS, "mode=0700,size=16k") < 0 ||
        mkdir(old, 0700) < 0 || mount("/etc", old, NULL, MS_BIND | MS_REC, NULL) < 0 ||
        mount("tmpfs", "/etc", "tmpfs", VIEW_TMPFS_FLAGS, "mode=0755,size=64k") < 0)
        return -errno;
    int r = 0;
    for (size_t i = 0; r == 0 && i < sizeof(names) / sizeof(names[0]); i++)
        r = keep(old, names[i]);
    for (size_t i = 0; r == 0 && networked && i < sizeof(net_names) / sizeof(net_names[0]); i++)
        r = keep(old, net_names[i]);
    if (r < 0)
        return r;
    if (umount2(old, MNT_DETACH) < 0 || umount2(staging, MNT_DETACH) < 0 ||
        mount(NULL, "/etc", NULL, MS_REMOUNT | MS_RDONLY | VIEW_TMPFS_FLAGS, NULL) < 0)
        return -errno;
    return 0;
}

int runner_view_enter(const char *staging, int networked)
{
    if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
        mount("proc", "/proc", "proc", VIEW_TMPFS_FLAGS, NULL) < 0)
        return -errno;
    int r = etc_view(staging, networked);
    if (r < 0)
        return r;
    for (int cap = 0; cap <= CAP_MAX; cap++)
        if (cap != CAP_SETUID && cap != CAP_SETGID && prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 &&
            errno != EINVAL)
            return -errno;
    return 0;
}
