/* net-hold.c: under a warped clock, keeps the guest's clock from jumping
 * past a network answer still on its way (see there).  touch and stop do
 * nothing unless started.  Called by the supervisor's loop and the
 * kernel-hook recorder's drain (hooks.c). */
#ifndef AIRLOCK_GUEST_NET_HOLD_H
#define AIRLOCK_GUEST_NET_HOLD_H

int net_hold_start (void);
void net_hold_touch (void);
void net_hold_stop (void);

#endif /* AIRLOCK_GUEST_NET_HOLD_H */
