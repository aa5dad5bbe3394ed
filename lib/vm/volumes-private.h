/* A remote hypervisor's copies of the files a domain boots from (volumes.c). */
#pragma once

#include "vm/connection-private.h"

G_BEGIN_DECLS

/* The storage pool airlock keeps its volumes in on a remote hypervisor.
 * When the hypervisor has none of this name airlock defines one, a
 * directory pool at AIRLOCK_POOL_PATH there; an administrator may define
 * it first, anywhere. */
#define AIRLOCK_POOL_NAME "airlock"
#define AIRLOCK_POOL_PATH "/var/lib/libvirt/airlock"

/* The path, on @conn's hypervisor, of a volume holding the bytes of the
 * local file @path, whose SHA-256 is @sha256 (hex; NULL: computed here).
 * The volume is named by that digest and kept for later runs: uploaded
 * through libvirt (virStorageVolUpload) when the pool lacks it, and read
 * back and hashed before every use, so a volume another process is still
 * writing, or one that changed, is never booted from.  @what names the
 * file in errors ("the guest kernel").  NULL with AIRLOCK_VM_ERROR_START
 * naming the URI, the file and the reason (the hypervisor's fault:
 * AIRLOCK_VM_ERROR_FAILED when the local file cannot be read). */
char *airlock_remote_volume_ensure (AirlockConnection *conn, const char *path,
                                    const char *sha256, const char *what, GError **error);

/* What @conn's hypervisor has of airlock's pool, in *@ret_detail; FALSE
 * when it cannot be read.  A missing or stopped pool is no fault: the
 * first run defines or starts it.  Defines nothing (`airlock doctor`). */
gboolean airlock_remote_pool_check (AirlockConnection *conn, char **ret_detail);

G_END_DECLS
