#include "config.h"

#include "libvirt-env-private.h"

#include <stdlib.h>

/* Set once by the constructor, before main(); only read afterwards. */
static char *log_dir;

/* Runs while the library is loaded: before main() for a program linked
 * against it, so before any thread exists.  Plain getenv()/setenv(), not
 * GLib's: nothing of GLib's state (its cached user directories) is made
 * here, where a test program could not yet have changed it. */
__attribute__ ((constructor)) static void
preset_libvirt_log (void)
{
  const char *cache = getenv ("AIRLOCK_CACHE_DIR");
  const char *xdg = getenv ("XDG_CACHE_HOME");
  const char *home = getenv ("HOME");
  g_autofree char *outputs = NULL;

  /* libvirt logs warnings to stderr by default (the embedded driver runs
   * in-process); the library never prints, so they go to a file. */
  if (getenv ("LIBVIRT_LOG_OUTPUTS"))
    return;
  if (cache && *cache)
    log_dir = g_strdup (cache);
  else if (xdg && *xdg == '/')
    log_dir = g_build_filename (xdg, "airlock", NULL);
  else if (home && *home == '/')
    log_dir = g_build_filename (home, ".cache", "airlock", NULL);
  else
    return;
  outputs = g_strdup_printf ("3:file:%s/libvirt.log", log_dir);
  if (setenv ("LIBVIRT_LOG_OUTPUTS", outputs, 0) != 0)
    g_clear_pointer (&log_dir, g_free);
}

const char *
airlock_libvirt_env_log_dir (void)
{
  return log_dir;
}

void
airlock_libvirt_env_init (const char *cache_dir)
{
  static GMutex lock;
  static gboolean done;

  (void) cache_dir;
  g_mutex_lock (&lock);
  /* libvirt opens the file when it initialises and falls back to stderr
   * when it cannot: the directory must exist by then. */
  /* The log's directory is the cache's root: made as the rest of airlock
   * makes it (airlock_cache_mkdir()). */
  if (!done && log_dir && g_mkdir_with_parents (log_dir, 0755) == 0)
    done = TRUE;
  g_mutex_unlock (&lock);
}
