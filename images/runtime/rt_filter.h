/* rt_filter.h - the run-time seccomp filter a runner installs in the job's
 * process before the user's code runs (policies/README.md, "Run-time rules").
 *
 * The filter refuses, unless the job's policy allows them:
 *   processes: execve, execveat, fork, vfork and clone without CLONE_THREAD
 *              fail with EPERM; clone3 fails with ENOSYS, so glibc falls back
 *              to clone, whose flags the filter can read (threads still start);
 *   network:   socket() of every family but AF_UNIX, and io_uring_setup
 *              (its ring can open sockets), fail with EPERM.
 * Any system call made with another architecture's calling convention (i386
 * int 0x80, x32) kills the process: the numbers above are x86_64's.
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
#define SG_RT_FLAGS_ALL (SG_RT_ALLOW_PROCESSES | SG_RT_ALLOW_NETWORK)

/* Longest program the builder emits (checked by the builder itself). */
#define SG_RT_FILTER_MAX 32

/* Pure: writes the BPF program for flags into out (room for cap
 * instructions) and its length to *ret_len. Returns 0, -EINVAL for unknown
 * flags, -ENOSPC when cap is too small. */
int sg_rt_filter_build(unsigned flags, struct sock_filter *out, size_t cap, size_t *ret_len);

/* Sets PR_SET_NO_NEW_PRIVS and installs the filter for flags on every thread
 * of the calling process (SECCOMP_FILTER_FLAG_TSYNC: Node has started its
 * threads before the job). Irreversible. Returns 0 or a negative errno
 * (-ESRCH: a thread could not be synchronised). */
int sg_rt_filter_install(unsigned flags);

#endif
