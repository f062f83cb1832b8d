/* The run-time seccomp filter (images/runtime/rt_filter.c): the program is
 * decoded by a small BPF interpreter for every decision, then installed for
 * real in a forked child, where execve/fork must fail and threads must start. */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rt_filter.h"

/* Just enough classic BPF for what the builder emits. */
static uint32_t run_bpf(const struct sock_filter *ins, size_t len, const struct seccomp_data *d)
{
    uint32_t a = 0;
    for (size_t pc = 0; pc < len; pc++) {
        const struct sock_filter *f = &ins[pc];
        switch (f->code) {
        case BPF_LD | BPF_W | BPF_ABS:
            cr_assert(f->k + 4 <= sizeof(*d) && f->k % 4 == 0, "load at %u", f->k);
            memcpy(&a, (const char *)d + f->k, 4);
            break;
        case BPF_JMP | BPF_JEQ | BPF_K:
            pc += a == f->k ? f->jt : f->jf;
            break;
        case BPF_JMP | BPF_JGE | BPF_K:
            pc += a >= f->k ? f->jt : f->jf;
            break;
        case BPF_JMP | BPF_JSET | BPF_K:
            pc += (a & f->k) ? f->jt : f->jf;
            break;
        case BPF_ALU | BPF_AND | BPF_K:
            a &= f->k;
            break;
        case BPF_RET | BPF_K:
            return f->k;
        default:
            cr_assert_fail("unexpected opcode 0x%x", f->code);
        }
    }
    cr_assert_fail("fell off the end of the program");
    return 0;
}

#define SELF 4242 /* the pid the filter is built for */

static uint32_t decide3(unsigned flags, int nr, uint64_t arg0, uint64_t arg1, uint64_t arg2)
{
    struct sock_filter ins[SG_RT_FILTER_MAX];
    size_t len = 0;
    cr_assert_eq(sg_rt_filter_build(flags, SELF, ins, SG_RT_FILTER_MAX, &len), 0);
    struct seccomp_data d = {.nr = nr, .arch = AUDIT_ARCH_X86_64, .args = {arg0, arg1, arg2}};
    return run_bpf(ins, len, &d);
}

static uint32_t decide2(unsigned flags, uint32_t arch, int nr, uint64_t arg0, uint64_t arg1)
{
    struct sock_filter ins[SG_RT_FILTER_MAX];
    size_t len = 0;
    cr_assert_eq(sg_rt_filter_build(flags, SELF, ins, SG_RT_FILTER_MAX, &len), 0);
    struct seccomp_data d = {.nr = nr, .arch = arch, .args = {arg0, arg1}};
    return run_bpf(ins, len, &d);
}

static uint32_t decide(unsigned flags, uint32_t arch, int nr, uint64_t arg0)
{
    return decide2(flags, arch, nr, arg0, SOCK_STREAM);
}

#define X86 AUDIT_ARCH_X86_64
#define EPERM_RET (SECCOMP_RET_ERRNO | EPERM)

Test(rt_filter, denies_process_creation_but_not_threads)
{
    cr_expect_eq(decide(0, X86, SYS_execve, 0), EPERM_RET);
    cr_expect_eq(decide(0, X86, SYS_execveat, 0), EPERM_RET);
    cr_expect_eq(decide(0, X86, SYS_fork, 0), EPERM_RET);
    cr_expect_eq(decide(0, X86, SYS_vfork, 0), EPERM_RET);
    cr_expect_eq(decide(0, X86, SYS_clone3, 0), SECCOMP_RET_ERRNO | ENOSYS);
    cr_expect_eq(decide(0, X86, SYS_clone, SIGCHLD), EPERM_RET);
    cr_expect_eq(decide(0, X86, SYS_clone, CLONE_VM | CLONE_VFORK | SIGCHLD), EPERM_RET);
    uint64_t thread = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |
                      CLONE_SYSVSEM | CLONE_SETTLS | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID;
    cr_expect_eq(decide(0, X86, SYS_clone, thread), SECCOMP_RET_ALLOW);
    cr_expect_eq(decide(0, X86, SYS_read, 0), SECCOMP_RET_ALLOW);
    cr_expect_eq(decide(0, X86, SYS_openat, 0), SECCOMP_RET_ALLOW);
}

