/* What PID 1 (supervisor.c) and the reaper (reaper.c, rootfs.c) share:
 * the handoff page and the reaper's arguments. */
#ifndef AIRLOCK_REAPER_H
#define AIRLOCK_REAPER_H

#include <stdbool.h>
#include <sys/types.h>

#include "run-spec.h"

#define HANDOFF_TIMEOUT_MS 10000
/* Where the static shell appears in the workload's root (AIRLOCK_SPEC_SHELL). */
#define STATIC_SHELL "/.airlock/bin/sh"

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
  bool hooked;             /* the kernel-hook recorder records writes and connects (hooks.h) */
  struct handoff *handoff;
  int in_fd;               /* read end of the workload's stdin pipe, or -1: /dev/null */
  int out_fd;              /* write end of its stdout pipe */
  int err_fd;              /* write end of its stderr pipe (may equal out_fd) */
};

/* reaper.c */
/* Stores why in @h's error, marks the handoff failed; returns 1 (the
 * reaper's exit status). */
int reaper_fail (struct handoff *h, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));
/* pid 1 of the workload's namespaces: clone()'s function, @data a struct
 * reaper_args. */
int reaper_main (void *data);

/* rootfs.c */
/* Builds the workload's root and pivots into it; 0, or 1 after
 * reaper_fail(). */
int setup_root (const struct run_spec *spec, struct handoff *h);

#endif /* AIRLOCK_REAPER_H */
