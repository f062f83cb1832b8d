/* The Node job's no-new-native-code filter (images/nodejs/runner_nocode.c),
 * installed for real in a forked child: file-backed executable mappings are
 * refused, anonymous ones (a JIT's) and plain file mappings are not. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runner_nocode.c"

/* In a child: asked or not, then the three mappings; exit code = bit set of
 * what failed (1 file exec, 2 anonymous exec, 4 file read), 64 on setup. */
static int child_status(const char *ask)
{
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        if (ask)
            setenv("SANDGATE_NOCODE", ask, 1);
        else
            unsetenv("SANDGATE_NOCODE");
        napi_register_module_v1(NULL, NULL);
        const char *res = getenv("SANDGATE_NOCODE_RESULT");
        if (!res || strcmp(res, ask && strcmp(ask, "1") == 0 ? "0" : "1") != 0)
            _exit(64);
        int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC), bad = 0;
        if (fd < 0)
            _exit(64);
        void *m = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
        bad |= m == MAP_FAILED ? (errno == EPERM ? 1 : 64) : 0;
        m = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1,
                 0);
        bad |= m == MAP_FAILED ? 2 : 0;
        m = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
        bad |= m == MAP_FAILED ? 4 : 0;
        _exit(bad);
    }
    int st = 0;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFEXITED(st), "child status %d", st);
    return WEXITSTATUS(st);
}

Test(node_nocode, file_backed_exec_mappings_are_refused)
{
    cr_assert_eq(child_status("1"), 1); /* only the file's executable mapping failed */
}

Test(node_nocode, nothing_is_installed_unless_asked)
{
    cr_assert_eq(child_status(NULL), 0);
    cr_assert_eq(child_status("yes"), 0);
}