Test(rt_filter, allow_processes_lets_them_through)
{
    cr_expect_eq(decide(SG_RT_ALLOW_PROCESSES, X86, SYS_execve, 0), SECCOMP_RET_ALLOW);
    cr_expect_eq(decide(SG_RT_ALLOW_PROCESSES, X86, SYS_clone, SIGCHLD), SECCOMP_RET_ALLOW);
    cr_expect_eq(decide(SG_RT_ALLOW_PROCESSES, X86, SYS_clone3, 0), SECCOMP_RET_ALLOW);
    /* still offline */
    cr_expect_eq(decide(SG_RT_ALLOW_PROCESSES, X86, SYS_socket, AF_INET), EPERM_RET);
}

Test(rt_filter, offline_allows_only_unix_sockets)
{
    cr_expect_eq(decide(0, X86, SYS_socket, AF_UNIX), SECCOMP_RET_ALLOW);
    cr_expect_eq(decide(0, X86, SYS_socket, AF_INET), EPERM_RET);
    cr_expect_eq(decide(0, X86, SYS_socket, AF_INET6), EPERM_RET);
    cr_expect_eq(decide(0, X86, SYS_socket, AF_NETLINK), EPERM_RET);
    cr_expect_eq(decide(0, X86, SYS_socket, AF_PACKET), EPERM_RET);
    /* the high half of the argument is not the family */
    cr_expect_eq(decide(0, X86, SYS_socket, ((uint64_t)1 << 32) | AF_INET), EPERM_RET);
    cr_expect_eq(decide(0, X86, SYS_io_uring_setup, 0), EPERM_RET);
    cr_expect_eq(decide(SG_RT_ALLOW_NETWORK, X86, SYS_socket, AF_INET), SECCOMP_RET_ALLOW);
    cr_expect_eq(decide(SG_RT_ALLOW_NETWORK, X86, SYS_execve, 0), EPERM_RET);
}

Test(rt_filter, signals_and_handles_reach_only_the_process_itself)
{
    cr_expect_eq(decide(0, X86, SYS_kill, SELF), SECCOMP_RET_ALLOW);
    cr_expect_eq(decide(0, X86, SYS_kill, 0), SECCOMP_RET_ALLOW);
    cr_expect_eq(decide(0, X86, SYS_kill, (uint32_t)-SELF), SECCOMP_RET_ALLOW);
    cr_expect_eq(decide(0, X86, SYS_kill, 1), EPERM_RET);            /* the runner's parent */
    cr_expect_eq(decide(0, X86, SYS_kill, (uint32_t)-1), EPERM_RET); /* everyone */
    cr_expect_eq(decide(0, X86, SYS_tgkill, SELF), SECCOMP_RET_ALLOW);
    cr_expect_eq(decide(0, X86, SYS_tgkill, 1), EPERM_RET);
    cr_expect_eq(decide(0, X86, SYS_rt_sigqueueinfo, 1), EPERM_RET);
    cr_expect_eq(decide(0, X86, SYS_rt_tgsigqueueinfo, 1), EPERM_RET);
    cr_expect_eq(decide(0, X86, SYS_rt_tgsigqueueinfo, SELF), SECCOMP_RET_ALLOW);
    cr_expect_eq(decide(0, X86, 434 /* pidfd_open */, 1), EPERM_RET);
    cr_expect_eq(decide(0, X86, 434, SELF), SECCOMP_RET_ALLOW);
    cr_expect_eq(decide(0, X86, SYS_tkill, SELF), EPERM_RET);
    cr_expect_eq(decide(0, X86, 424 /* pidfd_send_signal */, 3), EPERM_RET);
    cr_expect_eq(decide(0, X86, 438 /* pidfd_getfd */, 3), EPERM_RET);
    cr_expect_eq(decide(0, X86, SYS_ptrace, 0), EPERM_RET);
    cr_expect_eq(decide(0, X86, SYS_process_vm_readv, 1), EPERM_RET);
    cr_expect_eq(decide(0, X86, SYS_process_vm_writev, SELF), EPERM_RET);
    /* the high half of a pid argument is not read by the kernel either */
    cr_expect_eq(decide(0, X86, SYS_kill, ((uint64_t)7 << 32) | 1), EPERM_RET);
    /* with processes allowed the job may signal its children */
    cr_expect_eq(decide(SG_RT_ALLOW_PROCESSES, X86, SYS_kill, 77), SECCOMP_RET_ALLOW);
}

