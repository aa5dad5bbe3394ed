/* The accelerator a run's domain gets: KVM or TCG (accel.c). */
#pragma once

#include "vm/connection-private.h"
#include "vm/vm.h"

G_BEGIN_DECLS

/* Boots the guest once under KVM on @conn.  Returns NULL when it reached
 * its trailer, else why not (transfer full). */
typedef char *(*AirlockAccelProbeFunc) (AirlockConnection *conn, gpointer data);

/* Decides the libvirt domain type for @arch: "kvm" or "qemu".  May call
 * @probe (with @probe_data) to boot a probe VM; its result is cached per
 * host boot, emulator and URI under @options->cache_dir.  Reads
 * @options->clock_warp (a warped clock is TCG's).  On fallback to TCG,
 * *ret_notice gets one line saying why.  Fails (AIRLOCK_VM_ERROR_KVM) only
 * when KVM was required. */
gboolean airlock_accel_resolve (AirlockConnection *conn, AirlockArch arch, AirlockAccel want,
                                const AirlockVmOptions *options, AirlockAccelProbeFunc probe,
                                gpointer probe_data, char **ret_virt_type, char **ret_notice,
                                GError **error);

G_END_DECLS
