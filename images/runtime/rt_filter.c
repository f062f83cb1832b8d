#include "rt_filter.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#if !defined(__x86_64__)
#error "the run-time filter knows x86_64 system call numbers only"
#endif

#ifndef SYS_clone3
#define SYS_clone3 435
#endif
#ifndef SYS_io_uring_setup
#define SYS_io_uring_setup 425
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif
#ifndef SYS_pkey_mprotect
#define SYS_pkey_mprotect 329
#endif
#ifndef SHM_EXEC
#define SHM_EXEC 0100000
#endif
#define PERSONALITY_QUERY 0xffffffffu /* personality(0xffffffff) reads it */
#define MAX_SELF_VALUES 3
#define X32_SYSCALL_BIT 0x40000000u

#define RET_ERRNO(e) (SECCOMP_RET_ERRNO | ((e)&SECCOMP_RET_DATA))
#define ARG0_LOW offsetof(struct seccomp_data, args[0]) /* little-endian: low 32 bits */
#define ARG1_LOW offsetof(struct seccomp_data, args[1])
#define ARG2_LOW offsetof(struct seccomp_data, args[2])
#define SOCK_TYPE_MASK 0xfu /* socket()'s type without SOCK_NONBLOCK / SOCK_CLOEXEC */

struct prog {
    struct sock_filter *ins;
    size_t len, cap;
    unsigned hard; /* what a hard refusal returns: EPERM or KILL_PROCESS */
};

static void emit(struct prog *p, struct sock_filter f)
{
    if (p->len < p->cap)
        p->ins[p->len] = f;
    p->len++;
}

static void stmt(struct prog *p, unsigned short code, unsigned k)
{
    emit(p, (struct sock_filter)BPF_STMT(code, k));
}

/* if (nr == sysno) return ret; -- with the number loaded in A */
static void deny_nr(struct prog *p, unsigned sysno, unsigned ret)
{
    emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, sysno, 0, 1));
    stmt(p, BPF_RET | BPF_K, ret);
}

/* if (nr == sysno) return (low 32 bits of arg0 in vals) ? ALLOW : refusal;
 * -- pids and families are ints, so the low half is what the kernel reads. */
static void arg0_in(struct prog *p, unsigned sysno, const unsigned *vals, unsigned n,
                    unsigned refusal)
{
    emit(p,
         (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, sysno, 0, (unsigned char)(n + 3)));
    stmt(p, BPF_LD | BPF_W | BPF_ABS, ARG0_LOW);
    for (unsigned i = 0; i < n; i++)
        emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, vals[i],
                                             (unsigned char)(n - i), 0));
    stmt(p, BPF_RET | BPF_K, refusal);
    stmt(p, BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
}

/* Signals and handles reach only the process itself: the runner's parent
 * (PID 1 of the container, same uid) holds the job's result. */
static void other_processes(struct prog *p, int self)
{
    unsigned me = (unsigned)self;
    const unsigned kill_ok[MAX_SELF_VALUES] = {me, 0, (unsigned)-self};
    arg0_in(p, SYS_kill, kill_ok, 3, RET_ERRNO(EPERM));
    arg0_in(p, SYS_tgkill, &me, 1, RET_ERRNO(EPERM));
    arg0_in(p, SYS_rt_sigqueueinfo, &me, 1, RET_ERRNO(EPERM));
    arg0_in(p, SYS_rt_tgsigqueueinfo, &me, 1, RET_ERRNO(EPERM));
    arg0_in(p, SYS_pidfd_open, &me, 1, RET_ERRNO(EPERM));
    deny_nr(p, SYS_tkill, RET_ERRNO(EPERM));
    deny_nr(p, SYS_pidfd_send_signal, RET_ERRNO(EPERM));
    deny_nr(p, SYS_pidfd_getfd, RET_ERRNO(EPERM));
    deny_nr(p, SYS_ptrace, RET_ERRNO(EPERM));
    deny_nr(p, SYS_process_vm_readv, RET_ERRNO(EPERM));
    deny_nr(p, SYS_process_vm_writev, RET_ERRNO(EPERM));
}

static void processes(struct prog *p)
{
    deny_nr(p, SYS_execve, p->hard);
    deny_nr(p, SYS_execveat, p->hard);
    deny_nr(p, SYS_fork, p->hard);
    deny_nr(p, SYS_vfork, p->hard);
    /* clone3 passes its flags in memory the filter cannot read: ENOSYS makes
     * glibc (pthread_create, posix_spawn) fall back to clone. */
    deny_nr(p, SYS_clone3, RET_ERRNO(ENOSYS));
    /* clone: a thread (CLONE_THREAD) may start, a process may not. */
    emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 0, 4));
    stmt(p, BPF_LD | BPF_W | BPF_ABS, ARG0_LOW);
    emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 0, 1));
    stmt(p, BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    stmt(p, BPF_RET | BPF_K, p->hard);
}

