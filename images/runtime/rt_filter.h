/* rt_filter.h - the run-time seccomp filter a runner installs in the job's
 * process before the user's code runs (policies/README.md, "Run-time rules").
 *
 * The filter refuses, unless the job's policy allows them:
 *   processes: execve, execveat, fork, vfork and clone without CLONE_THREAD
 *              fail with EPERM; clone3 fails with ENOSYS, so glibc falls back
 *              to clone, whose flags the filter can read (threads still start).
 *              Other processes are out of reach too (the runner's parent runs
 *              as the same uid): kill, tgkill, rt_sigqueueinfo,
 *              rt_tgsigqueueinfo and pidfd_open reach only the process itself
 *              (kill also 0 and its own group: the runner makes it a group
 *              leader); tkill, pidfd_send_signal, pidfd_getfd, ptrace and
 *              process_vm_readv/writev fail with EPERM;
 *   network:   socket() and socketpair() of every family but AF_UNIX, and
 *              io_uring_setup (its ring can open sockets), fail with EPERM.
 *   new code (only with SG_RT_NO_NEW_CODE: the runner has mapped every
 *              library the job may load beforehand): mmap() with PROT_EXEC,
 *              file-backed or anonymous, mprotect() and pkey_mprotect()
 *              with PROT_EXEC, shmat() with SHM_EXEC, remap_file_pages() and
 *              personality() setting READ_IMPLIES_EXEC fail with EPERM (a
 *              refused mapping has no effect: the loader reports an error).
 *              Not for V8 (its JIT maps anonymous executable memory).
 * Any system call made with another architecture's calling convention (i386
 * int 0x80, x32) kills the process: the numbers above are x86_64's.
 *
 * With SG_RT_KILL_REFUSALS the hard refusals kill the whole process
 * (SECCOMP_RET_KILL_PROCESS: its parent sees SIGSYS from waitpid) instead of
 * failing with EPERM, so a program cannot catch the error and carry on
 * unreported: execve, execveat, fork, vfork, clone without CLONE_THREAD and,
 * offline, socket()/socketpair() of a family other than AF_UNIX and
 * io_uring_setup. clone3 still fails with ENOSYS (glibc's threads fall back
 * to clone); signals, ptrace and the networked TCP-only rules stay EPERM.
 *
 * No dependency beyond libc: the same code is linked into the runners'
 * shared library (rt_lib.c) and into the unit tests.
 */
#ifndef SG_RT_FILTER_H
#define SG_RT_FILTER_H

#include <linux/filter.h>
#include <stddef.h>

#define SG_RT_ALLOW_PROCESSES 0x1u /* the policy allows processes */
#define SG_RT_ALLOW_NETWORK 0x2u   /* the job has network */
#define SG_RT_KILL_REFUSALS 0x4u   /* hard refusals kill the process (above) */
#define SG_RT_NO_NEW_CODE 0x8u     /* no new executable memory (above) */
#define SG_RT_FLAGS_ALL                                                                            \
    (SG_RT_ALLOW_PROCESSES | SG_RT_ALLOW_NETWORK | SG_RT_KILL_REFUSALS | SG_RT_NO_NEW_CODE)

/* Longest program the builder emits (checked by the builder itself). */
#define SG_RT_FILTER_MAX 128

/* Pure: writes the BPF program for flags into out (room for cap
 * instructions) and its length to *ret_len; self is the pid of the process
 * that will install it (the only one it may signal). Returns 0, -EINVAL for
 * unknown flags or a pid below 1, -ENOSPC when cap is too small. */
int sg_rt_filter_build(unsigned flags, int self, struct sock_filter *out, size_t cap,
                       size_t *ret_len);

/* Sets PR_SET_NO_NEW_PRIVS and installs the filter for flags on every thread
 * of the calling process (SECCOMP_FILTER_FLAG_TSYNC: Node has started its
 * threads before the job). Irreversible. Returns 0 or a negative errno
 * (-ESRCH: a thread could not be synchronised). */
int sg_rt_filter_install(unsigned flags);

#endif
