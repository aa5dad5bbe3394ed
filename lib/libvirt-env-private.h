/* The environment libvirt reads when it initialises (internal).  In the
 * top-level toolbox, below both of its users: the VM layer and the image
 * intake (disk.c loads libguestfs) each set it, and neither reaches into
 * the other for it. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* libvirt's log goes to the default cache root's libvirt.log
 * ($AIRLOCK_CACHE_DIR, else $XDG_CACHE_HOME/airlock, else
 * ~/.cache/airlock): LIBVIRT_LOG_OUTPUTS, unless the user set it.  libvirt
 * reads the variable once, in its first virInitialize(), and setenv() is
 * not safe once other threads may read the environment, so the library
 * sets it in a constructor, while the process is loading it and has no
 * thread of ours yet (a program that dlopen()s libairlock after starting
 * threads should set LIBVIRT_LOG_OUTPUTS itself).
 *
 * Whoever can initialise libvirt in this process (connection.c, and
 * libguestfs, whose constructor calls virInitialize() when disk.c loads it)
 * calls this first: it creates the log's directory, which the constructor
 * must not (loading a library makes no directories), and never touches the
 * environment.  @cache_dir is the caller's cache root: when it is not the
 * default one the log still goes to the default root's (the variable was
 * fixed at load time).  Thread-safe. */
void airlock_libvirt_env_init (const char *cache_dir);

/* The directory the constructor pointed libvirt's log into, or NULL when it
 * set nothing (the user's own LIBVIRT_LOG_OUTPUTS, or no home to find a
 * cache in).  For tests. */
const char *airlock_libvirt_env_log_dir (void);

G_END_DECLS
