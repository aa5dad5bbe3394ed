#include "config.h"

#include "vm/libvirt-env-private.h"

void
airlock_libvirt_env_init (const char *cache_dir)
{
  static GMutex lock;
  static gboolean done;

  g_mutex_lock (&lock);
  if (done)
    {
      g_mutex_unlock (&lock);
      return;
    }
  /* libvirt logs warnings to stderr by default (the embedded driver runs
   * in-process); the library never prints, so they go to a file. */
  if (g_getenv ("LIBVIRT_LOG_OUTPUTS"))
    done = TRUE;
  else if (cache_dir && g_mkdir_with_parents (cache_dir, 0700) == 0)
    {
      g_autofree char *outputs = g_strdup_printf ("3:file:%s/libvirt.log", cache_dir);

      g_setenv ("LIBVIRT_LOG_OUTPUTS", outputs, FALSE);
      done = TRUE;
    }
  g_mutex_unlock (&lock);
}