Test(rt_filter, networked_jobs_get_tcp_only)
{
    const unsigned net = SG_RT_ALLOW_NETWORK;
    cr_expect_eq(decide2(net, X86, SYS_socket, AF_INET, SOCK_STREAM), SECCOMP_RET_ALLOW);
    cr_expect_eq(decide2(net, X86, SYS_socket, AF_INET6, SOCK_STREAM | SOCK_CLOEXEC),
                 SECCOMP_RET_ALLOW);
    cr_expect_eq(decide2(net, X86, SYS_socket, AF_INET, SOCK_DGRAM), EPERM_RET);
    cr_expect_eq(decide2(net, X86, SYS_socket, AF_INET6, SOCK_DGRAM | SOCK_NONBLOCK), EPERM_RET);
    cr_expect_eq(decide2(net, X86, SYS_socket, AF_INET, SOCK_RAW), EPERM_RET);
    cr_expect_eq(decide2(net, X86, SYS_socket, AF_PACKET, SOCK_STREAM), EPERM_RET);
    cr_expect_eq(decide2(net, X86, SYS_socket, AF_NETLINK, SOCK_DGRAM), EPERM_RET);
    cr_expect_eq(decide2(net, X86, SYS_socket, AF_UNIX, SOCK_DGRAM), SECCOMP_RET_ALLOW);
    cr_expect_eq(decide2(net, X86, SYS_socketpair, AF_INET, SOCK_STREAM), EPERM_RET);
    cr_expect_eq(decide2(net, X86, SYS_io_uring_setup, 0, 0), EPERM_RET);
    cr_expect_eq(decide2(net, X86, SYS_connect, 3, 0), SECCOMP_RET_ALLOW);
    cr_expect_eq(decide2(net, X86, SYS_listen, 3, 0), EPERM_RET);
    cr_expect_eq(decide2(0, X86, SYS_listen, 3, 0),
                 SECCOMP_RET_ALLOW); /* offline: AF_UNIX only anyway */
}

Test(rt_filter, offline_socketpair_is_unix_only)
{
    cr_expect_eq(decide(0, X86, SYS_socketpair, AF_UNIX), SECCOMP_RET_ALLOW);
    cr_expect_eq(decide(0, X86, SYS_socketpair, AF_INET), EPERM_RET);
    cr_expect_eq(decide(0, X86, SYS_socketpair, AF_NETLINK), EPERM_RET);
    cr_expect_eq(decide(SG_RT_ALLOW_NETWORK, X86, SYS_socketpair, AF_UNIX), SECCOMP_RET_ALLOW);
}

Test(rt_filter, other_architectures_are_killed)
{
    cr_expect_eq(decide(SG_RT_FLAGS_ALL, AUDIT_ARCH_I386, 11, 0), SECCOMP_RET_KILL_PROCESS);
    cr_expect_eq(decide(0, AUDIT_ARCH_AARCH64, SYS_read, 0), SECCOMP_RET_KILL_PROCESS);
    /* x32 ABI numbers on x86_64 */
    cr_expect_eq(decide(SG_RT_FLAGS_ALL, X86, 0x40000000 | SYS_execve, 0),
                 SECCOMP_RET_KILL_PROCESS);
}

Test(rt_filter, builder_checks_its_input)
{
    struct sock_filter ins[SG_RT_FILTER_MAX];
    size_t len = 0;
    cr_expect_eq(sg_rt_filter_build(0x10, SELF, ins, SG_RT_FILTER_MAX, &len), -EINVAL);
    cr_expect_eq(sg_rt_filter_build(0, 0, ins, SG_RT_FILTER_MAX, &len), -EINVAL);
    cr_expect_eq(sg_rt_filter_build(0, -5, ins, SG_RT_FILTER_MAX, &len), -EINVAL);
    cr_expect_eq(sg_rt_filter_build(0, SELF, ins, 5, &len), -ENOSPC);
    /* the longest program (everything denied) fits */
    cr_expect_eq(sg_rt_filter_build(0, SELF, ins, SG_RT_FILTER_MAX, &len), 0);
    cr_expect_leq(len, SG_RT_FILTER_MAX);
    cr_expect_eq(sg_rt_filter_build(SG_RT_KILL_REFUSALS, SELF, ins, SG_RT_FILTER_MAX, &len), 0);
    cr_expect_leq(len, SG_RT_FILTER_MAX);
    unsigned longest = SG_RT_KILL_REFUSALS | SG_RT_NO_NEW_CODE | SG_RT_ALLOW_NETWORK;
    cr_expect_eq(sg_rt_filter_build(longest, SELF, ins, SG_RT_FILTER_MAX, &len), 0);
    cr_expect_leq(len, SG_RT_FILTER_MAX);
    cr_expect_eq(sg_rt_filter_install(0x80), -EINVAL);
}

