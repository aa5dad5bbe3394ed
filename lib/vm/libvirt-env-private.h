/* The environment libvirt reads when it initialises (internal). */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Points libvirt's log at @cache_dir/libvirt.log (LIBVIRT_LOG_OUTPUTS, unless
 * the user set it), creating @cache_dir.  libvirt reads the variable once,
 * in its first virInitialize(): whoever can initialise libvirt in this
 * process (connection.c, and libguestfs, whose constructor calls
 * virInitialize() when disk.c loads it) calls this first.  Only the first
 * call with a usable directory sets anything; thread-safe. */
void airlock_libvirt_env_init (const char *cache_dir);

G_END_DECLS
