/* Who a process is, from /proc: its ids, exe and argv (read_proc_info),
 * and what was last read of each recent process, for the kernel-hook
 * recorder's records of processes that exited, or exec'd another binary,
 * before PID 1 read them.
 * Used by the notification path (notify.c, calls.c) and hooks.c. */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proc-info.h"

ssize_t
read_prefix (const char *path, char *buf, size_t size)
{
  size_t got = 0;
  int fd = open (path, O_RDONLY | O_CLOEXEC);

  if (fd < 0)
    return -errno;
  while (got < size)
    {
      ssize_t r = read (fd, buf + got, size - got);

      if (r < 0 && errno == EINTR)
        continue;
      if (r <= 0)
        break;
      got += (size_t) r;
    }
  close (fd);
  return (ssize_t) got;
}

static uint32_t
status_field (const char *status, const char *key, bool last)
{
  const char *p = strstr (status, key);
  unsigned long v = 0;

  if (!p)
    return 0;
  p += strlen (key);
  for (;;)
    {
      char *end;

      while (*p == ' ' || *p == '\t')
        p++;
      if (*p < '0' || *p > '9')
        break;
      v = strtoul (p, &end, 10);
      p = end;
      if (!last)
        break;
    }
  return (uint32_t) v;
}

/* The last exe and argv read of the most recent processes, for a record
 * the kernel-hook recorder made of a process that exited, or exec'd
 * another binary, before PID 1 read its record (hooks.c).  A process that
 * writes on an inet socket made it or connected it with a notified call
 * first, which read it here.  Kept with the exe's identity: a record is
 * only ever given the name of the binary that made its call.  Only the
 * main loop's thread reads /proc and drains the hooks. */
#define PROC_MEMO_MAX 64
static struct {
  uint32_t tgid;
  uint64_t exe_ino;
  char exe[RECORD_EXE_MAX];
  size_t exe_len;
  char argv[RECORD_ARGV_MAX];
  size_t argv_len;
} proc_memo[PROC_MEMO_MAX];
static unsigned proc_memo_next;

static void
proc_memo_keep (const struct proc_info *pi)
{
  unsigned slot = PROC_MEMO_MAX;

  for (unsigned i = 0; i < PROC_MEMO_MAX; i++)
    if (proc_memo[i].tgid == pi->tgid)
      {
        slot = i;
        break;
      }
  if (slot == PROC_MEMO_MAX)
    {
      slot = proc_memo_next;
      proc_memo_next = (proc_memo_next + 1) % PROC_MEMO_MAX;
    }
  proc_memo[slot].tgid = pi->tgid;
  proc_memo[slot].exe_ino = pi->exe_ino;
  memcpy (proc_memo[slot].exe, pi->exe, pi->exe_len);
  proc_memo[slot].exe_len = pi->exe_len;
  memcpy (proc_memo[slot].argv, pi->argv, pi->argv_len);
  proc_memo[slot].argv_len = pi->argv_len;
}

bool
proc_memo_recall (uint32_t tgid, uint64_t ino, struct proc_info *pi)
{
  for (unsigned i = 0; tgid && i < PROC_MEMO_MAX; i++)
    if (proc_memo[i].tgid == tgid)
      {
        if (proc_memo[i].exe_ino == 0 || proc_memo[i].exe_ino != ino)
          return false;
        memcpy (pi->exe, proc_memo[i].exe, proc_memo[i].exe_len);
        pi->exe_len = proc_memo[i].exe_len;
        memcpy (pi->argv, proc_memo[i].argv, proc_memo[i].argv_len);
        pi->argv_len = proc_memo[i].argv_len;
        pi->exe_ino = ino;
        return true;
      }
  return false;
}

void
read_proc_exe (uint32_t tgid, struct proc_info *pi)
{
  char path[64];
  struct stat st;
  ssize_t n;
  int fd;

  pi->exe_len = 0;
  pi->exe_ino = 0;
  snprintf (path, sizeof path, "/proc/%u/exe", tgid);
  fd = open (path, O_PATH | O_CLOEXEC);
  if (fd < 0)
    return;
  if (fstat (fd, &st) == 0)
    {
      snprintf (path, sizeof path, "/proc/self/fd/%d", fd);
      n = readlink (path, pi->exe, sizeof pi->exe);
      if (n > 0)
        {
          pi->exe_len = (size_t) n;
          pi->exe_ino = st.st_ino;
        }
    }
  close (fd);
}

void
read_proc_info (pid_t tid, struct proc_info *pi)
{
  char path[64], status[4096];
  ssize_t r;

  memset (pi, 0, sizeof *pi);
  snprintf (path, sizeof path, "/proc/%d/status", tid);
  r = read_prefix (path, status, sizeof status - 1);
  if (r <= 0)
    return;
  status[r] = '\0';
  pi->tgid = status_field (status, "\nTgid:", false);
  pi->ppid = status_field (status, "\nPPid:", false);
  pi->uid = status_field (status, "\nUid:", false);
  pi->gid = status_field (status, "\nGid:", false);
  pi->nspid = status_field (status, "\nNSpid:", true);
  read_proc_exe ((uint32_t) tid, pi);
  snprintf (path, sizeof path, "/proc/%d/cmdline", tid);
  r = read_prefix (path, pi->argv, sizeof pi->argv);
  pi->argv_len = r > 0 ? (size_t) r : 0;
  pi->ok = pi->tgid != 0;
  if (pi->ok && (pi->exe_len > 0 || pi->argv_len > 0))
    proc_memo_keep (pi);
}