#define KILL SG_RT_KILL_REFUSALS

Test(rt_filter, kill_mode_kills_hard_refusals)
{
    cr_expect_eq(decide(KILL, X86, SYS_execve, 0), SECCOMP_RET_KILL_PROCESS);
    cr_expect_eq(decide(KILL, X86, SYS_execveat, 0), SECCOMP_RET_KILL_PROCESS);
    cr_expect_eq(decide(KILL, X86, SYS_fork, 0), SECCOMP_RET_KILL_PROCESS);
    cr_expect_eq(decide(KILL, X86, SYS_vfork, 0), SECCOMP_RET_KILL_PROCESS);
    cr_expect_eq(decide(KILL, X86, SYS_clone, SIGCHLD), SECCOMP_RET_KILL_PROCESS);
    cr_expect_eq(decide(KILL, X86, SYS_socket, AF_INET), SECCOMP_RET_KILL_PROCESS);
    cr_expect_eq(decide(KILL, X86, SYS_socket, AF_NETLINK), SECCOMP_RET_KILL_PROCESS);
    cr_expect_eq(decide(KILL, X86, SYS_socketpair, AF_INET), SECCOMP_RET_KILL_PROCESS);
    cr_expect_eq(decide(KILL, X86, SYS_io_uring_setup, 0), SECCOMP_RET_KILL_PROCESS);
}

Test(rt_filter, kill_mode_keeps_threads_unix_sockets_and_soft_refusals)
{
    uint64_t thread = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD;
    cr_expect_eq(decide(KILL, X86, SYS_clone, thread), SECCOMP_RET_ALLOW);
    cr_expect_eq(decide(KILL, X86, SYS_clone3, 0), SECCOMP_RET_ERRNO | ENOSYS);
    cr_expect_eq(decide(KILL, X86, SYS_socket, AF_UNIX), SECCOMP_RET_ALLOW);
    cr_expect_eq(decide(KILL, X86, SYS_socketpair, AF_UNIX), SECCOMP_RET_ALLOW);
    cr_expect_eq(decide(KILL, X86, SYS_kill, 1), EPERM_RET);
    cr_expect_eq(decide(KILL, X86, SYS_ptrace, 0), EPERM_RET);
    cr_expect_eq(decide(KILL, X86, SYS_read, 0), SECCOMP_RET_ALLOW);
    /* what the policy allows stays allowed */
    cr_expect_eq(decide(KILL | SG_RT_ALLOW_PROCESSES, X86, SYS_execve, 0), SECCOMP_RET_ALLOW);
    cr_expect_eq(decide(KILL | SG_RT_ALLOW_PROCESSES, X86, SYS_socket, AF_INET),
                 SECCOMP_RET_KILL_PROCESS);
    /* networked: TCP allowed, the rest stays an error */
    const unsigned net = KILL | SG_RT_ALLOW_NETWORK;
    cr_expect_eq(decide2(net, X86, SYS_socket, AF_INET, SOCK_STREAM), SECCOMP_RET_ALLOW);
    cr_expect_eq(decide2(net, X86, SYS_socket, AF_INET, SOCK_DGRAM), EPERM_RET);
    cr_expect_eq(decide2(net, X86, SYS_execve, 0, 0), SECCOMP_RET_KILL_PROCESS);
}

static void *thread_main(void *arg)
{
    *(int *)arg = 42;
    return NULL;
}

