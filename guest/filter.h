/* The workload's seccomp program (filter.c): what the reaper installs
 * (reaper.c) and the supervisor and the test programs read.  A header of
 * its own so that the reaper needs nothing of supervisor.h. */
#ifndef AIRLOCK_FILTER_H
#define AIRLOCK_FILTER_H

#include <linux/filter.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

uint32_t filter_native_arch (void);
/* Assembles the workload's filter into @out (room for @max instructions);
 * @hooked: the kernel-hook recorder runs (hooks.h) and records writes on
 * sockets, connect, bind, listen, accept, accept4, sendto and sendmsg, so
 * none is notified; else write/writev on fds above 2 and those are. */
int filter_build (struct sock_filter *out, size_t max, bool hooked, size_t *ret_len);

#endif /* AIRLOCK_FILTER_H */
