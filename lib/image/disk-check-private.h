/* Whether this host can build rootfs disks (disk.c): libguestfs builds its
 * appliance with supermin from the host's own kernel, and a kernel only
 * root can read (Ubuntu installs /boot/vmlinuz-* as 0600) makes the first
 * disk build fail deep inside libguestfs.  `airlock doctor` asks here
 * first and prints the fix.  Internal (not installed). */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* One finding: what was checked, whether it is usable, what was found,
 * and the fix when it is not (NULL when usable). */
typedef struct {
  char *what;
  gboolean ok;
  char *detail;
  char *fix;
} AirlockDiskCheck;

void airlock_disk_check_free (AirlockDiskCheck *check);

/* The checks, in order: libguestfs loads; a fixed appliance
 * ($LIBGUESTFS_PATH) or supermin to build one; and, for supermin, the
 * kernel it would take — $SUPERMIN_KERNEL, else the newest
 * @boot_dir/vmlinuz-VERSION with a @modules_dir/VERSION directory —
 * opened and read as this process, so the answer is this user's.
 * @boot_dir and @modules_dir are "/boot" and "/lib/modules" on a host
 * (tests give others).  Transfer full: AirlockDiskCheck *. */
GPtrArray *airlock_disk_checks (const char *boot_dir, const char *modules_dir);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AirlockDiskCheck, airlock_disk_check_free)

G_END_DECLS
