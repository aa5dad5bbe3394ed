/* Behaviours without network calls: what the workload sees of its
 * environment (to check that nothing of the guest's leaks in), and nothing
 * at all (the floor of the supervisor benchmark). */
#define _GNU_SOURCE

#include "testprog.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

extern char **environ;

int
behaviour_env (int argc, char **argv)
{
  char cwd[PATH_MAX];
  gid_t groups[64];
  int n_groups = getgroups (64, groups);
  struct utsname uts;
  DIR *fds;
  struct dirent *d;

  for (char **e = environ; *e; e++)
    say ("env %s", *e);
  for (int i = 0; i < argc; i++)
    say ("argv[%d] %s", i, argv[i]);
  say ("uid %d euid %d gid %d egid %d", (int) getuid (), (int) geteuid (), (int) getgid (),
       (int) getegid ());
  for (int i = 0; i < n_groups; i++)
    say ("group %d", (int) groups[i]);
  say ("cwd %s", getcwd (cwd, sizeof cwd) ? cwd : "(unknown)");
  if (uname (&uts) == 0)
    say ("hostname %s", uts.nodename);
  say ("pid %d ppid %d", getpid (), getppid ());
  /* Every open descriptor and what it is: the evidence port must not be
   * among them. */
  fds = opendir ("/proc/self/fd");
  if (!fds)
    {
      report ("opendir /proc/self/fd", -1);
      return TESTPROG_FAILED;
    }
  while ((d = readdir (fds)))
    {
      char path[sizeof "/proc/self/fd/" + sizeof d->d_name], target[PATH_MAX];
      ssize_t n;

      if (d->d_name[0] == '.' || atoi (d->d_name) == dirfd (fds))
        continue;
      snprintf (path, sizeof path, "/proc/self/fd/%s", d->d_name);
      n = readlink (path, target, sizeof target - 1);
      target[n < 0 ? 0 : n] = '\0';
      say ("fd %s %s", d->d_name, target);
    }
  closedir (fds);
  return TESTPROG_OK;
}

int
behaviour_noop (int argc, char **argv)
{
  return TESTPROG_OK;
}
