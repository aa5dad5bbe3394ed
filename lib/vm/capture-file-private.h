/* Who may write the capture file QEMU writes through filter-dump, when a
 * local libvirt daemon runs QEMU as a user of its own (qemu:///system).
 * The file's path is on QEMU's command line, which every local user can
 * read: the file must be writable by QEMU's user and by nobody else, or
 * anyone on the host could rewrite the frames the verdict judges.
 * Internal. */
#pragma once

#include <glib.h>
#include <sys/types.h>

G_BEGIN_DECLS

/* The user and group QEMU runs as for domains of @virt_type ("qemu",
 * "kvm"), from the DAC security model's base label in the daemon's
 * capabilities XML ("<baselabel type='kvm'>+64055:+994</baselabel>").
 * FALSE when the XML has no numeric DAC label for that type. */
gboolean airlock_capture_qemu_user (const char *caps_xml, const char *virt_type,
                                    guint32 *ret_uid, guint32 *ret_gid);

typedef enum {
  AIRLOCK_CAPTURE_ACCESS_OWN,   /* QEMU runs as us: 0600 is enough */
  AIRLOCK_CAPTURE_ACCESS_CHOWN, /* we are root: the file becomes QEMU's, 0600 */
  AIRLOCK_CAPTURE_ACCESS_ACL,   /* ours, 0600, plus one ACL entry: QEMU's user rw */
} AirlockCaptureAccess;

/* How a process running as @euid gives QEMU's user (@qemu_uid), and only
 * it, write access to a file it creates. */
AirlockCaptureAccess airlock_capture_access_for (uid_t euid, guint32 qemu_uid);

/* Applies airlock_capture_access_for (geteuid (), @qemu_uid) to @fd (the
 * capture file at @path, just created by us): mode 0600, then the owner
 * or an access ACL.  Fails (G_IO_ERROR, naming @path and QEMU's uid)
 * rather than leave the file open to others: a file system without ACLs
 * cannot hold the capture of a non-root run through a system daemon. */
gboolean airlock_capture_file_grant (int fd, const char *path, guint32 qemu_uid, guint32 qemu_gid,
                                     GError **error);

G_END_DECLS
