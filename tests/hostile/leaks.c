/* Hostile techniques 17-19: what of the guest the workload can see and
 * reach besides the network. */
#define _GNU_SOURCE

#include "testprog.h"
#include "techniques.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

extern char **environ;

/* 17.  Nothing of the supervisor in the workload: no LD_* variable, no
 * guest path (/airlock, /.airlock, /sbin/init) in any variable, only fds
 * 0-2 open, none of them a listening socket.  Canary 198.51.100.17:7017. */
int
technique_env_leak (int argc, char **argv)
{
  static const char *const guest_paths[] = { "/airlock", "/.airlock", "/sbin/init", "/run/airlock" };
  int leaks = 0;
  DIR *fds;
  struct dirent *d;

  for (char **e = environ; *e; e++)
    {
      if (strncmp (*e, "LD_", 3) == 0)
        {
          say ("leak: %s", *e);
          leaks++;
        }
      for (size_t i = 0; i < sizeof guest_paths / sizeof guest_paths[0]; i++)
        if (strstr (*e, guest_paths[i]))
          {
            say ("leak: %s names %s", *e, guest_paths[i]);
            leaks++;
          }
    }
  fds = opendir ("/proc/self/fd");
  if (!fds)
    {
      report ("opendir /proc/self/fd", -1);
      return TESTPROG_FAILED;
    }
  while ((d = readdir (fds)))
    {
      int fd = atoi (d->d_name);
      char path[64], target[PATH_MAX];
      int listening = 0;
      socklen_t len = sizeof listening;
      ssize_t n;

      if (d->d_name[0] == '.' || fd == dirfd (fds))
        continue;
      snprintf (path, sizeof path, "/proc/self/fd/%d", fd);
      n = readlink (path, target, sizeof target - 1);
      target[n < 0 ? 0 : n] = '\0';
      if (getsockopt (fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) == 0 && listening)
        {
          say ("leak: fd %d (%s) is a listening socket", fd, target);
          leaks++;
        }
      if (fd > 2)
        {
          say ("leak: fd %d open (%s)", fd, target);
          leaks++;
        }
    }
  closedir (fds);
  say ("%d leaks", leaks);
  hostile_canary (17);
  return leaks == 0 ? TESTPROG_OK : TESTPROG_FAILED;
}

/* 18.  The kernel keyrings: another way to hand data to (or take it from)
 * something outside the workload.  request_key, add_key and keyctl are
 * denied and recorded. */
int
technique_request_key (int argc, char **argv)
{
  long a, b, c;

  a = report ("request_key(user, airlock)",
              syscall (SYS_request_key, "user", "airlock", NULL, -2 /* KEY_SPEC_PROCESS_KEYRING */));
  b = report ("add_key(user, airlock)",
              syscall (SYS_add_key, "user", "airlock", "x", 1, -2));
  c = report ("keyctl(KEYCTL_GET_KEYRING_ID)", syscall (SYS_keyctl, 0, -3, 0));
  return a < 0 && b < 0 && c < 0 ? TESTPROG_OK : TESTPROG_FAILED;
}

/* 19.  Unix sockets outside the workload.  Its mount namespace holds only
 * the image's files, and abstract names live in the network namespace it
 * shares with PID 1, which listens on none: every listening socket
 * /proc/net/unix shows is connected to (each connect recorded), and none
 * may be anything but the workload's own.  Canary 198.51.100.19:7019. */
int
technique_unix_outside (int argc, char **argv)
{
  static const char *const paths[] = {
    "/dev/log", "/run/systemd/private", "/var/run/docker.sock", "/run/airlock/control",
  };
  FILE *f = fopen ("/proc/net/unix", "r");
  char line[512];
  int listeners = 0, connected = 0;

  while (f && fgets (line, sizeof line, f))
    {
      unsigned long flags = 0, state = 0;
      char name[300] = "";
      struct sockaddr_un sa = { .sun_family = AF_UNIX };
      socklen_t len;
      int fd;

      /* Num RefCount Protocol Flags Type St Inode Path */
      if (sscanf (line, "%*s %*s %*s %lx %*s %lx %*s %299s", &flags, &state, name) < 2
          || !(flags & 0x10000 /* __SO_ACCEPTCON */))
        continue;
      listeners++;
      say ("listening unix socket: %s", name[0] ? name : "(unnamed)");
      if (!name[0])
        continue;
      /* /proc shows an abstract name with a leading '@'. */
      len = (socklen_t) (offsetof (struct sockaddr_un, sun_path) + strlen (name));
      memcpy (sa.sun_path, name, strlen (name) < sizeof sa.sun_path ? strlen (name) : sizeof sa.sun_path - 1);
      if (name[0] == '@')
        sa.sun_path[0] = '\0';
      fd = socket (AF_UNIX, SOCK_STREAM, 0);
      if (fd >= 0 && connect (fd, (struct sockaddr *) &sa, len) == 0)
        connected++;
      if (fd >= 0)
        close (fd);
    }
  if (f)
    fclose (f);
  for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++)
    {
      struct sockaddr_un sa = { .sun_family = AF_UNIX };
      int fd = socket (AF_UNIX, SOCK_STREAM, 0);

      strcpy (sa.sun_path, paths[i]);
      if (fd < 0)
        continue;
      if (connect (fd, (struct sockaddr *) &sa, sizeof sa) == 0)
        {
          say ("connected to %s", paths[i]);
          connected++;
        }
      else
        say ("connect %s: errno %d (%s)", paths[i], errno, strerrorname_np (errno));
      close (fd);
    }
  say ("%d listening unix sockets, %d connected", listeners, connected);
  hostile_canary (19);
  return connected == 0 ? TESTPROG_OK : TESTPROG_FAILED;
}
