/* The run's endpoints and the threads that serve them (streams.c). */
#pragma once

#include "vm/vm-state-private.h"

G_BEGIN_DECLS

/* Registers the domain's lifecycle callback, connects the console, the
 * evidence channel and (with a spec asking for it) the stdio port, sends
 * the host hello (and the run spec) and starts the readers, the clock
 * ticker (clock_warp) and the stdio threads.  Fails (AIRLOCK_VM_ERROR_STREAM)
 * when an endpoint cannot be opened or the hello not sent. */
gboolean airlock_vm_open_streams (AirlockVm *vm, GError **error);

/* Ends the clock_warp ticker thread, if it runs, and joins it. */
void airlock_vm_clock_ticker_stop (AirlockVm *vm);

/* A remote hypervisor's network: ends the threads that pass its channel to
 * and from the sinkhole, closes both ends.  After the domain is gone, before
 * the sinkhole is asked for its records. */
void airlock_vm_net_port_close (AirlockVm *vm);

/* Closes the endpoint's socket or aborts and frees its stream. */
void airlock_vm_endpoint_close (AirlockEndpoint *ep);

G_END_DECLS
