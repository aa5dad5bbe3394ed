/* The supervisor: runs the workload the host's spec describes and reports
 * every network system call it makes.
 *
 * It is part of the guest's PID 1 (init.c), not a process of its own: if
 * it dies, the kernel panics and the VM stops (panic=-1), so the workload
 * cannot outlive it and the host sees a run without a trailer.
 *
 * Process layout:
 *
 *   PID 1 (init + supervisor; holds the evidence port; initial namespaces)
 *    ├─ heartbeat thread, worker threads for calls it performs
 *    └─ reaper: pid 1 of the workload's pid namespace; new mount, ipc and
 *       uts namespaces; root pivoted onto an overlay of the spec's root;
 *       installs the seccomp filter (so it and every descendant carry it),
 *       hands the listener to PID 1, then forks the entrypoint and reaps
 *       until no process is left in the namespace
 *        └─ entrypoint: credentials and capabilities dropped, the spec's
 *           argv/env/cwd, stdin /dev/null, stdout/stderr a pipe to PID 1
 *           (or pipes to the stdio port, or a terminal of the workload's
 *           devpts whose master PID 1 holds: docs/supervisor.md)
 *
 * The reaper is ours and static: it runs nothing from the image.  Signals
 * from inside its namespace cannot kill it (pid-1 rules), and it is not
 * dumpable, so the workload (without CAP_SYS_PTRACE) cannot reach its
 * memory.  When it exits the kernel kills whatever is left in the
 * namespace. */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>
#include <grp.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <net/route.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/openat2.h>
#include <termios.h>

#include "image-files.h"
#include "run-spec.h"
#include "supervisor.h"

#define HANDOFF_TIMEOUT_MS 10000
#define RUN_DIR "/airlock/run"
#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
/* Where the static shell appears in the workload's root (AIRLOCK_SPEC_SHELL). */
#define STATIC_SHELL "/.airlock/bin/sh"

static __attribute__ ((format (printf, 3, 4))) int
fail (char *error, size_t size, const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (error, size, fmt, ap);
  va_end (ap);
  return -EINVAL;
}

static int mkdir_p (const char *path, mode_t mode);

/* ---- the image's user ------------------------------------------------------ */

/* Resolves the image's User the way container runtimes do: "name" or "uid",
 * optionally ":group" or ":gid"; names through the workload root's
 * /etc/passwd and /etc/group; a named user's gid and supplementary groups
 * from those files, a bare uid gets gid 0... unless passwd knows it. */
static int
resolve_user (struct run_spec *spec, char *error, size_t error_size)
{
  static char passwd[256 * 1024], group[256 * 1024], copy[256 * 1024];
  ssize_t passwd_len = read_file ("/etc/passwd", passwd, sizeof passwd);
  ssize_t group_len = read_file ("/etc/group", group, sizeof group);

  /* A file too large for our bound is not a missing one: say which, so the
   * verdict's reason is one a person can act on. */
  if (passwd_len < 0 && passwd_len != -ENOENT)
    return fail (error, error_size, "user '%s': cannot read the image's /etc/passwd: %s",
                 spec->user, passwd_len == -EFBIG ? "it is over 256 KiB" : strerror ((int) -passwd_len));
  if (group_len < 0 && group_len != -ENOENT)
    return fail (error, error_size, "user '%s': cannot read the image's /etc/group: %s",
                 spec->user, group_len == -EFBIG ? "it is over 256 KiB" : strerror ((int) -group_len));

  return resolve_user_in (spec, passwd_len >= 0 ? passwd : NULL, group_len >= 0 ? group : NULL,
                          copy, sizeof copy, error, error_size);
}

/* The image's disk: the virtio disk whose serial the host named, mounted
 * read-only at the spec's root (the overlay's lower layer). */
static int
mount_root_disk (const struct run_spec *spec, char *error, size_t error_size)
{
  uint64_t deadline = clock_ns (CLOCK_MONOTONIC) + 5000 * NS_PER_MS;
  char dev[300] = "";
  int r;

  while (!dev[0])
    {
      DIR *dir = opendir ("/sys/block");
      struct dirent *de;

      while (dir && (de = readdir (dir)))
        {
          char path[300], serial[128];

          if (de->d_name[0] == '.')
            continue;
          snprintf (path, sizeof path, "/sys/block/%s/serial", de->d_name);
          if (read_file (path, serial, sizeof serial) < 0)
            continue;
          serial[strcspn (serial, "\n")] = '\0';
          if (strcmp (serial, spec->root_disk) == 0)
            {
              snprintf (dev, sizeof dev, "/dev/%s", de->d_name);
              break;
            }
        }
      if (dir)
        closedir (dir);
      if (dev[0])
        break;
      if (clock_ns (CLOCK_MONOTONIC) > deadline)
        return fail (error, error_size, "no disk with serial '%s' appeared", spec->root_disk);
      sleep_ms (20);
    }
  if ((r = mkdir_p (spec->root, 0755)) < 0)
    return fail (error, error_size, "cannot create '%s': %s", spec->root, strerror (-r));
  if (mount (dev, spec->root, "ext4", MS_RDONLY, "noload") < 0)
    return fail (error, error_size, "cannot mount the image disk '%s' (%s) on '%s': %s",
                 spec->root_disk, dev, spec->root, strerror (errno));
  return 0;
}

/* ---- the reaper ----------------------------------------------------------- */

/* Shared between PID 1 and the reaper (MAP_SHARED, made before the
 * clone): the listener handoff and the entrypoint's status. */
enum handoff_state { HANDOFF_WAITING, HANDOFF_PUBLISHED, HANDOFF_ACKED, HANDOFF_FAILED };

struct handoff {
  int state;               /* enum handoff_state, atomic */
  int listener_fd;         /* the reaper's fd number of the listener */
  int entrypoint_exited;   /* atomic */
  int entrypoint_status;   /* wait status */
  char error[400];         /* HANDOFF_FAILED: why */
  int pty_fd;              /* TTY runs: the reaper's fd number of the terminal's master */
  int shell_fallback;      /* the static shell was bound and runs instead of argv[0] */
  /* The entrypoint's execve, for the WORKLOAD_EXEC event.  The entrypoint
   * process writes exec_failed/exec_errno/exec_note/exec_path before it
   * gives up (this mapping is gone once its execve succeeds, so nothing the
   * image runs can write here); the reaper learns the outcome from a
   * close-on-exec pipe (end of file: the execve succeeded or the process
   * died) and then publishes exec_state. */
  int exec_state;          /* enum exec_state, atomic */
  int exec_failed;         /* atomic; set by the entrypoint before _exit */
  int exec_errno;
  pid_t exec_pid;          /* the entrypoint, in the workload's pid namespace */
  char exec_note[200];
  char exec_path[4096];    /* what was last handed to execve (argv[0] or a PATH candidate) */
};

enum exec_state {
  EXEC_PENDING = 0,
  EXEC_REPORTED = 1,       /* exec_failed says how it went */
};

struct reaper_args {
  struct run_spec *spec;
  bool filter;
  struct handoff *handoff;
  int in_fd;               /* read end of the workload's stdin pipe, or -1: /dev/null */
  int out_fd;              /* write end of its stdout pipe */
  int err_fd;              /* write end of its stderr pipe (may equal out_fd) */
};

static int
reaper_fail (struct handoff *h, const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (h->error, sizeof h->error, fmt, ap);
  va_end (ap);
  __atomic_store_n (&h->state, HANDOFF_FAILED, __ATOMIC_RELEASE);
  return 1;
}

static int
mkdir_p (const char *path, mode_t mode)
{
  char buf[4096];
  size_t len = strlen (path);

  if (len >= sizeof buf)
    return -ENAMETOOLONG;
  memcpy (buf, path, len + 1);
  for (char *p = buf + 1; *p; p++)
    if (*p == '/')
      {
        *p = '\0';
        if (mkdir (buf, mode) < 0 && errno != EEXIST)
          return -errno;
        *p = '/';
      }
  if (mkdir (buf, mode) < 0 && errno != EEXIST)
    return -errno;
  return 0;
}

static int
write_text (const char *path, const char *text)
{
  int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  int r;

  if (fd < 0)
    return -errno;
  r = write_all (fd, text, strlen (text));
  close (fd);
  return r;
}

/* A minimal /dev, as container runtimes give one: no evidence port, no
 * disks, no console. */
