/* Which user a local libvirt daemon (qemu:///system) runs QEMU as: the
 * one the network's socket is given to (lib/vm/domain.c, prepare_network()),
 * and nobody else, or anyone on the host could be the guest's network.
 * Internal. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The user and group QEMU runs as for domains of @virt_type ("qemu",
 * "kvm"), from the DAC security model's base label in the daemon's
 * capabilities XML ("<baselabel type='kvm'>+64055:+994</baselabel>").
 * FALSE when the XML has no numeric DAC label for that type. */
gboolean airlock_capture_qemu_user (const char *caps_xml, const char *virt_type,
                                    guint32 *ret_uid, guint32 *ret_gid);

G_END_DECLS
