/* What PID 1 (supervisor.c) gives the reaper (reaper.c): its arguments,
 * the handoff page among them (handoff.h). */
#ifndef AIRLOCK_REAPER_H
#define AIRLOCK_REAPER_H

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

/* reaper.c */
/* pid 1 of the workload's namespaces: clone()'s function, @data a struct
 * reaper_args. */
int reaper_main (void *data);

#endif /* AIRLOCK_REAPER_H */
