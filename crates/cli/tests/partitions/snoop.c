/* A hostile partition that tries to reach beyond its own files and identity, or to exhaust
 * the host's tasks, and prints what the kernel answered (tests/run_confine.rs).
 *   snoop files TAG RO_DIR RW_DIR  creates TAG-named files in /etc, /root, /tmp, /usr (the
 *                                  host's paths), one in its working directory, reads the other
 *                                  partition's data directory (../Other), tries setuid(0),
 *                                  reads and writes the binds RO_DIR and RW_DIR, prints its
 *                                  RLIMIT_NOFILE.
 *   snoop fork                     forks until fork fails; the children wait for ever. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include "ARINC653.h"

static void create(const char *what, const char *path) {
    int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (fd < 0) {
        printf("%s refused %d\n", what, errno);
        return;
    }
    int ok = write(fd, "snoop\n", 6) == 6;
    close(fd);
    printf("%s %s\n", what, ok ? "ALLOWED" : "short");
}

static void files(const char *tag, const char *ro, const char *rw) {
    char path[512], cwd[512];
    const char *dirs[] = {"/etc", "/root", "/tmp", "/usr"};
    for (int i = 0; i < 4; i++) {
        char what[64];
        snprintf(path, sizeof path, "%s/partita-snoop-%s", dirs[i], tag);
        snprintf(what, sizeof what, "create %s", dirs[i]);
        create(what, path);
    }
    printf("cwd %s\n", getcwd(cwd, sizeof cwd) ? cwd : "?");
    create("create cwd", "snoop-cwd-file");
    printf("uid %d euid %d gid %d egid %d groups %d\n", (int)getuid(), (int)geteuid(), (int)getgid(), (int)getegid(),
           getgroups(0, NULL));
    DIR *d = opendir("../Other");
    printf("other-dir %s %d\n", d ? "ALLOWED" : "refused", d ? 0 : errno);
    if (d) closedir(d);
    snprintf(path, sizeof path, "../Other/snoop-%s", tag);
    create("other-create", path);
    errno = 0;
    int su = setuid(0), su_errno = errno;
    printf("setuid0 %s %d\n", su == 0 ? "ALLOWED" : "refused", su_errno);
    snprintf(path, sizeof path, "%s/data", ro);
    char buf[64] = {0};
    int fd = open(path, O_RDONLY);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0) close(fd);
    if (n > 0 && buf[n - 1] == '\n') buf[n - 1] = 0;
    printf("ro-read %s\n", n > 0 ? buf : "failed");
    snprintf(path, sizeof path, "%s/new", ro);
    create("ro-write", path);
    snprintf(path, sizeof path, "%s/written", rw);
    create("rw-write", path);
    struct rlimit nofile;
    getrlimit(RLIMIT_NOFILE, &nofile);
    printf("nofile %llu %llu\n", (unsigned long long)nofile.rlim_cur, (unsigned long long)nofile.rlim_max);
    fd = open("/dev/null", O_WRONLY);
    printf("dev-null %s\n", fd >= 0 && write(fd, "x", 1) == 1 ? "ok" : "failed");
    printf("dev-tty %s\n", open("/dev/tty", O_RDWR) >= 0 || access("/dev/tty", F_OK) == 0 ? "present" : "absent");
}

static void fork_bomb(void) {
    int count = 0;
    for (;;) {
        pid_t pid = fork();
        if (pid == 0) {
            for (;;) pause();
        }
        if (pid < 0) {
            printf("fork stopped after %d errno %d\n", count, errno);
            return;
        }
        if (++count >= 100000) {
            printf("fork never stopped: %d\n", count);
            return;
        }
    }
}

int main(int argc, char **argv) {
    RETURN_CODE_TYPE rc;
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc > 4 && strcmp(argv[1], "files") == 0)
        files(argv[2], argv[3], argv[4]);
    else if (argc > 1 && strcmp(argv[1], "fork") == 0)
        fork_bomb();
    else
        printf("usage: snoop files TAG RO RW | snoop fork\n");
    printf("done\n");
    SET_PARTITION_MODE(NORMAL, &rc);
    return 1;
}