/* Runs in a forked child with the filter installed; exits 0 when all held. */
static int child_checks(unsigned flags)
{
    if (sg_rt_filter_install(flags) != 0)
        return 10;
    int ran = 0;
    pthread_t t;
    if (pthread_create(&t, NULL, thread_main, &ran) != 0 || pthread_join(t, NULL) != 0 || ran != 42)
        return 11;
    static char prog[] = "/bin/true";
    char *argv[] = {prog, NULL};
    errno = 0;
    if (execve(prog, argv, NULL) != -1 || errno != EPERM)
        return 12;
    errno = 0;
    if (syscall(SYS_fork) != -1 || errno != EPERM)
        return 13;
    errno = 0;
    if (fork() != -1 || errno != EPERM) /* glibc's fork is clone without CLONE_THREAD */
        return 14;
    errno = 0;
    if (socket(AF_INET, SOCK_STREAM, 0) != -1 || errno != EPERM)
        return 15;
    int u = socket(AF_UNIX, SOCK_STREAM, 0);
    if (u < 0)
        return 16;
    close(u);
    errno = 0;
    if (kill(getppid(), 0) != -1 || errno != EPERM) /* the parent: same uid, out of reach */
        return 17;
    if (kill(getpid(), 0) != 0 || kill(0, 0) != 0)
        return 18;
    errno = 0;
    if (syscall(SYS_ptrace, 0 /* PTRACE_TRACEME */, 0, 0, 0) != -1 || errno != EPERM)
        return 19;
    int sv[2];
    errno = 0;
    if (socketpair(AF_INET, SOCK_STREAM, 0, sv) != -1 || errno != EPERM)
        return 20;
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
        return 21;
    close(sv[0]);
    close(sv[1]);
    return 0;
}

Test(rt_filter, installed_filter_holds_and_threads_start)
{
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0)
        _exit(child_checks(0));
    int status = 0;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status), "child died: status %d", status);
    cr_assert_eq(WEXITSTATUS(status), 0, "check %d failed in the filtered child",
                 WEXITSTATUS(status));
}

Test(rt_filter, installed_filter_with_processes_allowed)
{
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        if (sg_rt_filter_install(SG_RT_ALLOW_PROCESSES) != 0)
            _exit(10);
        pid_t c = fork();
        if (c == 0)
            _exit(7);
        int st = 0;
        _exit(c > 0 && waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 7 ? 0 : 11);
    }
    int status = 0;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d", status);
}

/* Forks a child that installs the filter in kill mode and runs step; returns
 * its wait status. */
static int killed_child(int step)
{
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        if (sg_rt_filter_install(SG_RT_KILL_REFUSALS) != 0)
            _exit(10);
        int ran = 0;
        pthread_t t;
        if (pthread_create(&t, NULL, thread_main, &ran) != 0 || pthread_join(t, NULL) != 0 ||
            ran != 42)
            _exit(11);
        static char prog[] = "/bin/true";
        char *argv[] = {prog, NULL};
        if (step == 0)
            execve(prog, argv, NULL);
        else if (step == 1)
            fork();
        else if (step == 2)
            socket(AF_INET, SOCK_STREAM, 0);
        else if (step == 3)
            close(socket(AF_UNIX, SOCK_STREAM, 0));
        _exit(0);
    }
    int status = 0;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    return status;
}

Test(rt_filter, installed_kill_mode_ends_the_process_with_sigsys)
{
    for (int step = 0; step < 3; step++) {
        int st = killed_child(step);
        cr_expect(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS, "step %d: status %d", step, st);
    }
    int st = killed_child(3); /* an AF_UNIX socket and a thread are fine */
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d", st);
}

#define NOCODE SG_RT_NO_NEW_CODE

