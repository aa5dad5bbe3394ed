/* A pool of hypervisors a session's runs are spread over (hosts.c). */
#pragma once

#include "arch.h"
#include "vm/vm-private.h"

#include <glib.h>

G_BEGIN_DECLS

/* A slot on a host of @uris (NULL-terminated) for a run of @arch: the first
 * with a free slot (fewer than @slots runs of this process on it) that can
 * run @arch, one offering KVM for it first, and never @avoid (NULL: any).
 * Waits while every host that can run @arch is full.  Returns the host's
 * URI (free it, and give the slot back with airlock_hosts_release()), or
 * NULL with @error when no host can run @arch (each host's reason). */
char *airlock_hosts_acquire (const char *const *uris, guint slots, const char *cache_dir,
                             AirlockArch arch, const char *avoid, GError **error);
/* Gives back a slot airlock_hosts_acquire() took on @uri. */
void airlock_hosts_release (const char *uri);
/* The URIs of a list ($AIRLOCK_CONNECT): separated by spaces or newlines
 * (a libvirt URI has none).  Never NULL; NULL-terminated. */
char **airlock_hosts_parse (const char *text);

/* How a host is asked what it offers an arch: airlock_hypervisor_probe(),
 * unless a test gives another (NULL: that one again).  The unit tests of
 * the pool run without a hypervisor, and hold probes to make two runs
 * interleave. */
typedef AirlockHostSupport (*AirlockHostProbeFunc) (const char *uri, const char *cache_dir,
                                                     AirlockArch arch, GError **error);
void airlock_hosts_set_probe_func (AirlockHostProbeFunc func);

G_END_DECLS
