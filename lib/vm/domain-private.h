/* Preparing a run's domain (domain.c). */
#pragma once

#include "vm/vm-state-private.h"

G_BEGIN_DECLS

/* Creates the run directory (and, embedded, the socket directory), each
 * with its owner file for the sweep, then the run's network: the sinkhole
 * process when the run has a spec and a NIC. */
gboolean airlock_vm_prepare_run_dir (AirlockVm *vm, GError **error);

/* Creates the domain, paused (AIRLOCK_VM_ERROR_START on failure); under
 * the embedded driver, claims its QEMU when it is our child. */
gboolean airlock_vm_start_domain (AirlockVm *vm, GError **error);

G_END_DECLS
