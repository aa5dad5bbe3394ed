/* Internals of the supervisor, shared by supervisor.c (one workload, start
 * to end: the main loop), filter.c (the seccomp program, filter.h) and
 * notify.c (one notification: read, record, answer).  The test programs include it too
 * (tests/guest/bench.c: filter_build()): the parts only supervisor.c
 * drives are declared in workload.h and reaper.h. */
#ifndef AIRLOCK_SUPERVISOR_H
#define AIRLOCK_SUPERVISOR_H

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "filter.h"
#include "guest.h"
#include "clock-hold.h"

/* notify.c */
struct notifier;
/* @listener: the seccomp notification fd. */
struct notifier *notifier_new (int listener);
/* Receives and answers one notification.  Returns 0, or -errno when the
 * listener itself failed (the run cannot go on). */
int notifier_handle_one (struct notifier *n);
/* Ends calls the supervisor is still performing for the workload (a
 * blocking connect in a worker thread) and waits for their workers. */
void notifier_finish (struct notifier *n);
uint64_t notifier_count (struct notifier *n);
/* After notifier_finish(). */
void notifier_free (struct notifier *n);


#endif /* AIRLOCK_SUPERVISOR_H */
