/* clock-hold.c: under a warped clock, keeps the guest's clock from jumping
 * past a network answer still on its way, or past the time the host takes
 * to drain a port PID 1 writes (see there).  Everything here does nothing
 * more than it says unless started (clock_hold_write_all is then
 * write_all).  Called by the supervisor's loop, the kernel-hook recorder's
 * drain (hooks.c) and every writer to a host port (channel.c, stdio.c,
 * net-port.c), from any thread of PID 1. */
#ifndef AIRLOCK_GUEST_CLOCK_HOLD_H
#define AIRLOCK_GUEST_CLOCK_HOLD_H

#include <stddef.h>

int clock_hold_start (void);
void clock_hold_after_network (void);
/* write_all() to a host port, holding the clock while the port is full. */
int clock_hold_write_all (int fd, const void *buf, size_t len);
void clock_hold_stop (void);

#endif /* AIRLOCK_GUEST_CLOCK_HOLD_H */
