/* runner_nocode.c - libsandgate_nocode.so: no new native code in a Node
 * job's process (images/nodejs/README.md, policies/README.md).
 *
 * A minimal Node-API module, like libsandgate_rt.so (images/runtime/rt_lib.c):
 * runner.js maps it before the job (while /opt/sandgate is still readable),
 * and loads it again (a dlopen of the same path reads no file) with
 * SANDGATE_NOCODE=1 when it installs a run-time policy that refuses
 * processes (a program a job may start needs its libraries mapped). Then its
 * registration installs, on every thread (TSYNC), a seccomp filter that
 * refuses executable mappings of a file: mmap() with PROT_EXEC and without
 * MAP_ANONYMOUS fails with EPERM.
 * That is how every dynamic loader maps code (dlopen, so process.dlopen,
 * crypto.setEngine's OpenSSL engines and anything a native addon would
 * load), whatever file it names: runsc does not enforce noexec for
 * mmap(PROT_EXEC) (measured: a library copied to the noexec /tmp loads), so
 * the kernel filter is what holds. V8's JIT maps anonymous memory and keeps
 * working. mprotect() is not filtered: the filter cannot tell what a mapping
 * is, and turning a file mapping executable needs native code already.
 * Another architecture's calling convention gets EPERM as well.
 *
 * The result (0 or -errno; 1 when not asked) is left in
 * SANDGATE_NOCODE_RESULT; no Node-API function is used, so no header is
 * needed.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NOCODE_VISIBLE __attribute__((visibility("default")))
#define ARG_LOW(n) offsetof(struct seccomp_data, args[n]) /* little-endian: the low half */
#define REFUSE (SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA))

NOCODE_VISIBLE void *napi_register_module_v1(void *env, void *exports);

/* The filter (tests/unit/test_node_nocode.c installs it for real). */
static struct sock_filter NOCODE_PROG[] = {
    /* not const: sock_fprog takes it so */
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
    BPF_STMT(BPF_RET | BPF_K, REFUSE),
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mmap, 0, 5),
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LOW(2)), /* prot */
    BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, PROT_EXEC, 0, 3),
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LOW(3)), /* flags */
    BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, MAP_ANONYMOUS, 1, 0),
    BPF_STMT(BPF_RET | BPF_K, REFUSE),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};

static int nocode_install(void)
{
    struct sock_fprog prog = {.len = sizeof(NOCODE_PROG) / sizeof(NOCODE_PROG[0]),
                              .filter = NOCODE_PROG};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        return -errno;
    long rc = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog);
    if (rc < 0)
        return -errno;
    return rc > 0 ? -ESRCH : 0; /* TSYNC: a thread could not be synchronised */
}

void *napi_register_module_v1(void *env, void *exports)
{
    (void)env;
    (void)exports;
    const char *ask = getenv("SANDGATE_NOCODE");
    char text[16];
    snprintf(text, sizeof(text), "%d", ask && ask[0] == '1' && !ask[1] ? nocode_install() : 1);
    setenv("SANDGATE_NOCODE_RESULT", text, 1);
    return NULL;
}
