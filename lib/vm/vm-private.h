#pragma once

#include "vm/connection-private.h"
#include "record/run-record.h"
#include "vm/vm.h"

G_BEGIN_DECLS

/* A VM on an open connection with a fixed libvirt domain type ("kvm" or
 * "qemu"): what the accelerator probe boots.  @conn is borrowed. */
AirlockVm *airlock_vm_new_on (AirlockArch arch, const AirlockGuestImage *image,
                              const AirlockVmOptions *options, AirlockConnection *conn,
                              const char *virt_type);

/* Decides the libvirt domain type for @arch: "kvm" or "qemu".  May boot a
 * probe VM (result cached per host boot, emulator and URI).  On fallback to
 * TCG, *ret_notice gets one line saying why.  Fails (AIRLOCK_VM_ERROR_KVM)
 * only when KVM was required. */
gboolean airlock_accel_resolve (AirlockConnection *conn, AirlockArch arch, AirlockAccel want,
                                const AirlockGuestImage *image, const AirlockVmOptions *options,
                                char **ret_virt_type, char **ret_notice, GError **error);

/* The finished run as one record (run-record.h), made at the first call
 * and shared after: call it once airlock_vm_run() has returned.  Transfer
 * full. */
AirlockRunRecord *airlock_vm_get_record (AirlockVm *vm);

G_END_DECLS
