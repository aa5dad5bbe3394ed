#pragma once

#include "record/run-record.h"
#include "vm/vm.h"

G_BEGIN_DECLS

/* The finished run as one record (run-record.h), made at the first call
 * and shared after: call it once airlock_vm_run() has returned.  Transfer
 * full. */
AirlockRunRecord *airlock_vm_get_record (AirlockVm *vm);

/* TRUE when the run ended because its connection to a libvirt daemon
 * was lost before the trailer (the daemon stopped, restarted or its host
 * went away): the run says nothing of the workload, and nothing of it was
 * the workload's doing.  Call it once airlock_vm_run() has returned. */
gboolean airlock_vm_host_lost (AirlockVm *vm);
/* TRUE when the VM read any byte of its stdin stream (the stream cannot
 * give those bytes to another run). */
gboolean airlock_vm_took_stdin (AirlockVm *vm);

/* What a hypervisor offers an arch (airlock_hypervisor_probe()). */
typedef enum {
  AIRLOCK_HOST_CANNOT = 0,   /* no QEMU for it, or the host cannot be reached */
  AIRLOCK_HOST_TCG,          /* QEMU for it, emulated */
  AIRLOCK_HOST_KVM,          /* KVM domains for it (a run still probes that KVM works) */
} AirlockHostSupport;

/* Opens @uri (as airlock_vm_new() would, @cache_dir for the embedded
 * driver) and asks its domain capabilities for @arch: KVM, else TCG, else
 * AIRLOCK_HOST_CANNOT with @error saying why.  A pool of hypervisors
 * (lib/case/hosts.c) places runs by it. */
AirlockHostSupport airlock_hypervisor_probe (const char *uri, const char *cache_dir,
                                             AirlockArch arch, GError **error);

G_END_DECLS