static void network(struct prog *p)
{
    const unsigned unix_only = AF_UNIX;
    deny_nr(p, SYS_io_uring_setup, p->hard);
    arg0_in(p, SYS_socketpair, &unix_only, 1, p->hard);
    emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_socket, 0, 4));
    stmt(p, BPF_LD | BPF_W | BPF_ABS, ARG0_LOW);
    emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 0, 1));
    stmt(p, BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    stmt(p, BPF_RET | BPF_K, p->hard);
}

/* A networked job: TCP only (any AF_UNIX socket). No UDP means no DNS and no
 * datagram channel beside the egress proxy; no raw or packet sockets. No
 * listen(): networked sandboxes share one internal network, and a job must
 * not serve another job that runs beside it. */
static void network_tcp_only(struct prog *p)
{
    const unsigned unix_only = AF_UNIX;
    deny_nr(p, SYS_io_uring_setup, RET_ERRNO(EPERM));
    deny_nr(p, SYS_listen, RET_ERRNO(EPERM));
    arg0_in(p, SYS_socketpair, &unix_only, 1, RET_ERRNO(EPERM));
    emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_socket, 0, 9));
    stmt(p, BPF_LD | BPF_W | BPF_ABS, ARG0_LOW);
    emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 6, 0));
    emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_INET, 1, 0));
    emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_INET6, 0, 3));
    stmt(p, BPF_LD | BPF_W | BPF_ABS, ARG1_LOW);
    stmt(p, BPF_ALU | BPF_AND | BPF_K, SOCK_TYPE_MASK);
    emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SOCK_STREAM, 1, 0));
    stmt(p, BPF_RET | BPF_K, RET_ERRNO(EPERM));
    stmt(p, BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
}

/* if (nr == sysno) return (low 32 bits of arg2 & bits) ? EPERM : ALLOW; */
static void arg2_without(struct prog *p, unsigned sysno, unsigned bits)
{
    emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, sysno, 0, 4));
    stmt(p, BPF_LD | BPF_W | BPF_ABS, ARG2_LOW);
    emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, bits, 0, 1));
    stmt(p, BPF_RET | BPF_K, RET_ERRNO(EPERM));
    stmt(p, BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
}

/* No new executable memory: every way a process maps code or makes memory
 * executable (rt_filter.h). Each refusal is EPERM: it has no effect. */
static void no_new_code(struct prog *p)
{
    arg2_without(p, SYS_mmap, PROT_EXEC);
    arg2_without(p, SYS_mprotect, PROT_EXEC);
    arg2_without(p, SYS_pkey_mprotect, PROT_EXEC);
    arg2_without(p, SYS_shmat, SHM_EXEC);
    deny_nr(p, SYS_remap_file_pages, RET_ERRNO(EPERM));
    /* personality: reading it is fine, setting READ_IMPLIES_EXEC is not */
    emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_personality, 0, 5));
    stmt(p, BPF_LD | BPF_W | BPF_ABS, ARG0_LOW);
    emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PERSONALITY_QUERY, 2, 0));
    emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, READ_IMPLIES_EXEC, 0, 1));
    stmt(p, BPF_RET | BPF_K, RET_ERRNO(EPERM));
    stmt(p, BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
}

int sg_rt_filter_build(unsigned flags, int self, struct sock_filter *out, size_t cap,
                       size_t *ret_len)
{
    if ((flags & ~SG_RT_FLAGS_ALL) || self < 1)
        return -EINVAL;
    struct prog p = {.ins = out,
                     .cap = cap,
                     .hard = (flags & SG_RT_KILL_REFUSALS) ? SECCOMP_RET_KILL_PROCESS
                                                           : RET_ERRNO(EPERM)};
    stmt(&p, BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
    emit(&p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0));
    stmt(&p, BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
    stmt(&p, BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
    emit(&p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, X32_SYSCALL_BIT, 0, 1));
    stmt(&p, BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
    /* Each block below returns or falls through with the number still in A
     * (the clone/socket blocks load an argument only on their own path). */
    if (!(flags & SG_RT_ALLOW_PROCESSES)) {
        processes(&p);
        other_processes(&p, self);
    }
    if (flags & SG_RT_NO_NEW_CODE)
        no_new_code(&p);
    if (!(flags & SG_RT_ALLOW_NETWORK))
        network(&p);
    else
        network_tcp_only(&p);
    stmt(&p, BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    if (p.len > cap || p.len > SG_RT_FILTER_MAX)
        return -ENOSPC;
    *ret_len = p.len;
    return 0;
}

int sg_rt_filter_install(unsigned flags)
{
    struct sock_filter ins[SG_RT_FILTER_MAX];
    size_t len = 0;
    int r = sg_rt_filter_build(flags, (int)getpid(), ins, SG_RT_FILTER_MAX, &len);
    if (r < 0)
        return r;
    struct sock_fprog prog = {.len = (unsigned short)len, .filter = ins};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        return -errno;
    long rc = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog);
    if (rc < 0)
        return -errno;
    /* With TSYNC a positive result is the id of a thread that could not be
     * synchronised: the filter is then on no thread at all. */
    return rc > 0 ? -ESRCH : 0;
}
