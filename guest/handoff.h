/* The handoff page PID 1 (supervisor.c) and the reaper (reaper.c, and
 * rootfs.c, which builds the workload's root in the reaper's process)
 * share, and how the reaper says it failed. */
#ifndef AIRLOCK_HANDOFF_H
#define AIRLOCK_HANDOFF_H

#include <stdarg.h>
#include <stdio.h>
#include <sys/types.h>

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

/* Stores why in @h's error, marks the handoff failed; returns 1 (the
 * reaper's exit status).  Here, not in reaper.c: rootfs.c, which reaper.c
 * calls, fails the handoff too, and calls nothing of reaper.c's. */
static inline __attribute__ ((format (printf, 2, 3))) int
reaper_fail (struct handoff *h, const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (h->error, sizeof h->error, fmt, ap);
  va_end (ap);
  __atomic_store_n (&h->state, HANDOFF_FAILED, __ATOMIC_RELEASE);
  return 1;
}

#endif /* AIRLOCK_HANDOFF_H */
