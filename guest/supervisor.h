/* Internals of the supervisor, shared by supervisor.c (one workload, start
 * to end: the main loop), filter.c (the seccomp program) and notify.c (one
 * notification: read, record, answer).  The test programs include it too
 * (tests/guest/bench.c: filter_build()): the parts only supervisor.c
 * drives are declared in workload.h and reaper.h. */
#ifndef AIRLOCK_SUPERVISOR_H
#define AIRLOCK_SUPERVISOR_H

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "guest.h"
#include "net-hold.h"

/* filter.c */
uint32_t filter_native_arch (void);
/* Assembles the workload's filter into @out (room for @max instructions);
 * @hooked: the kernel-hook recorder runs (hooks.h) and records writes on
 * sockets and connect, so neither is notified; else write/writev on fds
 * above 2 and connect are. */
int filter_build (struct sock_filter *out, size_t max, bool hooked, size_t *ret_len);

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