static int
populate_dev (const char *dev)
{
  static const struct { const char *name; unsigned major, minor; } nodes[] = {
    { "null", 1, 3 }, { "zero", 1, 5 }, { "full", 1, 7 },
    { "random", 1, 8 }, { "urandom", 1, 9 }, { "tty", 5, 0 },
  };
  static const struct { const char *name, *target; } links[] = {
    { "fd", "/proc/self/fd" }, { "stdin", "/proc/self/fd/0" },
    { "stdout", "/proc/self/fd/1" }, { "stderr", "/proc/self/fd/2" },
    { "ptmx", "pts/ptmx" },
  };
  char path[512];

  if (mount ("tmpfs", dev, "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=755,size=65536k") < 0)
    return -errno;
  for (size_t i = 0; i < sizeof nodes / sizeof nodes[0]; i++)
    {
      snprintf (path, sizeof path, "%s/%s", dev, nodes[i].name);
      if (mknod (path, S_IFCHR | 0666, makedev (nodes[i].major, nodes[i].minor)) < 0)
        return -errno;
      if (chmod (path, 0666) < 0)   /* past the umask */
        return -errno;
    }
  for (size_t i = 0; i < sizeof links / sizeof links[0]; i++)
    {
      snprintf (path, sizeof path, "%s/%s", dev, links[i].name);
      if (symlink (links[i].target, path) < 0)
        return -errno;
    }
  snprintf (path, sizeof path, "%s/pts", dev);
  if (mkdir (path, 0755) < 0
      || mount ("devpts", path, "devpts", MS_NOSUID | MS_NOEXEC,
                "newinstance,ptmxmode=0666,mode=620") < 0)
    return -errno;
  snprintf (path, sizeof path, "%s/shm", dev);
  if (mkdir (path, 01777) < 0
      || mount ("shm", path, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=1777,size=65536k") < 0)
    return -errno;
  return 0;
}

/* TRUE when @file (absolute) is an executable regular file inside the
 * workload's root @root, its symlinks resolved there (RESOLVE_IN_ROOT: an
 * absolute link such as /bin/sh -> /bin/busybox must not reach ours). */
static bool
executable_in_root (const char *root, const char *file)
{
  struct open_how how = { .flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_IN_ROOT };
  struct stat st;
  int root_fd, fd;
  bool ok;

  root_fd = open (root, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root_fd < 0)
    return false;
  fd = (int) syscall (SYS_openat2, root_fd, file + 1, &how, sizeof how);
  close (root_fd);
  if (fd < 0)
    return false;
  ok = fstat (fd, &st) == 0 && S_ISREG (st.st_mode) && (st.st_mode & 0111);
  close (fd);
  return ok;
}

/* `airlock shell` on an image without a shell: airlock's static shell
 * (spec->shell_dir, in our initramfs: bin/sh, a static busybox) is bound
 * read-only, nosuid, nodev at /.airlock in the workload's root, a path no
 * image file is at.  It is a program the workload could have brought
 * itself: it gains nothing it did not have, and nothing of ours but that
 * directory is visible.  Before the pivot, while our root is still there
 * to bind from; no workload process exists yet, so the checks cannot be
 * raced.  Sets h->shell_fallback when it bound it. */
static int
setup_static_shell (const struct run_spec *spec, const char *root, struct handoff *h)
{
  char target[256], shell[512];
  struct stat st;

  if (executable_in_root (root, spec->argv[0]))
    return 0;
  snprintf (shell, sizeof shell, "%s/bin/sh", spec->shell_dir);
  if (stat (shell, &st) < 0 || !S_ISREG (st.st_mode))
    return reaper_fail (h, "the image has no '%s' and this guest image has no static shell "
                        "at '%s'", spec->argv[0], shell);
  snprintf (target, sizeof target, "%s/.airlock", root);
  /* mount(2) follows a symlink at the target: only a real directory (the
   * image's own, mounted over) or a new one in the overlay. */
  if (lstat (target, &st) == 0 && !S_ISDIR (st.st_mode))
    return reaper_fail (h, "cannot bind the static shell: '/.airlock' in the image is not a "
                        "directory");
  if (lstat (target, &st) < 0 && mkdir (target, 0755) < 0)
    return reaper_fail (h, "cannot create '/.airlock' in the workload's root: %s", strerror (errno));
  if (mount (spec->shell_dir, target, NULL, MS_BIND, NULL) < 0
      || mount (NULL, target, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) < 0)
    return reaper_fail (h, "cannot bind the static shell at '/.airlock': %s", strerror (errno));
  h->shell_fallback = 1;
  return 0;
}

/* The workload's root: an overlay of the spec's root under a tmpfs upper
 * layer (every run starts from the pristine tree, and nothing it writes
 * reaches ours), with /proc of its pid namespace, a read-only /sys, a
 * minimal /dev and /etc/hosts and /etc/hostname.  Then pivot_root into it
 * and drop ours from view. */
static int
setup_root (const struct run_spec *spec, struct handoff *h)
{
  char opts[4096 + 128], root[] = RUN_DIR "/root", path[256];
  struct stat st;
  int r;

  if (mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
    return reaper_fail (h, "cannot make the mounts private: %s", strerror (errno));
  if ((r = mkdir_p (RUN_DIR, 0700)) < 0)
    return reaper_fail (h, "cannot create '%s': %s", RUN_DIR, strerror (-r));
  if (mount ("tmpfs", RUN_DIR, "tmpfs", MS_NOSUID | MS_NODEV, "mode=700") < 0)
    return reaper_fail (h, "cannot mount a tmpfs on '%s': %s", RUN_DIR, strerror (errno));
  if (mkdir (RUN_DIR "/upper", 0755) < 0 || mkdir (RUN_DIR "/work", 0700) < 0
      || mkdir (root, 0755) < 0)
    return reaper_fail (h, "cannot create the overlay's directories: %s", strerror (errno));
  if (stat (spec->root, &st) < 0 || !S_ISDIR (st.st_mode))
    return reaper_fail (h, "the workload's root '%s' is not a directory: %s", spec->root,
                        strerror (errno ? errno : ENOTDIR));
  snprintf (opts, sizeof opts, "lowerdir=%s,upperdir=%s/upper,workdir=%s/work", spec->root,
            RUN_DIR, RUN_DIR);
  if (mount ("overlay", root, "overlay", 0, opts) < 0)
    return reaper_fail (h, "cannot mount the overlay of '%s': %s", spec->root, strerror (errno));

  for (const char *const *d = (const char *const[]) { "proc", "dev", "sys", "tmp", "etc", NULL }; *d; d++)
    {
      bool mount_point = strcmp (*d, "tmp") != 0 && strcmp (*d, "etc") != 0;

      snprintf (path, sizeof path, "%s/%s", root, *d);
      /* Mount points must be real directories: mount(2) follows a symlink
       * the image put there.  Anything else is replaced, in the overlay
       * (the image's disk is never touched).  /tmp and /etc only need to
       * exist (a symlink there resolves inside the workload's root). */
      if (mount_point && lstat (path, &st) == 0 && !S_ISDIR (st.st_mode) && unlink (path) < 0)
        return reaper_fail (h, "cannot replace '/%s' (not a directory) in the workload's root: %s",
                            *d, strerror (errno));
      if (lstat (path, &st) < 0 && mkdir (path, strcmp (*d, "tmp") == 0 ? 01777 : 0755) < 0)
        return reaper_fail (h, "cannot create '/%s' in the workload's root: %s", *d,
                            strerror (errno));
    }
  snprintf (path, sizeof path, "%s/proc", root);
  if (mount ("proc", path, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
    return reaper_fail (h, "cannot mount /proc for the workload: %s", strerror (errno));
  snprintf (path, sizeof path, "%s/sys", root);
  if (mount ("sysfs", path, "sysfs", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY, NULL) < 0)
    return reaper_fail (h, "cannot mount /sys for the workload: %s", strerror (errno));
  snprintf (path, sizeof path, "%s/dev", root);
  if ((r = populate_dev (path)) < 0)
    return reaper_fail (h, "cannot build the workload's /dev: %s", strerror (-r));
  if (spec->shell_dir && setup_static_shell (spec, root, h) != 0)
    return 1;

  /* pivot_root(".", ".") stacks the old root on the new one; detaching it
   * leaves only the new one (pivot_root(2), "new_root and put_old may be
   * the same directory"). */
  if (chdir (root) < 0)
    return reaper_fail (h, "cannot enter '%s': %s", root, strerror (errno));
  if (syscall (SYS_pivot_root, ".", ".") < 0)
    return reaper_fail (h, "pivot_root into the workload's root failed: %s", strerror (errno));
  if (umount2 (".", MNT_DETACH) < 0)
    return reaper_fail (h, "cannot detach the supervisor's root: %s", strerror (errno));
  if (chdir ("/") < 0)
    return reaper_fail (h, "cannot enter the workload's '/': %s", strerror (errno));
  if (sethostname (spec->hostname, strlen (spec->hostname)) < 0)
    return reaper_fail (h, "cannot set the hostname '%s': %s", spec->hostname, strerror (errno));
  /* After the pivot: a symlink in the image (/etc itself, or one of these
   * files) then resolves inside the workload's root, never in ours. */
  {
    char hosts[512];

    snprintf (hosts, sizeof hosts,
              "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n"
              "127.0.1.1\t%s\n", spec->hostname);
    snprintf (path, sizeof path, "/etc/hosts");
    unlink (path);
    if ((r = write_text (path, hosts)) < 0)
      return reaper_fail (h, "cannot write /etc/hosts for the workload: %s", strerror (-r));
    snprintf (hosts, sizeof hosts, "%s\n", spec->hostname);
    snprintf (path, sizeof path, "/etc/hostname");
    if ((r = write_text (path, hosts)) < 0)
      return reaper_fail (h, "cannot write /etc/hostname for the workload: %s", strerror (-r));
    /* QEMU user networking's resolver address, as a runtime would give
     * its containers one: software behaves as if it were online, and its
     * queries are records (and, with a NIC, packets in the capture). */
    snprintf (path, sizeof path, "/etc/resolv.conf");
    unlink (path);   /* often a symlink into /run: replace, never follow */
    if ((r = write_text (path, "nameserver 10.0.2.3\n")) < 0)
      return reaper_fail (h, "cannot write /etc/resolv.conf for the workload: %s", strerror (-r));
  }

  return 0;
}

/* Docker's default capability set (moby oci/caps/defaults.go): what images
 * expect to have as root.  Everything else leaves the bounding set, so no
 * process of the workload can load modules, mount, trace or reach raw I/O,
 * setuid binaries included.
 *
 * Less CAP_MKNOD: Docker pairs it with a devices cgroup that lets a
 * container open only a handful of nodes; there is none here, so a node
 * made with it would open any device of the guest — the serial console
 * and kernel log (forged lines in the bundle's console.log), the image
 * disk, the virtio-serial ports (tests/hostile: evidence-port,
 * forge-frames, disk-write).  The nodes a workload needs are made for it
 * in its /dev. */
static const int default_caps[] = {
  CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_FSETID, CAP_FOWNER, CAP_NET_RAW,
  CAP_SETGID, CAP_SETUID, CAP_SETFCAP, CAP_SETPCAP, CAP_NET_BIND_SERVICE,
  CAP_SYS_CHROOT, CAP_KILL, CAP_AUDIT_WRITE,
};

static bool
is_default_cap (int cap)
{
  for (size_t i = 0; i < sizeof default_caps / sizeof default_caps[0]; i++)
    if (default_caps[i] == cap)
      return true;
  return false;
}

static int
drop_capabilities (bool root)
{
  struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
  struct __user_cap_data_struct data[2] = { { 0 } };

  for (int cap = 0; cap <= 63; cap++)
    {
      if (is_default_cap (cap))
        continue;
      if (prctl (PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
        return -errno;
    }
  if (prctl (PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
    return -errno;
  if (!root)
    return 0;   /* setresuid to a non-zero uid clears the sets */
  for (size_t i = 0; i < sizeof default_caps / sizeof default_caps[0]; i++)
    {
      int cap = default_caps[i];
      data[cap / 32].effective |= 1u << (cap % 32);
      data[cap / 32].permitted |= 1u << (cap % 32);
    }
  if (syscall (SYS_capset, &hdr, data) < 0)
    return -errno;
  return 0;
}

static const char *
spec_getenv (const struct run_spec *spec, const char *name)
{
  size_t len = strlen (name);

  for (size_t i = 0; i < spec->envc; i++)
    if (strncmp (spec->envp[i], name, len) == 0 && spec->envp[i][len] == '=')
      return spec->envp[i] + len + 1;
  return NULL;
}

static void __attribute__ ((format (printf, 1, 2)))
entry_error (const char *fmt, ...)
{
  char line[600];
  va_list ap;
  int n;

  va_start (ap, fmt);
  n = vsnprintf (line, sizeof line - 1, fmt, ap);
  va_end (ap);
  if (n < 0)
    return;
  if ((size_t) n > sizeof line - 2)
    n = (int) sizeof line - 2;
  line[n++] = '\n';
  (void) write_all (STDERR_FILENO, line, (size_t) n);
}

/* The entrypoint gives up before its execve: why goes to the handoff (for
 * the WORKLOAD_EXEC event) and to its stderr (for the person reading the
 * output).  @err is an errno value. */
static __attribute__ ((noreturn, format (printf, 4, 5))) void
entry_fail (struct handoff *h, int err, int status, const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (h->exec_note, sizeof h->exec_note, fmt, ap);
  va_end (ap);
  h->exec_errno = err;
  __atomic_store_n (&h->exec_failed, 1, __ATOMIC_RELEASE);
  entry_error ("airlock: %s", h->exec_note);
  _exit (status);
}

static void
entry_exec (struct handoff *h, const char *path, const struct run_spec *spec)
{
  snprintf (h->exec_path, sizeof h->exec_path, "%s", path);
  execve (path, spec->argv, spec->envp);
}

/* The entrypoint process, after the reaper's fork: credentials, stdio,
 * cwd, then execve of argv[0] (searched in the spec's PATH when it has no
 * '/', as container runtimes do).  @report_fd is the write end of the
 * reaper's close-on-exec pipe: it must stay open until the execve. */
static __attribute__ ((noreturn)) void
run_entrypoint (const struct run_spec *spec, struct handoff *h, int report_fd, int in_fd,
                int out_fd, int err_fd)
{
  int r, exec_errno = ENOENT;

  snprintf (h->exec_path, sizeof h->exec_path, "%s", spec->argv[0]);
  if (setsid () < 0)
    entry_fail (h, errno, 126, "cannot start a session: %s", strerror (errno));
  /* A terminal: ours to control (its line discipline then sends ^C's
   * SIGINT to our foreground process group) and owned by the workload's
   * user, as login does, while we still may chown. */
  if (spec->tty && (ioctl (in_fd, TIOCSCTTY, 0) < 0
                    || fchown (in_fd, spec->uid, spec->gid) < 0))
    entry_fail (h, errno, 126, "cannot take the terminal: %s", strerror (errno));
  if (in_fd < 0)
    in_fd = open ("/dev/null", O_RDONLY);
  if (in_fd < 0 || dup2 (in_fd, 0) < 0 || dup2 (out_fd, 1) < 0 || dup2 (err_fd, 2) < 0)
    entry_fail (h, errno, 126, "cannot set up stdio: %s", strerror (errno));
  /* The report pipe at 3, everything else above it closed. */
  if (report_fd != 3 && syscall (SYS_dup3, report_fd, 3, O_CLOEXEC) < 0)
    entry_fail (h, errno, 126, "cannot keep the exec report pipe: %s", strerror (errno));
  if (syscall (SYS_close_range, 4, ~0u, 0) < 0)
    entry_fail (h, errno, 126, "cannot close inherited fds: %s", strerror (errno));

  if ((r = drop_capabilities (spec->uid == 0)) < 0)
    entry_fail (h, -r, 126, "cannot drop capabilities: %s", strerror (-r));
  if (setgroups (spec->n_groups, spec->groups) < 0
      || setresgid (spec->gid, spec->gid, spec->gid) < 0
      || setresuid (spec->uid, spec->uid, spec->uid) < 0)
    entry_fail (h, errno, 126, "cannot become uid %u gid %u: %s", spec->uid, spec->gid,
                strerror (errno));
  if (chdir (spec->cwd) < 0)
    entry_fail (h, errno, 126, "cannot change to the working directory '%s': %s", spec->cwd,
                strerror (errno));
  umask (022);

  if (strchr (spec->argv[0], '/'))
    {
      entry_exec (h, spec->argv[0], spec);
      exec_errno = errno;
    }
  else
    {
      const char *path = spec_getenv (spec, "PATH");
      char candidate[4096];

      if (!path)
        path = DEFAULT_PATH;
      while (*path)
        {
          const char *end = strchr (path, ':');
          size_t dlen = end ? (size_t) (end - path) : strlen (path);

          if (dlen > 0 && dlen + 1 + strlen (spec->argv[0]) < sizeof candidate)
            {
              snprintf (candidate, sizeof candidate, "%.*s/%s", (int) dlen, path, spec->argv[0]);
              entry_exec (h, candidate, spec);
              /* Like execvp: a file that exists but cannot run is the answer. */
              if (errno != ENOENT && errno != ENOTDIR)
                {
                  exec_errno = errno;
                  break;
                }
            }
          path = end ? end + 1 : path + dlen;
        }
    }
  if (exec_errno == ENOENT)
    snprintf (h->exec_path, sizeof h->exec_path, "%s", spec->argv[0]);
  entry_fail (h, exec_errno, exec_errno == ENOENT ? 127 : 126, "cannot execute '%s': %s",
              spec->argv[0], strerror (exec_errno));
}

/* pid 1 of the workload's namespaces. */
static int
reaper_main (void *data)
{
  struct reaper_args *a = data;
  struct handoff *h = a->handoff;
  struct sock_filter insns[128];
  struct sock_fprog prog;
  size_t n_insns;
  uint64_t deadline;
  pid_t entry;
  int listener, r, pty_master = -1, pty_slave = -1, report_r = -1, report_w = -1;

  /* Only the stdio pipes, at 10-12 (above anything PID 1 had open at 0-2,
   * below the rest): the evidence port and everything else of PID 1 stays
   * behind. */
  {
    int *fds[3] = { &a->in_fd, &a->out_fd, &a->err_fd };
    int tmp[3];

    /* Up out of the way first, so no move overwrites another pipe. */
    for (int i = 0; i < 3; i++)
      tmp[i] = *fds[i] >= 0 ? fcntl (*fds[i], F_DUPFD, 100) : -1;
    for (int i = 0; i < 3; i++)
      if (*fds[i] >= 0)
        {
          if (tmp[i] < 0 || dup2 (tmp[i], 10 + i) < 0)
            return reaper_fail (h, "cannot move the stdio pipes: %s", strerror (errno));
          *fds[i] = 10 + i;
        }
    if (syscall (SYS_close_range, 0, 9, 0) < 0 || syscall (SYS_close_range, 13, ~0u, 0) < 0)
      return reaper_fail (h, "cannot close inherited fds: %s", strerror (errno));
  }
  prctl (PR_SET_PDEATHSIG, SIGKILL);
  /* PID 1 blocks SIGCHLD for its signalfd: nothing of that may reach the
   * workload, so every signal starts unblocked and at its default. */
  {
    sigset_t none;
    struct sigaction dfl = { .sa_handler = SIG_DFL };

    sigemptyset (&none);
    sigprocmask (SIG_SETMASK, &none, NULL);
    for (int sig = 1; sig < NSIG; sig++)
      if (sig != SIGKILL && sig != SIGSTOP)
        sigaction (sig, &dfl, NULL);
  }
  if (prctl (PR_SET_DUMPABLE, 0) < 0)
    return reaper_fail (h, "cannot make the reaper non-dumpable: %s", strerror (errno));

  if (setup_root (a->spec, h) != 0)
    return 1;
  if (a->spec->user)
    {
      char why[300];

      if (resolve_user (a->spec, why, sizeof why) < 0)
        return reaper_fail (h, "%s", why);
    }
  if (h->shell_fallback)
    a->spec->argv[0] = (char *) STATIC_SHELL;   /* our copy of the spec: PID 1's is untouched */
  if (a->spec->tty)
    {
      /* After the pivot: /dev/ptmx is the workload's own devpts instance,
       * so the terminal is one of its namespace, and nothing of the
       * guest's (the console, other terminals) is reachable through it.
       * The master goes to PID 1 (pidfd_getfd, like the listener) and is
       * closed here before the entrypoint exists; the entrypoint gets the
       * slave only.  Both are moved above the stdio numbers so dup2 onto
       * 0-2 always makes a new descriptor. */
      struct winsize ws = { .ws_row = a->spec->tty_rows, .ws_col = a->spec->tty_cols };
      int unlock = 0, m, sl;

      m = open ("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
      if (m < 0 || ioctl (m, TIOCSPTLCK, &unlock) < 0 || ioctl (m, TIOCSWINSZ, &ws) < 0)
        return reaper_fail (h, "cannot make the workload's terminal: %s", strerror (errno));
      sl = ioctl (m, TIOCGPTPEER, O_RDWR | O_NOCTTY);
      if (sl < 0)
        return reaper_fail (h, "cannot open the workload's terminal: %s", strerror (errno));
      pty_master = fcntl (m, F_DUPFD_CLOEXEC, 10);
      pty_slave = fcntl (sl, F_DUPFD, 10);
      if (pty_master < 0 || pty_slave < 0)
        return reaper_fail (h, "cannot move the workload's terminal: %s", strerror (errno));
      close (m);
      close (sl);
      h->pty_fd = pty_master;
    }

  if (!a->filter)
    {
      /* Benchmark floor: same namespaces and process tree, no filter. */
      __atomic_store_n (&h->state, HANDOFF_PUBLISHED, __ATOMIC_RELEASE);
      listener = -1;
      goto wait_ack;
    }
  r = filter_build (insns, sizeof insns / sizeof insns[0], &n_insns);
  if (r < 0)
    return reaper_fail (h, "cannot assemble the seccomp filter: %s", strerror (-r));
  prog.len = (unsigned short) n_insns;
  prog.filter = insns;
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    return reaper_fail (h, "cannot set no_new_privs: %s", strerror (errno));
  /* WAIT_KILLABLE_RECV: once the supervisor has a call in hand, only a
   * fatal signal interrupts it, so a call it performs for the workload is
   * never run twice by a signal-restarted system call. */
  listener = (int) syscall (SYS_seccomp, SECCOMP_SET_MODE_FILTER,
                            SECCOMP_FILTER_FLAG_NEW_LISTENER
                            | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, &prog);
  if (listener < 0)
    return reaper_fail (h, "cannot install the seccomp filter: %s", strerror (errno));

  /* From here on the reaper's own calls are filtered too; it makes none
   * the filter selects until the entrypoint's fork.  The supervisor takes
   * the listener with pidfd_getfd(); no message on a socket (sendmsg is
   * itself a notified call nobody would answer yet). */
  h->listener_fd = listener;
  __atomic_store_n (&h->state, HANDOFF_PUBLISHED, __ATOMIC_RELEASE);
wait_ack:
  deadline = clock_ns (CLOCK_MONOTONIC) + HANDOFF_TIMEOUT_MS * NS_PER_MS;
  while (__atomic_load_n (&h->state, __ATOMIC_ACQUIRE) != HANDOFF_ACKED)
    {
      if (clock_ns (CLOCK_MONOTONIC) > deadline)
        return reaper_fail (h, "the supervisor did not take the listener");
      sleep_ms (1);
    }
  if (listener >= 0)
    close (listener);
  if (pty_master >= 0)
    close (pty_master);   /* PID 1 has its own now */

  /* Close-on-exec, above the stdio numbers: end of file on its read end
   * means the entrypoint's execve succeeded (or it died, having written
   * why to the handoff when it gave up on its own). */
  {
    int p[2];

    if (pipe2 (p, O_CLOEXEC) < 0 || (report_r = fcntl (p[0], F_DUPFD_CLOEXEC, 20)) < 0
        || (report_w = fcntl (p[1], F_DUPFD_CLOEXEC, 20)) < 0)
      {
        h->exec_errno = errno;
        snprintf (h->exec_note, sizeof h->exec_note, "cannot make the exec report pipe: %s",
                  strerror (errno));
        __atomic_store_n (&h->exec_failed, 1, __ATOMIC_RELEASE);
        __atomic_store_n (&h->exec_state, EXEC_REPORTED, __ATOMIC_RELEASE);
        entry_error ("airlock: %s", h->exec_note);
        return 1;
      }
    close (p[0]);
    close (p[1]);
  }
  entry = fork ();
  if (entry < 0)
    {
      h->exec_errno = errno;
      snprintf (h->exec_note, sizeof h->exec_note, "cannot fork the entrypoint: %s",
                strerror (errno));
      __atomic_store_n (&h->exec_failed, 1, __ATOMIC_RELEASE);
      __atomic_store_n (&h->exec_state, EXEC_REPORTED, __ATOMIC_RELEASE);
      entry_error ("airlock: %s", h->exec_note);
      return 1;
    }
  if (entry == 0)
    {
      close (report_r);
      if (pty_slave >= 0)
        run_entrypoint (a->spec, h, report_w, pty_slave, pty_slave, pty_slave);
      run_entrypoint (a->spec, h, report_w, a->in_fd, a->out_fd, a->err_fd);
    }
  close (report_w);
  h->exec_pid = entry;
  {
    char c;
    ssize_t n;

    /* Nothing is ever written: only end of file comes. */
    do
      n = read (report_r, &c, 1);
    while (n < 0 && errno == EINTR);
    close (report_r);
    __atomic_store_n (&h->exec_state, EXEC_REPORTED, __ATOMIC_RELEASE);
  }
  if (pty_slave >= 0)
    close (pty_slave);   /* the terminal hangs up once the workload's last holder is gone */
  else
    {
      if (a->in_fd >= 0)
        close (a->in_fd);
      close (a->out_fd);
      close (a->err_fd);
    }

  /* Reap until nothing is left: orphans of the workload are re-parented
   * here, and the run lasts as long as any of them does. */
  for (;;)
    {
      int status;
      pid_t p = waitpid (-1, &status, __WALL);

      if (p < 0 && errno == EINTR)
        continue;
      if (p < 0)
        break;
      if (p == entry)
        {
          h->entrypoint_status = status;
          __atomic_store_n (&h->entrypoint_exited, 1, __ATOMIC_RELEASE);
        }
    }
  return 0;
}

/* ---- PID 1's side ---------------------------------------------------------- */

struct heartbeat {
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t wake;   /* on CLOCK_MONOTONIC */
  uint32_t period_ms;
  bool stop;             /* under lock */
  int error;             /* first send error (-errno), atomic */
  /* A warped clock (AIRLOCK_SPEC_WARP): the host's ticks pace the beats. */
  bool host_paced;
  int quit_fd;           /* eventfd: heartbeat_stop() tells the thread to end */
  int main_fd;           /* eventfd the main loop polls: the host said STOP, or
                          * the thread failed (then error is set) */
  int host_stop;         /* atomic: the host sent AIRLOCK_HOST_STOP */
};

/* Heartbeats come from their own thread, on an absolute schedule, so a
 * slow notification (a large read of the workload's memory) never delays
 * one.  Stopping wakes it at once instead of a period later. */
static void *
heartbeat_main (void *data)
{
  struct heartbeat *hb = data;
  uint64_t period = hb->period_ms * NS_PER_MS;
  uint64_t next = clock_ns (CLOCK_MONOTONIC) + period;

  pthread_mutex_lock (&hb->lock);
  while (!hb->stop)
    {
      struct timespec ts = { .tv_sec = (time_t) (next / NS_PER_S), .tv_nsec = (long) (next % NS_PER_S) };
      uint64_t now;
      int r;

      if (pthread_cond_timedwait (&hb->wake, &hb->lock, &ts) != ETIMEDOUT || hb->stop)
        continue;
      pthread_mutex_unlock (&hb->lock);
      r = channel_send_heartbeat ();
      pthread_mutex_lock (&hb->lock);
      if (r < 0)
        {
          __atomic_store_n (&hb->error, r, __ATOMIC_RELEASE);
          break;
        }
      next += period;
      now = clock_ns (CLOCK_MONOTONIC);
      if (now > next)
        next += ((now - next) / period + 1) * period;
    }
  pthread_mutex_unlock (&hb->lock);
  return NULL;
}

/* The same under a warped clock: a beat per batch of the host's ticks
 * (protocol.h, AIRLOCK_HOST_TICK: a timer of guest time would fire every
 * 200 ms of the hours the clock skips, and in no bounded wall time while
 * the workload computes).  The ticks queued while no workload ran come as
 * one batch, so one beat answers them.  The host's STOP, and any failure,
 * wake the main loop through main_fd. */
static void *
heartbeat_host_paced_main (void *data)
{
  struct heartbeat *hb = data;
  int port = channel_port ();
  uint64_t one = 1;
  int r;

  for (;;)
    {
      struct pollfd fds[2] = {
        { .fd = hb->quit_fd, .events = POLLIN },
        { .fd = port, .events = POLLIN },
      };
      uint8_t buf[256];
      bool tick = false;
      ssize_t n;

      if (poll (fds, 2, -1) < 0)
        {
          if (errno == EINTR)
            continue;
          r = -errno;
          goto failed;
        }
      if (fds[0].revents)
        return NULL;
      if (!fds[1].revents)
        continue;
      n = read (port, buf, sizeof buf);
      if (n < 0 && (errno == EINTR || errno == EAGAIN))
        continue;
      if (n <= 0)
        {
          /* 0: virtio_console's "no host connected" — the host is gone,
           * and a workload must not run on unwatched. */
          r = n < 0 ? -errno : -ECONNRESET;
          goto failed;
        }
      for (ssize_t i = 0; i < n; i++)
        if (buf[i] != AIRLOCK_HOST_STOP)
          tick = true;
        else if (!__atomic_exchange_n (&hb->host_stop, 1, __ATOMIC_ACQ_REL))
          (void) write (hb->main_fd, &one, sizeof one);
      if (tick && (r = channel_send_heartbeat ()) < 0)
        goto failed;
    }

failed:
  __atomic_store_n (&hb->error, r, __ATOMIC_RELEASE);
  (void) write (hb->main_fd, &one, sizeof one);
  return NULL;
}

static int
heartbeat_start (struct heartbeat *hb, uint32_t period_ms, bool host_paced)
{
  pthread_condattr_t attr;

  hb->period_ms = period_ms;
  hb->stop = false;
  hb->error = 0;
  hb->host_paced = host_paced;
  hb->host_stop = 0;
  hb->quit_fd = hb->main_fd = -1;
  if (host_paced)
    {
      hb->quit_fd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
      hb->main_fd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
      if (hb->quit_fd < 0 || hb->main_fd < 0)
        return -errno;
      return pthread_create (&hb->thread, NULL, heartbeat_host_paced_main, hb) == 0 ? 0 : -EAGAIN;
    }
  pthread_mutex_init (&hb->lock, NULL);
  pthread_condattr_init (&attr);
  pthread_condattr_setclock (&attr, CLOCK_MONOTONIC);
  pthread_cond_init (&hb->wake, &attr);
  pthread_condattr_destroy (&attr);
  return pthread_create (&hb->thread, NULL, heartbeat_main, hb) == 0 ? 0 : -EAGAIN;
}

static void
heartbeat_stop (struct heartbeat *hb)
{
  if (hb->host_paced)
    {
      uint64_t one = 1;

      (void) write (hb->quit_fd, &one, sizeof one);
      pthread_join (hb->thread, NULL);
      close (hb->quit_fd);
      close (hb->main_fd);
      return;
    }
  pthread_mutex_lock (&hb->lock);
  hb->stop = true;
  pthread_cond_signal (&hb->wake);
  pthread_mutex_unlock (&hb->lock);
  pthread_join (hb->thread, NULL);
}

static int
send_simple_event (uint32_t kind, uint32_t phase, pid_t pid, bool has_status, uint32_t status)
{
  struct wire_frame f;

  wire_begin (&f, AIRLOCK_FRAME_EVENT, 0);
  wire_put_u32 (&f, AIRLOCK_TLV_EV_KIND, kind);
  wire_put_u64 (&f, AIRLOCK_TLV_EV_TIME_NS, clock_ns (CLOCK_BOOTTIME));
  wire_put_u32 (&f, AIRLOCK_TLV_EV_PHASE, phase);
  if (pid > 0)
    wire_put_u32 (&f, AIRLOCK_TLV_EV_PID, (uint32_t) pid);
  if (has_status)
    wire_put_u32 (&f, AIRLOCK_TLV_EV_EXIT_STATUS, status);
  return channel_send (&f, NULL);
}

/* The WORKLOAD_EXEC event from what the reaper published: RESULT 0 when
 * the entrypoint's execve succeeded, -errno of the step that failed, and
 * no RESULT when the outcome is unknown (the run ended before the reaper
 * saw it: then @note_if_unknown says so). */
static int
send_exec_event (struct handoff *h, uint32_t phase, const char *note_if_unknown)
{
  struct wire_frame f;
  bool reported = __atomic_load_n (&h->exec_state, __ATOMIC_ACQUIRE) == EXEC_REPORTED;
  bool failed = __atomic_load_n (&h->exec_failed, __ATOMIC_ACQUIRE) != 0;

  wire_begin (&f, AIRLOCK_FRAME_EVENT, 0);
  wire_put_u32 (&f, AIRLOCK_TLV_EV_KIND, AIRLOCK_EVENT_WORKLOAD_EXEC);
  wire_put_u64 (&f, AIRLOCK_TLV_EV_TIME_NS, clock_ns (CLOCK_BOOTTIME));
  wire_put_u32 (&f, AIRLOCK_TLV_EV_PHASE, phase);
  if (h->exec_pid > 0)
    wire_put_u32 (&f, AIRLOCK_TLV_EV_NSPID, (uint32_t) h->exec_pid);
  h->exec_path[sizeof h->exec_path - 1] = '\0';
  if (h->exec_path[0])
    wire_put_str (&f, AIRLOCK_TLV_EV_PATH, h->exec_path);
  if (reported)
    wire_put_u64 (&f, AIRLOCK_TLV_EV_RESULT,
                  failed ? (uint64_t) (int64_t) -(h->exec_errno > 0 ? h->exec_errno : EIO) : 0);
  h->exec_note[sizeof h->exec_note - 1] = '\0';
  if (reported && failed && h->exec_note[0])
    wire_put_str (&f, AIRLOCK_TLV_EV_NOTE, h->exec_note);
  else if (!reported)
    wire_put_str (&f, AIRLOCK_TLV_EV_NOTE, note_if_unknown);
  return channel_send (&f, NULL);
}

/* Copies the workload's output to the console, a line at a time with a
 * prefix, so it cannot pass for the kernel's or ours.  Returns false at
 * end of file. */
struct relay {
  char line[1024];
  size_t len;
};

static void
relay_flush (struct relay *rl)
{
  if (rl->len == 0)
    return;
  console_log ("workload: %.*s", (int) rl->len, rl->line);
  rl->len = 0;
}

static bool
relay_output (int fd, struct relay *rl)
{
  char buf[4096];
  ssize_t n = read (fd, buf, sizeof buf);

  if (n < 0)
    return errno == EINTR || errno == EAGAIN;
  if (n == 0)
    {
      relay_flush (rl);
      return false;
    }
  for (ssize_t i = 0; i < n; i++)
    {
      if (buf[i] == '\n')
        {
          relay_flush (rl);
          continue;
        }
      /* Control characters would let the workload forge console lines
       * (a bare \r, escape sequences). */
      rl->line[rl->len++] = buf[i] == '\t' ? ' ' : (buf[i] >= 0x20 && buf[i] < 0x7f) ? buf[i] : '?';
      if (rl->len == sizeof rl->line)
        relay_flush (rl);
    }
  return true;
}

/* The workload's stdio on AIRLOCK_PORT_STDIO (protocol.h): its own thread,
 * so a host that reads slowly or a workload that does not read its stdin
 * never stalls the notification loop.  Stdin is buffered (bounded) and
 * written without blocking; output chunks are written as they come. */
struct stdio_relay {
  pthread_t thread;
  int port;
  int in_w, out_r, err_r;   /* our ends of the workload's pipes; -1 once closed */
  uint64_t bytes_in, bytes_out;
  int pty;                  /* TTY runs: the terminal's master (no pipes then), else -1 */
};

static int
stdio_send (struct stdio_relay *sr, uint8_t stream, uint8_t flags, const void *data, size_t len)
{
  uint8_t chunk[AIRLOCK_STDIO_HEADER_SIZE + AIRLOCK_STDIO_CHUNK_MAX];

  chunk[0] = stream;
  chunk[1] = flags;
  wire_le16 (chunk + 2, (uint16_t) len);
  memcpy (chunk + AIRLOCK_STDIO_HEADER_SIZE, data, len);
  sr->bytes_out += len;
  return write_all (sr->port, chunk, AIRLOCK_STDIO_HEADER_SIZE + len);
}

static void *
stdio_main (void *data)
{
  struct stdio_relay *sr = data;
  static uint8_t rx[AIRLOCK_STDIO_HEADER_SIZE + AIRLOCK_STDIO_CHUNK_MAX];
  static uint8_t inbuf[64 * 1024];
  size_t rx_len = 0, in_len = 0;
  bool port_open = true, stdin_eof = false;

  while (sr->out_r >= 0 || sr->err_r >= 0)
    {
      struct pollfd fds[4] = {
        { .fd = port_open && !stdin_eof && in_len < sizeof inbuf - AIRLOCK_STDIO_CHUNK_MAX
                ? sr->port : -1, .events = POLLIN },
        { .fd = in_len > 0 ? sr->in_w : -1, .events = POLLOUT },
        { .fd = sr->out_r, .events = POLLIN },
        { .fd = sr->err_r, .events = POLLIN },
      };

      if (poll (fds, 4, -1) < 0)
        {
          if (errno == EINTR)
            continue;
          break;
        }
      if (fds[0].revents & (POLLIN | POLLHUP | POLLERR))
        {
          ssize_t n = read (sr->port, rx + rx_len, sizeof rx - rx_len);

          if (n <= 0)
            port_open = false;   /* the host left: no more stdin */
          else
            rx_len += (size_t) n;
          /* Whole chunks into the stdin buffer. */
          while (rx_len >= AIRLOCK_STDIO_HEADER_SIZE)
            {
              size_t clen = wire_get_le16 (rx + 2);

              if (clen > AIRLOCK_STDIO_CHUNK_MAX)
                {
                  port_open = false;   /* not our host: stop listening */
                  break;
                }
              if (rx_len < AIRLOCK_STDIO_HEADER_SIZE + clen)
                break;
              if (rx[0] == AIRLOCK_STDIO_STDIN)
                {
                  memcpy (inbuf + in_len, rx + AIRLOCK_STDIO_HEADER_SIZE, clen);
                  in_len += clen;
                  sr->bytes_in += clen;
                  if (rx[1] & AIRLOCK_STDIO_EOF)
                    stdin_eof = true;
                }
              memmove (rx, rx + AIRLOCK_STDIO_HEADER_SIZE + clen,
                       rx_len - AIRLOCK_STDIO_HEADER_SIZE - clen);
              rx_len -= AIRLOCK_STDIO_HEADER_SIZE + clen;
            }
        }
      if (in_len > 0 && (fds[1].revents & (POLLOUT | POLLERR | POLLHUP)))
        {
          ssize_t n = write (sr->in_w, inbuf, in_len);

          if (n < 0 && errno != EAGAIN && errno != EINTR)
            in_len = 0;   /* the workload closed its stdin: drop the rest */
          else if (n > 0)
            {
              memmove (inbuf, inbuf + n, in_len - (size_t) n);
              in_len -= (size_t) n;
            }
        }
      if ((stdin_eof || !port_open) && in_len == 0 && sr->in_w >= 0)
        {
          close (sr->in_w);
          sr->in_w = -1;
        }
      for (int i = 2; i < 4; i++)
        if (fds[i].revents & (POLLIN | POLLHUP | POLLERR))
          {
            int *fd = i == 2 ? &sr->out_r : &sr->err_r;
            uint8_t stream = i == 2 ? AIRLOCK_STDIO_STDOUT : AIRLOCK_STDIO_STDERR;
            uint8_t buf[AIRLOCK_STDIO_CHUNK_MAX];
            ssize_t n = read (*fd, buf, sizeof buf);

            if (n < 0 && (errno == EINTR || errno == EAGAIN))
              continue;
            if (n <= 0)
              {
                (void) stdio_send (sr, stream, AIRLOCK_STDIO_EOF, NULL, 0);
                close (*fd);
                *fd = -1;
              }
            else if (stdio_send (sr, stream, 0, buf, (size_t) n) < 0)
              {
                /* The host is gone: keep draining so the workload never
                 * blocks on a full pipe. */
              }
          }
    }
  if (sr->in_w >= 0)
    close (sr->in_w);
  return NULL;
}

/* The workload's terminal on AIRLOCK_PORT_STDIO (AIRLOCK_SPEC_TTY): what
 * stdio_main() does for pipes, for the master of its pseudo-terminal.
 * Stdin bytes are written to the master (buffered, bounded, without
 * blocking: the line discipline echoes them, edits lines, turns ^C into
 * SIGINT for the foreground process group); what the master yields is one
 * STDOUT stream; WINSIZE chunks resize the terminal (the kernel signals
 * SIGWINCH).  The host's end of stdin is the terminal's end-of-file
 * character once the bytes before it are in, so a shell reading an empty
 * line sees end of file, as from a keyboard.  The thread ends when the
 * master reports that no process has the terminal open any more (EIO). */
static void *
tty_main (void *data)
{
  struct stdio_relay *sr = data;
  static uint8_t rx[AIRLOCK_STDIO_HEADER_SIZE + AIRLOCK_STDIO_CHUNK_MAX];
  static uint8_t inbuf[64 * 1024];
  size_t rx_len = 0, in_len = 0;
  bool port_open = true, stdin_eof = false, eof_sent = false;

  for (;;)
    {
      bool want_write = in_len > 0 || ((stdin_eof || !port_open) && !eof_sent);
      struct pollfd fds[2] = {
        { .fd = port_open && !stdin_eof && in_len < sizeof inbuf - AIRLOCK_STDIO_CHUNK_MAX
                ? sr->port : -1, .events = POLLIN },
        { .fd = sr->pty, .events = POLLIN | (want_write ? POLLOUT : 0) },
      };

      if (poll (fds, 2, -1) < 0)
        {
          if (errno == EINTR)
            continue;
          break;
        }
      if (fds[0].revents & (POLLIN | POLLHUP | POLLERR))
        {
          ssize_t n = read (sr->port, rx + rx_len, sizeof rx - rx_len);

          if (n <= 0)
            port_open = false;
          else
            rx_len += (size_t) n;
          while (rx_len >= AIRLOCK_STDIO_HEADER_SIZE)
            {
              size_t clen = wire_get_le16 (rx + 2);

              if (clen > AIRLOCK_STDIO_CHUNK_MAX)
                {
                  port_open = false;
                  break;
                }
              if (rx_len < AIRLOCK_STDIO_HEADER_SIZE + clen)
                break;
              if (rx[0] == AIRLOCK_STDIO_STDIN)
                {
                  memcpy (inbuf + in_len, rx + AIRLOCK_STDIO_HEADER_SIZE, clen);
                  in_len += clen;
                  sr->bytes_in += clen;
                  if (rx[1] & AIRLOCK_STDIO_EOF)
                    stdin_eof = true;
                }
              else if (rx[0] == AIRLOCK_STDIO_WINSIZE && clen == 4)
                {
                  struct winsize ws = {
                    .ws_row = wire_get_le16 (rx + AIRLOCK_STDIO_HEADER_SIZE),
                    .ws_col = wire_get_le16 (rx + AIRLOCK_STDIO_HEADER_SIZE + 2),
                  };

                  (void) ioctl (sr->pty, TIOCSWINSZ, &ws);
                }
              memmove (rx, rx + AIRLOCK_STDIO_HEADER_SIZE + clen,
                       rx_len - AIRLOCK_STDIO_HEADER_SIZE - clen);
              rx_len -= AIRLOCK_STDIO_HEADER_SIZE + clen;
            }
        }
      if (fds[1].revents & POLLOUT)
        {
          if (in_len > 0)
            {
              ssize_t n = write (sr->pty, inbuf, in_len);

              if (n > 0)
                {
                  memmove (inbuf, inbuf + n, in_len - (size_t) n);
                  in_len -= (size_t) n;
                }
              else if (n < 0 && errno != EAGAIN && errno != EINTR)
                in_len = 0;
            }
          else if ((stdin_eof || !port_open) && !eof_sent)
            {
              struct termios t;
              uint8_t veof = 4;   /* ^D, the default */

              if (tcgetattr (sr->pty, &t) == 0 && t.c_cc[VEOF] != _POSIX_VDISABLE)
                veof = t.c_cc[VEOF];
              (void) write (sr->pty, &veof, 1);
              eof_sent = true;
            }
        }
      if (fds[1].revents & (POLLIN | POLLHUP | POLLERR))
        {
          uint8_t buf[AIRLOCK_STDIO_CHUNK_MAX];
          ssize_t n = read (sr->pty, buf, sizeof buf);

          if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
          if (n <= 0)
            {
              /* EIO: the last process holding the terminal closed it. */
              (void) stdio_send (sr, AIRLOCK_STDIO_STDOUT, AIRLOCK_STDIO_EOF, NULL, 0);
              break;
            }
          (void) stdio_send (sr, AIRLOCK_STDIO_STDOUT, 0, buf, (size_t) n);
        }
    }
  return NULL;
}

/* The workload shares the guest's network namespace (its egress is what
 * the capture sees); like any container it finds loopback up.  It has no
 * CAP_NET_ADMIN to do this itself. */
static int
loopback_up (void)
{
  struct ifreq ifr;
  int fd = socket (AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  int r = 0;

  if (fd < 0)
    return -errno;
  memset (&ifr, 0, sizeof ifr);
  strcpy (ifr.ifr_name, "lo");
  if (ioctl (fd, SIOCGIFFLAGS, &ifr) < 0)
    r = -errno;
  else if (!(ifr.ifr_flags & IFF_UP))
    {
      ifr.ifr_flags |= IFF_UP;
      if (ioctl (fd, SIOCSIFFLAGS, &ifr) < 0)
        r = -errno;
    }
  close (fd);
  return r;
}

/* The NIC, when the host gave one: static addresses on QEMU's user
 * network (protocol: lib/vm/domain-xml.c), a default route and, through
 * /etc/resolv.conf, a resolver, so software behaves as if it were online.
 * Nothing it sends leaves QEMU (restrict=on); everything is in the host's
 * capture.  IPv6 duplicate address detection is off so the address is
 * usable at once, and router advertisements are ignored. */
#define NET_V4_ADDR "10.0.2.15"
#define NET_V4_GW "10.0.2.2"
#define NET_V6_ADDR "fec0::15"
#define NET_V6_GW "fec0::2"

/* linux/ipv6.h's struct in6_ifreq, which glibc's headers do not carry and
 * which clashes with them when included. */
struct airlock_in6_ifreq {
  struct in6_addr ifr6_addr;
  uint32_t ifr6_prefixlen;
  int ifr6_ifindex;
};

static int
find_nic (char *name, size_t size)
{
  DIR *dir = opendir ("/sys/class/net");
  struct dirent *de;
  int r = -ENODEV;

  if (!dir)
    return -errno;
  while ((de = readdir (dir)))
    if (de->d_name[0] != '.' && strcmp (de->d_name, "lo") != 0 && strlen (de->d_name) < size)
      {
        strcpy (name, de->d_name);
        r = 0;
        break;
      }
  closedir (dir);
  return r;
}

static void
write_sysctl (const char *path, const char *value)
{
  int fd = open (path, O_WRONLY | O_CLOEXEC);

  if (fd >= 0)
    {
      (void) write_all (fd, value, strlen (value));
      close (fd);
    }
}

static int
configure_network (char *error, size_t error_size)
{
  char nic[IFNAMSIZ], path[128];
  struct ifreq ifr;
  struct rtentry rt;
  struct airlock_in6_ifreq ifr6;
  struct in6_rtmsg rt6;
  struct sockaddr_in *sin;
  int fd4 = -1, fd6 = -1, r = 0;
  unsigned index;

  if (find_nic (nic, sizeof nic) < 0)
    return 0;   /* no NIC: nothing to configure */
  index = if_nametoindex (nic);
  snprintf (path, sizeof path, "/proc/sys/net/ipv6/conf/%s/accept_dad", nic);
  write_sysctl (path, "0");
  snprintf (path, sizeof path, "/proc/sys/net/ipv6/conf/%s/accept_ra", nic);
  write_sysctl (path, "0");
  snprintf (path, sizeof path, "/proc/sys/net/ipv6/conf/%s/autoconf", nic);
  write_sysctl (path, "0");

  fd4 = socket (AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  fd6 = socket (AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd4 < 0 || fd6 < 0)
    {
      r = fail (error, error_size, "cannot create sockets to configure '%s': %s", nic,
                strerror (errno));
      goto out;
    }
  memset (&ifr, 0, sizeof ifr);
  strcpy (ifr.ifr_name, nic);
  sin = (struct sockaddr_in *) &ifr.ifr_addr;
  sin->sin_family = AF_INET;
  inet_pton (AF_INET, NET_V4_ADDR, &sin->sin_addr);
  if (ioctl (fd4, SIOCSIFADDR, &ifr) < 0)
    {
      r = fail (error, error_size, "cannot set %s on '%s': %s", NET_V4_ADDR, nic, strerror (errno));
      goto out;
    }
  inet_pton (AF_INET, "255.255.255.0", &sin->sin_addr);
  if (ioctl (fd4, SIOCSIFNETMASK, &ifr) < 0
      || ioctl (fd4, SIOCGIFFLAGS, &ifr) < 0)
    {
      r = fail (error, error_size, "cannot configure '%s': %s", nic, strerror (errno));
      goto out;
    }
  ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
  if (ioctl (fd4, SIOCSIFFLAGS, &ifr) < 0)
    {
      r = fail (error, error_size, "cannot bring '%s' up: %s", nic, strerror (errno));
      goto out;
    }
  memset (&rt, 0, sizeof rt);
  ((struct sockaddr_in *) &rt.rt_dst)->sin_family = AF_INET;
  ((struct sockaddr_in *) &rt.rt_genmask)->sin_family = AF_INET;
  ((struct sockaddr_in *) &rt.rt_gateway)->sin_family = AF_INET;
  inet_pton (AF_INET, NET_V4_GW, &((struct sockaddr_in *) &rt.rt_gateway)->sin_addr);
  rt.rt_flags = RTF_UP | RTF_GATEWAY;
  rt.rt_dev = nic;
  if (ioctl (fd4, SIOCADDRT, &rt) < 0 && errno != EEXIST)
    {
      r = fail (error, error_size, "cannot add the default route via %s: %s", NET_V4_GW,
                strerror (errno));
      goto out;
    }

  memset (&ifr6, 0, sizeof ifr6);
  inet_pton (AF_INET6, NET_V6_ADDR, &ifr6.ifr6_addr);
  ifr6.ifr6_prefixlen = 64;
  ifr6.ifr6_ifindex = (int) index;
  if (ioctl (fd6, SIOCSIFADDR, &ifr6) < 0 && errno != EEXIST)
    {
      r = fail (error, error_size, "cannot set %s on '%s': %s", NET_V6_ADDR, nic, strerror (errno));
      goto out;
    }
  memset (&rt6, 0, sizeof rt6);
  inet_pton (AF_INET6, NET_V6_GW, &rt6.rtmsg_gateway);
  rt6.rtmsg_flags = RTF_UP | RTF_GATEWAY;
  rt6.rtmsg_metric = 1;
  rt6.rtmsg_ifindex = (int) index;
  if (ioctl (fd6, SIOCADDRT, &rt6) < 0 && errno != EEXIST)
    {
      r = fail (error, error_size, "cannot add the IPv6 default route via %s: %s", NET_V6_GW,
                strerror (errno));
      goto out;
    }
  console_log ("network: %s %s/24 via %s, %s/64 via %s", nic, NET_V4_ADDR, NET_V4_GW,
               NET_V6_ADDR, NET_V6_GW);
out:
  if (fd4 >= 0)
    close (fd4);
  if (fd6 >= 0)
    close (fd6);
  return r;
}

/* One workload, start to end: its reaper and namespaces, the listener
 * handoff, the notification loop, its end.  Heartbeats run only while a
 * workload does (the reaper must be cloned from a single-threaded
 * process: no lock can then be held in its copy). */
static int
run_workload (struct run_spec *spec, uint32_t phase, uint32_t heartbeat_ms, bool filter,
              struct run_result *ret, char *error, size_t error_size)
{
  static uint8_t reaper_stack[256 * 1024] __attribute__ ((aligned (16)));
  struct reaper_args args;
  struct handoff *h;
  struct heartbeat hb;
  struct notifier *notifier;
  struct relay relay = { .len = 0 };
  sigset_t sigchld;
  uint64_t deadline, handoff_deadline;
  int pipefd[2] = { -1, -1 }, in_pipe[2] = { -1, -1 }, out_pipe[2] = { -1, -1 };
  int err_pipe[2] = { -1, -1 }, sfd, pidfd, listener, r, status = 0;
  struct stdio_relay stdio = { .port = -1, .in_w = -1, .out_r = -1, .err_r = -1, .pty = -1 };
  bool stdio_started = false;
  pid_t reaper;
  bool timed_out = false, output_open, reaper_gone = false, exec_sent = false;
  bool wall_limit = false;

  h = mmap (NULL, sizeof *h, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (h == MAP_FAILED)
    return fail (error, error_size, "cannot map the handoff page: %s", strerror (errno));
  memset (h, 0, sizeof *h);
  if (spec->stdio)
    {
      char dev[300];

      stdio.port = open_port (AIRLOCK_PORT_STDIO, dev, sizeof dev);
      if (stdio.port < 0)
        return fail (error, error_size, "cannot open the stdio port '%s': %s", AIRLOCK_PORT_STDIO,
                     strerror (-stdio.port));
      /* With a terminal there are no pipes: the reaper makes it in the
       * workload's devpts and hands us its master. */
      args.in_fd = args.out_fd = args.err_fd = -1;
    }
  if (spec->stdio && !spec->tty)
    {
      if (pipe2 (in_pipe, O_CLOEXEC) < 0 || pipe2 (out_pipe, O_CLOEXEC) < 0
          || pipe2 (err_pipe, O_CLOEXEC) < 0)
        return fail (error, error_size, "cannot create the stdio pipes: %s", strerror (errno));
      args.in_fd = in_pipe[0];
      args.out_fd = out_pipe[1];
      args.err_fd = err_pipe[1];
    }
  else if (!spec->stdio)
    {
      if (pipe2 (pipefd, O_CLOEXEC) < 0)
        return fail (error, error_size, "cannot create the output pipe: %s", strerror (errno));
      args.in_fd = -1;
      args.out_fd = pipefd[1];
      args.err_fd = pipefd[1];
    }
  output_open = !spec->stdio;

  sigemptyset (&sigchld);
  sigaddset (&sigchld, SIGCHLD);
  sigprocmask (SIG_BLOCK, &sigchld, NULL);
  sfd = signalfd (-1, &sigchld, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sfd < 0)
    return fail (error, error_size, "cannot create a signalfd: %s", strerror (errno));

  /* No thread exists yet: the reaper starts from a copy of a
   * single-threaded process, so no lock can be held in it. */
  args.spec = spec;
  args.filter = filter;
  args.handoff = h;
  reaper = clone (reaper_main, reaper_stack + sizeof reaper_stack,
                  CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS | SIGCHLD, &args);
  if (reaper < 0)
    return fail (error, error_size, "cannot start the workload's namespaces: %s", strerror (errno));
  if (spec->stdio && !spec->tty)
    {
      close (in_pipe[0]);
      close (out_pipe[1]);
      close (err_pipe[1]);
      stdio.in_w = in_pipe[1];
      stdio.out_r = out_pipe[0];
      stdio.err_r = err_pipe[0];
      fcntl (stdio.in_w, F_SETFL, O_NONBLOCK);
    }
  else if (!spec->stdio)
    {
      close (pipefd[1]);
      fcntl (pipefd[0], F_SETFL, O_NONBLOCK);
    }

  /* Take the listener from the reaper. */
  handoff_deadline = clock_ns (CLOCK_MONOTONIC) + HANDOFF_TIMEOUT_MS * NS_PER_MS;
  for (;;)
    {
      int state = __atomic_load_n (&h->state, __ATOMIC_ACQUIRE);

      if (state == HANDOFF_PUBLISHED)
        break;
      if (state == HANDOFF_FAILED || waitpid (reaper, &status, WNOHANG) == reaper
          || clock_ns (CLOCK_MONOTONIC) > handoff_deadline)
        {
          kill (reaper, SIGKILL);
          waitpid (reaper, NULL, 0);
          return fail (error, error_size, "the workload's setup failed: %s",
                       h->error[0] ? h->error : "the reaper exited or hung before its filter was in place");
        }
      sleep_ms (1);
    }
  listener = -1;
  if (filter)
    {
      pidfd = (int) syscall (SYS_pidfd_open, reaper, 0);
      listener = pidfd < 0 ? -1 : (int) syscall (SYS_pidfd_getfd, pidfd, h->listener_fd, 0);
      if (listener < 0)
        {
          int e = errno;
          kill (reaper, SIGKILL);
          waitpid (reaper, NULL, 0);
          return fail (error, error_size, "cannot take the seccomp listener from the reaper: %s",
                       strerror (e));
        }
      close (pidfd);
      fcntl (listener, F_SETFD, FD_CLOEXEC);
    }
  if (spec->tty)
    {
      /* The terminal's master, taken like the listener: no socket, and
       * the workload never has it. */
      pidfd = (int) syscall (SYS_pidfd_open, reaper, 0);
      stdio.pty = pidfd < 0 ? -1 : (int) syscall (SYS_pidfd_getfd, pidfd, h->pty_fd, 0);
      if (stdio.pty < 0)
        {
          int e = errno;
          kill (reaper, SIGKILL);
          waitpid (reaper, NULL, 0);
          return fail (error, error_size, "cannot take the workload's terminal from the reaper: %s",
                       strerror (e));
        }
      close (pidfd);
      fcntl (stdio.pty, F_SETFD, FD_CLOEXEC);
      fcntl (stdio.pty, F_SETFL, O_NONBLOCK);
    }
  __atomic_store_n (&h->state, HANDOFF_ACKED, __ATOMIC_RELEASE);
  if (h->shell_fallback)
    channel_logf ("shell: the image has no executable '%s': running airlock's static shell %s "
                  "(bound read-only from %s)", spec->argv[0], STATIC_SHELL, spec->shell_dir);
  else if (spec->shell_dir)
    channel_logf ("shell: running the image's own '%s'", spec->argv[0]);

  r = send_simple_event (AIRLOCK_EVENT_WORKLOAD_START, phase, reaper, false, 0);
  if (r < 0)
    return fail (error, error_size, "cannot send the workload-start event: %s", strerror (-r));
  if (heartbeat_start (&hb, heartbeat_ms, spec->warp) < 0)
    return fail (error, error_size, "cannot start the heartbeat thread");
  if (spec->warp && net_hold_start () < 0)
    return fail (error, error_size, "cannot start the network hold's thread");
  if (spec->stdio)
    {
      if (pthread_create (&stdio.thread, NULL, spec->tty ? tty_main : stdio_main, &stdio) != 0)
        return fail (error, error_size, "cannot start the stdio thread");
      stdio_started = true;
    }

  notifier = notifier_new (listener);
  if (!notifier)
    return fail (error, error_size, "out of memory");

  /* The loop: notifications, output, the reaper's end, the deadline (of
   * guest time: under a warped clock the host's STOP is the wall's). */
  deadline = clock_ns (CLOCK_MONOTONIC) + spec->timeout_ms * NS_PER_MS;
  while (!reaper_gone)
    {
      struct pollfd fds[4] = {
        { .fd = listener, .events = POLLIN },
        { .fd = sfd, .events = POLLIN },
        { .fd = output_open ? pipefd[0] : -1, .events = POLLIN },
        { .fd = hb.main_fd, .events = POLLIN },
      };
      uint64_t now = clock_ns (CLOCK_MONOTONIC);
      int timeout;

      if (now >= deadline && !timed_out)
        {
          /* The reaper's death takes the whole namespace with it. */
          timed_out = true;
          kill (reaper, SIGKILL);
        }
      timeout = timed_out ? 100 : (int) ((deadline - now) / NS_PER_MS) + 1;
      if (!exec_sent)
        {
          /* The reaper publishes the execve's outcome through memory, not
           * an fd: look again soon until it has (a few ms after the start). */
          if (__atomic_load_n (&h->exec_state, __ATOMIC_ACQUIRE) == EXEC_REPORTED)
            {
              r = send_exec_event (h, phase, NULL);
              if (r < 0)
                return fail (error, error_size, "cannot send the workload-exec event: %s",
                             strerror (-r));
              exec_sent = true;
            }
          else if (timeout > 2)
            timeout = 2;
        }
      r = poll (fds, 4, timeout);
      if (r < 0 && errno != EINTR)
        return fail (error, error_size, "poll failed: %s", strerror (errno));
      if (r <= 0)
        continue;
      if (fds[3].revents & POLLIN)
        {
          uint64_t count;

          (void) read (hb.main_fd, &count, sizeof count);
          if (__atomic_load_n (&hb.host_stop, __ATOMIC_ACQUIRE) && !timed_out)
            {
              /* The host's wall-time limit: the same end as our own. */
              timed_out = wall_limit = true;
              kill (reaper, SIGKILL);
            }
        }
      if (fds[0].revents & POLLIN)
        {
          r = notifier_handle_one (notifier);
          if (r < 0)
            return fail (error, error_size, "the seccomp listener failed: %s", strerror (-r));
        }
      if (fds[2].revents & (POLLIN | POLLHUP))
        output_open = relay_output (pipefd[0], &relay);
      if (fds[1].revents & POLLIN)
        {
          struct signalfd_siginfo si;

          while (read (sfd, &si, sizeof si) == sizeof si)
            ;
          if (waitpid (reaper, &status, WNOHANG) == reaper)
            reaper_gone = true;
        }
      r = __atomic_load_n (&hb.error, __ATOMIC_ACQUIRE);
      if (r < 0)
        return fail (error, error_size, "cannot send a heartbeat: %s", strerror (-r));
    }

  /* Everything in the namespace is gone: nothing waits for an answer. */
  net_hold_stop ();
  /* Late output, then the calls the supervisor was still performing. */
  while (output_open && relay_output (pipefd[0], &relay))
    ;
  if (stdio_started)
    {
      /* Every writer of the pipes is gone: the thread sees end of file on
       * both and ends once the last chunk is out. */
      pthread_join (stdio.thread, NULL);
      console_log ("workload stdio: %llu byte(s) in, %llu out",
                   (unsigned long long) stdio.bytes_in, (unsigned long long) stdio.bytes_out);
    }
  notifier_finish (notifier);
  if (listener >= 0)
    close (listener);

  if (!exec_sent)
    {
      r = send_exec_event (h, phase, timed_out ? "the time limit ended the run before the entrypoint's "
                                                 "execve was seen"
                                               : "the workload ended before the entrypoint's execve "
                                                 "was seen");
      if (r < 0)
        return fail (error, error_size, "cannot send the workload-exec event: %s", strerror (-r));
    }
  r = send_simple_event (AIRLOCK_EVENT_WORKLOAD_EXIT, phase, 0, true,
                         __atomic_load_n (&h->entrypoint_exited, __ATOMIC_ACQUIRE)
                         ? (uint32_t) h->entrypoint_status : (uint32_t) status);
  heartbeat_stop (&hb);
  if (r < 0)
    return fail (error, error_size, "cannot send the workload-exit event: %s", strerror (-r));
  console_log ("workload ended (%s) after %llu traced call(s)",
               wall_limit ? "the host's wall-time limit" : timed_out ? "timeout" : "completed",
               (unsigned long long) notifier_count (notifier));

  ret->exit_status = __atomic_load_n (&h->entrypoint_exited, __ATOMIC_ACQUIRE)
                     ? (uint32_t) h->entrypoint_status : (uint32_t) status;
  ret->end_reason = wall_limit ? AIRLOCK_END_WALL_LIMIT
                    : timed_out ? AIRLOCK_END_TIMEOUT : AIRLOCK_END_COMPLETED;
  /* PID 1 runs more than one workload (the controls, then the image):
   * nothing of this one stays behind. */
  notifier_free (notifier);
  munmap (h, sizeof *h);
  close (sfd);
  if (pipefd[0] >= 0)
    close (pipefd[0]);
  if (stdio.port >= 0)
    close (stdio.port);
  if (stdio.pty >= 0)
    close (stdio.pty);
  return 0;
}

/* The negative controls: guest/probe (ours, static, in the initramfs at
 * CONTROLS_ROOT/bin/probe) makes the attempts guest/probe-controls.h
 * lists, under the same supervisor, kernel and network as the image that
 * follows, so the host can prove the detector was not blind. */
#define CONTROLS_ROOT "/airlock/controls"
#define CONTROLS_TIMEOUT_MS 60000

static int
run_controls (uint32_t heartbeat_ms, bool warp, bool filter, const char *skip, char *error,
              size_t error_size)
{
  static struct run_spec controls;
  static char arg0[] = "/bin/probe", env0[] = "PATH=/bin", cwd[] = "/", root[] = CONTROLS_ROOT,
              host[] = "airlock", skip_opt[] = "--skip", skip_arg[64];
  struct run_result result;

  memset (&controls, 0, sizeof controls);
  controls.argv[0] = arg0;
  controls.argc = 1;
  if (skip)
    {
      snprintf (skip_arg, sizeof skip_arg, "%s", skip);
      controls.argv[controls.argc++] = skip_opt;
      controls.argv[controls.argc++] = skip_arg;
    }
  controls.envp[0] = env0;
  controls.envc = 1;
  controls.cwd = cwd;
  controls.root = root;
  controls.hostname = host;
  controls.timeout_ms = CONTROLS_TIMEOUT_MS;
  controls.warp = warp;
  return run_workload (&controls, AIRLOCK_PHASE_CONTROLS, heartbeat_ms, filter, &result, error,
                       error_size);
}

int
supervisor_run (const uint8_t *spec_bytes, size_t spec_len, uint32_t heartbeat_ms, bool filter,
                const char *skip_control, struct run_result *ret, char *error, size_t error_size)
{
  static struct run_spec spec;
  int r;

  r = parse_spec (spec_bytes, spec_len, &spec, error, error_size);
  if (r < 0)
    return r;
  if (spec.have_clock)
    {
      /* Before the network, the controls and the workload: everything the
       * run does sees the recorded wall clock (a replay's determinism).
       * The evidence's own times are CLOCK_BOOTTIME and do not move. */
      struct timespec ts = { .tv_sec = (time_t) (spec.clock_ns / 1000000000u),
                             .tv_nsec = (long) (spec.clock_ns % 1000000000u) };

      if (clock_settime (CLOCK_REALTIME, &ts) < 0)
        return fail (error, error_size, "cannot set the guest clock: %s", strerror (errno));
    }
  r = loopback_up ();
  if (r < 0)
    return fail (error, error_size, "cannot bring the loopback interface up: %s", strerror (-r));
  r = configure_network (error, error_size);
  if (r < 0)
    return r;
  if (spec.root_disk && (r = mount_root_disk (&spec, error, error_size)) < 0)
    return r;
  if (spec.controls
      && (r = run_controls (heartbeat_ms, spec.warp, filter, skip_control, error, error_size)) < 0)
    return r;
  return run_workload (&spec, AIRLOCK_PHASE_WORKLOAD, heartbeat_ms, filter, ret, error, error_size);
}
