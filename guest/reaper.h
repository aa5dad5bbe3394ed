/* What PID 1 (supervisor.c) gives the reaper (reaper.c): its arguments,
 * the handoff page among them (handoff.h). */
#ifndef AIRLOCK_REAPER_H
#define AIRLOCK_REAPER_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

#include "handoff.h"
#include "run-spec.h"

#define HANDOFF_TIMEOUT_MS 10000
/* Where the static shell appears in the workload's root (AIRLOCK_SPEC_SHELL). */
#define STATIC_SHELL "/.airlock/bin/sh"

struct reaper_args {
  struct run_spec *spec;
  bool filter;
  bool hooked;             /* the kernel-hook recorder records writes and connects (hooks.h) */
  struct handoff *handoff;
  int in_fd;               /* read end of the workload's stdin pipe, or -1: /dev/null */
  int out_fd;              /* write end of its stdout pipe */
  int err_fd;              /* write end of its stderr pipe (may equal out_fd) */
};

/* Sent by the supervisor to the reaper at a time limit: the reaper sends
 * the spec's stop signal, then SIGCONT, to every process of its namespace
 * (kill(-1), which only the namespace's init can aim at all of them). */
#define REAPER_STOP_SIGNAL SIGUSR2

/* reaper.c */
/* pid 1 of the workload's namespaces: clone()'s function, @data a struct
 * reaper_args. */
int reaper_main (void *data);

#endif /* AIRLOCK_REAPER_H */
