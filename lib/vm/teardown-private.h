/* The end of a run's domain (teardown.c). */
#pragma once

#include "vm/vm-state-private.h"

G_BEGIN_DECLS

/* Kills QEMU (embedded) or destroys the domain, ends the threads and the
 * endpoints, collects the sinkhole's records and the capture, removes the
 * run's directories.  Always called once a run was attempted. */
void airlock_vm_teardown (AirlockVm *vm);

/* Waits up to @timeout_ms for libvirt's stop event.  Called with vm->lock
 * held. */
void airlock_vm_wait_for_stop_event (AirlockVm *vm, guint timeout_ms);

/* Is the connection to a daemon dead (it stopped, crashed or restarted)? */
gboolean airlock_vm_connection_lost (AirlockVm *vm);

G_END_DECLS
