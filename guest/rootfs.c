/* The workload's root, made by the reaper before the pivot (reaper.c):
 * the image's disk mounted read-only, an overlay over it with a tmpfs upper
 * layer, /proc, /sys, a minimal /dev, /etc/hosts, /etc/hostname and
 * /etc/resolv.conf, airlock's static shell when the image has none, then
 * pivot_root into it.  Part of the supervisor (supervisor.c). */
#define _GNU_SOURCE

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "handoff.h"
#include "run-spec.h"
#include "supervisor.h"
#include "workload.h"

#define RUN_DIR "/airlock/run"

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
  int fd, r;

  /* Whatever the image has there is replaced, never opened: a symlink
   * (often into /run) is not followed, and a FIFO would hold the reaper
   * until someone read it.  O_EXCL after the unlink: a file that came back
   * meanwhile is an error, not a target.  (Nothing of the workload runs
   * yet; the image's disk is the overlay's lower layer and stays as it
   * is.) */
  if (unlink (path) < 0 && errno != ENOENT)
    return -errno;
  fd = open (path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0)
    return -errno;
  r = write_all (fd, text, strlen (text));
  close (fd);
  return r;
}

/* The image's disk: the virtio disk whose serial the host named, mounted
 * read-only at the spec's root (the overlay's lower layer). */
int
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

/* The workload's /proc as a container runtime gives it (moby's
 * oci/defaults.go: its ReadonlyPaths and MaskedPaths): the kernel's
 * settings read-only, and what tells of the host's kernel empty.  Root in
 * the workload keeps uid 0 in the initial user namespace, and writing a
 * sysctl asks for nothing more: kernel.core_pattern set to
 * "|/proc/%P/root/PROGRAM" would have the kernel run the workload's own
 * program at its next core dump as a usermode helper — every capability,
 * in the initial namespaces, outside the filter and beside PID 1 — and
 * /proc/sysrq-trigger could crash or power off the guest.  Remounting or
 * unmounting these needs CAP_SYS_ADMIN, which the workload lacks.  @proc
 * is the workload's /proc, @null a character device to bind over masked
 * files (the workload's /dev/null, made before). */
static int
restrict_proc (const char *proc, const char *null)
{
  static const char *const read_only[] = { "bus", "fs", "irq", "sys", "sysrq-trigger" };
  static const char *const masked[] = {
    "acpi", "asound", "kcore", "keys", "latency_stats", "sched_debug", "scsi", "timer_list",
  };
  char path[512];
  struct stat st;

  for (size_t i = 0; i < sizeof read_only / sizeof read_only[0]; i++)
    {
      snprintf (path, sizeof path, "%s/%s", proc, read_only[i]);
      if (lstat (path, &st) < 0)
        continue;   /* not in this kernel */
      if (mount (path, path, NULL, MS_BIND | MS_REC, NULL) < 0
          || mount (NULL, path, NULL,
                    MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
        return -errno;
    }
  for (size_t i = 0; i < sizeof masked / sizeof masked[0]; i++)
    {
      snprintf (path, sizeof path, "%s/%s", proc, masked[i]);
      if (lstat (path, &st) < 0)
        continue;
      if (S_ISDIR (st.st_mode)
            ? mount ("tmpfs", path, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                     "mode=555") < 0
            : mount (null, path, NULL, MS_BIND, NULL) < 0)
        return -errno;
    }
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
int
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
  /* nodev: a device node the image's layers carry opens nothing.  The
   * workload cannot make nodes (no CAP_MKNOD, reaper.c), but a layer can
   * hold any (a tar entry is a mode and a major:minor), and with no devices
   * cgroup here such a node would open the guest's console, kernel log or
   * /dev/userfaultfd.  The nodes it needs are in its own /dev, a mount of
   * its own (populate_dev). */
  if (mount ("overlay", root, "overlay", MS_NODEV, opts) < 0)
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
  {
    char proc[300], null[300];

    snprintf (proc, sizeof proc, "%s/proc", root);
    snprintf (null, sizeof null, "%s/dev/null", root);
    if ((r = restrict_proc (proc, null)) < 0)
      return reaper_fail (h, "cannot make the workload's /proc/sys read-only: %s", strerror (-r));
  }
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
    if ((r = write_text (path, "nameserver 10.0.2.3\n")) < 0)
      return reaper_fail (h, "cannot write /etc/resolv.conf for the workload: %s", strerror (-r));
  }

  return 0;
}
