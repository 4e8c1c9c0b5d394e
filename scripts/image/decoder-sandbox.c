/*
 * vision-decoder-sandbox [--read PATH]... -- PROGRAM [ARG]...
 *
 * Runs a decoder (ffmpeg, ffprobe) under a Landlock domain: it may read and run what the system holds
 * (/usr, /lib*, /bin, /sbin), read a few files of /etc that name resolution, TLS and the dynamic loader need,
 * /dev/null, /dev/urandom, the CPU list in /sys, and each --read PATH (the input file); it may write
 * /dev/null and nothing else. Everything else is out of reach: /proc (so /proc/<service pid>/environ, cmdline,
 * fd, mem), /app, /run, /tmp, /models, mounted secrets. From Landlock ABI 6 it can neither signal nor reach an
 * abstract unix socket outside its domain; from ABI 1 it cannot ptrace one. Network (TCP to the pinned relay
 * and the egress proxy) is left as it is. The domain is inherited by every child and cannot be lifted.
 *
 * Where the kernel offers no Landlock (built without it, or not in the lsm= list), or a seccomp profile
 * refuses its syscalls, it refuses: exit 126 and one line on stderr. It never runs the program unconfined.
 * Built in the image (Dockerfile, stage "sandbox"); no dependency beyond libc and the kernel's ABI.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_add_rule 445
#define __NR_landlock_restrict_self 446
#endif

/* The kernel's uapi (linux/landlock.h), spelled here so that older headers still build it. */
#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH 1
#define LL_EXECUTE (1ULL << 0)
#define LL_WRITE_FILE (1ULL << 1)
#define LL_READ_FILE (1ULL << 2)
#define LL_READ_DIR (1ULL << 3)
#define LL_ABI1_FS ((1ULL << 13) - 1) /* EXECUTE ... MAKE_SYM */
#define LL_REFER (1ULL << 13)         /* ABI 2 */
#define LL_TRUNCATE (1ULL << 14)      /* ABI 3 */
#define LL_IOCTL_DEV (1ULL << 15)     /* ABI 5 */
#define LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0) /* ABI 6 */
#define LL_SCOPE_SIGNAL (1ULL << 1)               /* ABI 6 */
#define LL_FILE_RIGHTS (LL_EXECUTE | LL_WRITE_FILE | LL_READ_FILE | LL_TRUNCATE | LL_IOCTL_DEV)

struct ruleset_attr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};
struct path_beneath_attr {
  uint64_t allowed_access;
  int32_t parent_fd;
} __attribute__((packed));

static const char *const RUN[] = {"/usr", "/lib", "/lib64", "/bin", "/sbin"};
static const char *const READ[] = {
    "/etc/ld.so.cache", "/etc/ssl",      "/etc/ca-certificates", "/etc/resolv.conf", "/etc/hosts",
    "/etc/nsswitch.conf", "/etc/gai.conf", "/etc/host.conf",      "/etc/localtime",   "/etc/services",
    "/etc/protocols",   "/dev/urandom",  "/dev/random",          "/sys/devices/system/cpu"};

static int fail(const char *what) {
  fprintf(stderr, "vision-decoder-sandbox: %s: %s (refusing to run the decoder unconfined)\n", what,
          strerror(errno));
  return 126;
}

/* Allows `access` beneath `path` (only the file rights when it is not a directory); a missing path is skipped. */
static int allow(int ruleset, const char *path, uint64_t access, uint64_t handled) {
  int fd = open(path, O_PATH | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT ? 0 : -1;
  struct stat st;
  if (fstat(fd, &st) != 0) return close(fd), -1;
  if (!S_ISDIR(st.st_mode)) access &= LL_FILE_RIGHTS;
  struct path_beneath_attr rule = {.allowed_access = access & handled, .parent_fd = fd};
  long r = syscall(__NR_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &rule, 0);
  int saved = errno;
  close(fd);
  errno = saved;
  return r == 0 ? 0 : -1;
}

int main(int argc, char **argv) {
  int i = 1;
  for (; i < argc && strcmp(argv[i], "--") != 0; i += 2)
    if (strcmp(argv[i], "--read") != 0 || i + 1 >= argc) {
      fprintf(stderr, "usage: vision-decoder-sandbox [--read PATH]... -- PROGRAM [ARG]...\n");
      return 126;
    }
  if (i + 1 >= argc) {
    fprintf(stderr, "usage: vision-decoder-sandbox [--read PATH]... -- PROGRAM [ARG]...\n");
    return 126;
  }
  long abi = syscall(__NR_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
  if (abi < 1) return fail("Landlock is not available");
  struct ruleset_attr attr = {.handled_access_fs = LL_ABI1_FS};
  size_t size = sizeof attr.handled_access_fs;
  if (abi >= 2) attr.handled_access_fs |= LL_REFER;
  if (abi >= 3) attr.handled_access_fs |= LL_TRUNCATE;
  if (abi >= 4) size = 2 * sizeof(uint64_t);
  if (abi >= 5) attr.handled_access_fs |= LL_IOCTL_DEV;
  if (abi >= 6) {
    attr.scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL;
    size = sizeof attr;
  }
  int ruleset = (int)syscall(__NR_landlock_create_ruleset, &attr, size, 0);
  if (ruleset < 0) return fail("landlock_create_ruleset");
  const uint64_t h = attr.handled_access_fs;
  for (size_t k = 0; k < sizeof RUN / sizeof *RUN; k++)
    if (allow(ruleset, RUN[k], LL_EXECUTE | LL_READ_FILE | LL_READ_DIR, h)) return fail(RUN[k]);
  for (size_t k = 0; k < sizeof READ / sizeof *READ; k++)
    if (allow(ruleset, READ[k], LL_READ_FILE | LL_READ_DIR, h)) return fail(READ[k]);
  if (allow(ruleset, "/dev/null", LL_READ_FILE | LL_WRITE_FILE | LL_TRUNCATE, h)) return fail("/dev/null");
  for (int k = 1; k < i; k += 2)
    if (allow(ruleset, argv[k + 1], LL_READ_FILE | LL_READ_DIR, h)) return fail(argv[k + 1]);
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return fail("no_new_privs");
  if (syscall(__NR_landlock_restrict_self, ruleset, 0) != 0) return fail("landlock_restrict_self");
  close(ruleset);
  execvp(argv[i + 1], argv + i + 1);
  fprintf(stderr, "vision-decoder-sandbox: cannot run %s: %s\n", argv[i + 1], strerror(errno));
  return 127;
}
