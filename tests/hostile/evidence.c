/* Hostile techniques 14-16 and 21-22: reaching for the evidence.  PID 1 opens
 * the evidence and stdio ports before the workload exists and a
 * virtio-serial port takes one opener at a time (a second open is EBUSY);
 * the workload cannot make a device node (no CAP_MKNOD, guest/reaper.c),
 * and one its image brings opens nothing (its root is mounted nodev);
 * frames written anywhere else (console, kernel log, stdout) are not
 * evidence: the host reads evidence from its own socket only.  The image
 * disk is attached read-only. */
#define _GNU_SOURCE

#include "testprog.h"
#include "techniques.h"
#include "wire.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* A well-formed TRAILER claiming a clean end, as a forger would write it
 * (it cannot know the nonce or the chain; it tries anyway). */
static size_t
forged_trailer (struct wire_frame *f)
{
  wire_begin (f, AIRLOCK_FRAME_TRAILER, 3);
  wire_put_u64 (f, AIRLOCK_TLV_FRAME_COUNT, 3);
  wire_put_u64 (f, AIRLOCK_TLV_HEARTBEAT_COUNT, 1);
  wire_put_u64 (f, AIRLOCK_TLV_EVENT_COUNT, 0);
  wire_put_u32 (f, AIRLOCK_TLV_EXIT_STATUS, 0);
  wire_put_u32 (f, AIRLOCK_TLV_END_REASON, 0);
  return wire_end (f);
}

/* The major number of @driver in /proc/devices ("virtio-portsdev"), or -1. */
static int
major_of (const char *driver, char kind)
{
  FILE *f = fopen ("/proc/devices", "r");
  char line[128];
  int major = -1;
  char section = 0;

  if (!f)
    return -1;
  while (fgets (line, sizeof line, f))
    {
      char name[64];
      int m;

      if (strncmp (line, "Character", 9) == 0)
        section = 'c';
      else if (strncmp (line, "Block", 5) == 0)
        section = 'b';
      else if (section == kind && sscanf (line, "%d %63s", &m, name) == 2 && strcmp (name, driver) == 0)
        major = m;
    }
  fclose (f);
  return major;
}

/* Opens @path for writing and writes a forged trailer; returns TRUE when
 * it could open it. */
static int
try_port (const char *path)
{
  struct wire_frame f;
  size_t len = forged_trailer (&f);
  int fd = open (path, O_RDWR | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);

  if (fd < 0)
    {
      say ("open %s: errno %d (%s)", path, errno, strerrorname_np (errno));
      return 0;
    }
  say ("open %s: ok; writing a forged trailer: %zd", path, write (fd, f.bytes, len));
  close (fd);
  return 1;
}

/* 14.  The evidence and stdio ports: by their sysfs names, as nodes in
 * /dev, and as nodes made with mknod for every minor of the
 * virtio-serial driver; each opened is written a forged trailer.  Canary
 * 198.51.100.14:7014. */
int
technique_evidence_port (int argc, char **argv)
{
  DIR *dir = opendir ("/sys/class/virtio-ports");
  struct dirent *d;
  int major = major_of ("virtio-portsdev", 'c');
  int opened = 0;

  while (dir && (d = readdir (dir)))
    if (d->d_name[0] != '.')
      {
        char path[300];

        say ("sysfs port %s", d->d_name);
        snprintf (path, sizeof path, "/dev/%s", d->d_name);
        opened += try_port (path);
      }
  if (dir)
    closedir (dir);
  say ("virtio-portsdev major %d", major);
  if (major > 0)
    for (int minor = 0; minor < 8; minor++)
      {
        char path[64];

        snprintf (path, sizeof path, "/tmp/vport-%d", minor);
        if (mknod (path, S_IFCHR | 0600, makedev (major, minor)) < 0)
          {
            say ("mknod %s (%d:%d): errno %d (%s)", path, major, minor, errno,
                 strerrorname_np (errno));
            continue;
          }
        opened += try_port (path);
        unlink (path);
      }
  hostile_canary (14);
  say ("%d ports opened", opened);
  return opened == 0 ? TESTPROG_OK : TESTPROG_FAILED;
}

/* 15.  Forged frames everywhere the workload can write: stdout, stderr,
 * /dev/console and the kernel log (nodes made if missing), /dev/tty.  None
 * is the evidence channel.  Canary 198.51.100.15:7015. */