Test(rt_filter, no_new_code_refuses_executable_memory)
{
    const uint64_t rx = PROT_READ | PROT_EXEC, rw = PROT_READ | PROT_WRITE;
    cr_expect_eq(decide3(NOCODE, SYS_mmap, 0, 4096, rx), EPERM_RET);
    cr_expect_eq(decide3(NOCODE, SYS_mmap, 0, 4096, rw | PROT_EXEC), EPERM_RET);
    cr_expect_eq(decide3(NOCODE, SYS_mmap, 0, 4096, PROT_EXEC), EPERM_RET);
    cr_expect_eq(decide3(NOCODE, SYS_mmap, 0, 4096, rw), SECCOMP_RET_ALLOW);
    cr_expect_eq(decide3(NOCODE, SYS_mmap, 0, 4096, PROT_NONE), SECCOMP_RET_ALLOW);
    cr_expect_eq(decide3(NOCODE, SYS_mprotect, 0, 4096, rx), EPERM_RET);
    cr_expect_eq(decide3(NOCODE, SYS_mprotect, 0, 4096, PROT_READ), SECCOMP_RET_ALLOW);
    cr_expect_eq(decide3(NOCODE, SYS_pkey_mprotect, 0, 4096, rx), EPERM_RET);
    cr_expect_eq(decide3(NOCODE, SYS_pkey_mprotect, 0, 4096, rw), SECCOMP_RET_ALLOW);
    cr_expect_eq(decide3(NOCODE, SYS_shmat, 3, 0, SHM_EXEC), EPERM_RET);
    cr_expect_eq(decide3(NOCODE, SYS_shmat, 3, 0, SHM_RDONLY), SECCOMP_RET_ALLOW);
    cr_expect_eq(decide3(NOCODE, SYS_remap_file_pages, 0, 4096, 0), EPERM_RET);
    cr_expect_eq(decide3(NOCODE, SYS_personality, READ_IMPLIES_EXEC, 0, 0), EPERM_RET);
    cr_expect_eq(decide3(NOCODE, SYS_personality, 0xffffffffu, 0, 0), SECCOMP_RET_ALLOW);
    cr_expect_eq(decide3(NOCODE, SYS_personality, PER_LINUX, 0, 0), SECCOMP_RET_ALLOW);
    /* the kernel reads the low half of prot: a high bit does not hide PROT_EXEC */
    cr_expect_eq(decide3(NOCODE, SYS_mmap, 0, 4096, ((uint64_t)1 << 32) | rx), EPERM_RET);
    /* without the flag nothing of this is filtered, and the rest still is */
    cr_expect_eq(decide3(0, SYS_mmap, 0, 4096, rx), SECCOMP_RET_ALLOW);
    cr_expect_eq(decide3(0, SYS_mprotect, 0, 4096, rx), SECCOMP_RET_ALLOW);
    cr_expect_eq(decide3(NOCODE, SYS_execve, 0, 0, 0), EPERM_RET);
    cr_expect_eq(decide3(NOCODE | KILL, SYS_execve, 0, 0, 0), SECCOMP_RET_KILL_PROCESS);
    cr_expect_eq(decide3(NOCODE | KILL, SYS_mmap, 0, 4096, rx), EPERM_RET);
    cr_expect_eq(decide3(NOCODE | SG_RT_ALLOW_NETWORK, SYS_socket, AF_INET, SOCK_STREAM, 0),
                 SECCOMP_RET_ALLOW);
}

/* In a forked child: a library mapped before the filter loads again (the
 * loader finds it mapped and maps nothing), a new one does not, and no
 * memory becomes executable; exits with the number of the failed check. */
static int nocode_checks(void)
{
    void *early = dlopen("libanl.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (!early)
        return 30;
    if (sg_rt_filter_install(SG_RT_NO_NEW_CODE) != 0)
        return 31;
    if (dlopen("libanl.so.1", RTLD_NOW | RTLD_LOCAL) != early)
        return 32;
    if (dlopen("libutil.so.1", RTLD_NOW | RTLD_LOCAL) != NULL)
        return 33;
    int ran = 0;
    pthread_t t;
    if (pthread_create(&t, NULL, thread_main, &ran) != 0 || pthread_join(t, NULL) != 0 || ran != 42)
        return 34;
    int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 35;
    errno = 0;
    if (mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0) != MAP_FAILED || errno != EPERM)
        return 36;
    if (mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0) == MAP_FAILED)
        return 37;
    close(fd);
    errno = 0;
    if (mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) !=
            MAP_FAILED ||
        errno != EPERM)
        return 38;
    void *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return 39;
    errno = 0;
    if (mprotect(m, 4096, PROT_READ | PROT_EXEC) != -1 || errno != EPERM)
        return 40;
    if (mprotect(m, 4096, PROT_READ) != 0)
        return 41;
    errno = 0;
    if (personality(READ_IMPLIES_EXEC) != -1 || errno != EPERM)
        return 42;
    return personality(0xffffffff) == -1 ? 43 : 0;
}

Test(rt_filter, installed_no_new_code_keeps_what_was_mapped_before)
{
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0)
        _exit(nocode_checks());
    int status = 0;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status), "child died: status %d", status);
    cr_assert_eq(WEXITSTATUS(status), 0, "check %d failed in the filtered child",
                 WEXITSTATUS(status));
}