int
technique_forge_frames (int argc, char **argv)
{
  static const struct { const char *path; unsigned major, minor; } sinks[] = {
    { "/tmp/console", 5, 1 }, { "/tmp/kmsg", 1, 11 }, { "/tmp/ttyS0", 4, 64 },
    { "/tmp/hvc0", 229, 0 }, { "/tmp/ttyAMA0", 204, 64 }, { "/dev/tty", 5, 0 },
  };
  struct wire_frame f;
  size_t len = forged_trailer (&f);

  fflush (stdout);
  say ("forged trailer to stdout: %zd", write (1, f.bytes, len));
  say ("forged trailer to stderr: %zd", write (2, f.bytes, len));
  for (size_t i = 0; i < sizeof sinks / sizeof sinks[0]; i++)
    {
      int fd;

      if (strncmp (sinks[i].path, "/tmp/", 5) == 0
          && mknod (sinks[i].path, S_IFCHR | 0600, makedev (sinks[i].major, sinks[i].minor)) < 0)
        {
          say ("mknod %s: errno %d (%s)", sinks[i].path, errno, strerrorname_np (errno));
          continue;
        }
      fd = open (sinks[i].path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
      if (fd < 0)
        say ("open %s: errno %d (%s)", sinks[i].path, errno, strerrorname_np (errno));
      else
        {
          say ("forged trailer to %s: %zd", sinks[i].path, write (fd, f.bytes, len));
          close (fd);
        }
      if (strncmp (sinks[i].path, "/tmp/", 5) == 0)
        unlink (sinks[i].path);
    }
  hostile_canary (15);
  return TESTPROG_OK;
}

/* 16.  8 MiB on stdout as fast as the workload can write, while a child
 * connects every 100 ms (198.51.100.16:7300-7309): the stdio stream must not
 * starve the evidence channel (heartbeats, records).  Canary
 * 198.51.100.16:7016 after the flood. */
#define FLOOD_BYTES (8u << 20)

int
technique_stdout_flood (int argc, char **argv)
{
  static char chunk[65536];
  size_t written = 0;
  pid_t child;
  int status;

  memset (chunk, 'F', sizeof chunk);
  chunk[sizeof chunk - 1] = '\n';
  fflush (stdout);
  child = fork ();
  if (child == 0)
    {
      for (int i = 0; i < 10; i++)
        {
          struct sockaddr_in sa;
          char ip[16];
          struct timespec ts = { 0, 100000000L };
          int fd = socket (AF_INET, SOCK_STREAM, 0);

          make_sin (&sa, hostile_net2 (ip, 16), 7300 + i);
          (void) connect (fd, (struct sockaddr *) &sa, sizeof sa);
          close (fd);
          nanosleep (&ts, NULL);
        }
      _exit (0);
    }
  while (written < FLOOD_BYTES)
    {
      ssize_t n = write (1, chunk, sizeof chunk);

      if (n < 0)
        {
          if (errno == EINTR)
            continue;
          report ("write stdout", -1);
          break;
        }
      written += (size_t) n;
    }
  say ("flooded %zu bytes", written);
  if (child > 0)
    waitpid (child, &status, 0);
  hostile_canary (16);
  return written >= FLOOD_BYTES ? TESTPROG_OK : TESTPROG_FAILED;
}

/* 21.  The image's disk through a block node made for it (virtblk, minor
 * 0): writing to it must fail (attached read-only), so no run
 * can change what the next run of the cached disk boots.  Canary
 * 198.51.100.21:7021. */
int
technique_disk_write (int argc, char **argv)
{
  int major = major_of ("virtblk", 'b');
  int holes = 0;
  int fd;

  say ("virtblk major %d", major);
  if (major > 0)
    {
      if (mknod ("/tmp/vda", S_IFBLK | 0600, makedev (major, 0)) < 0)
        say ("mknod /tmp/vda: errno %d (%s)", errno, strerrorname_np (errno));
      else
        {
          fd = open ("/tmp/vda", O_RDWR | O_CLOEXEC);
          if (fd < 0)
            say ("open /tmp/vda for writing: errno %d (%s)", errno, strerrorname_np (errno));
          else
            {
              static char junk[4096];
              ssize_t n;

              /* The kernel may open a read-only disk for writing and refuse
               * the write itself (EPERM): a hole is a write that worked. */
              memset (junk, 0xa5, sizeof junk);
              n = pwrite (fd, junk, sizeof junk, 1 << 20);
              if (n < 0)
                say ("write to /tmp/vda: errno %d (%s)", errno, strerrorname_np (errno));
              else
                {
                  say ("write to /tmp/vda: %zd bytes; fsync: %d", n, fsync (fd));
                  holes++;
                }
              close (fd);
            }
          unlink ("/tmp/vda");
        }
    }
  hostile_canary (21);
  return holes == 0 ? TESTPROG_OK : TESTPROG_FAILED;
}

/* 22.  Device nodes the image's layers carry (/airlock-nodes, made by
 * images/sample/build-sample.c: null, the kernel log, the consoles, the
 * disk, every dynamic character major and the top misc minors): the
 * workload cannot make a node (no CAP_MKNOD) but an image can bring any,
 * and with no devices cgroup one would open the guest's console (forged
 * lines in console.log), kernel log or /dev/userfaultfd.  Its root is
 * mounted nodev: none may open, not even null.  No node found is a
 * failure too (the test would prove nothing).  Canary 198.51.100.22:7022. */
int
technique_image_nodes (int argc, char **argv)
{
  DIR *dir = opendir ("/airlock-nodes");
  struct dirent *d;
  int nodes = 0, opened = 0;

  if (!dir)
    say ("opendir /airlock-nodes: errno %d (%s)", errno, strerrorname_np (errno));
  while (dir && (d = readdir (dir)))
    {
      char path[300];
      struct stat st;
      int fd;

      snprintf (path, sizeof path, "/airlock-nodes/%s", d->d_name);
      if (lstat (path, &st) < 0 || !(S_ISCHR (st.st_mode) || S_ISBLK (st.st_mode)))
        continue;
      nodes++;
      fd = open (path, O_RDWR | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
      if (fd < 0)
        fd = open (path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
      if (fd < 0)
        {
          if (errno != EACCES)
            say ("open %s (%u:%u): errno %d (%s)", path, major (st.st_rdev), minor (st.st_rdev),
                 errno, strerrorname_np (errno));
          continue;
        }
      say ("opened %s (%u:%u)", path, major (st.st_rdev), minor (st.st_rdev));
      opened++;
      close (fd);
    }
  if (dir)
    closedir (dir);
  say ("%d device nodes in the image, %d opened", nodes, opened);
  hostile_canary (22);
  return nodes > 0 && opened == 0 ? TESTPROG_OK : TESTPROG_FAILED;
}
