#include "config.h"

#include "paths.h"

#include <gio/gio.h>

char *
airlock_default_cache_dir (void)
{
  const char *env = g_getenv ("AIRLOCK_CACHE_DIR");

  /* Absolute, as the areas make a given cache directory (guestimg/inputs.c,
   * image/disk.c, vm/vm.c): their paths go to libvirt and QEMU. */
  if (env && *env)
    return g_canonicalize_filename (env, NULL);
  return g_build_filename (g_get_user_cache_dir (), "airlock", NULL);
}

const char *
airlock_guest_programs_dir (void)
{
  const char *env = g_getenv ("AIRLOCK_GUEST_DIR");

  return (env && *env) ? env : AIRLOCK_LIBEXECDIR;
}

const char *
airlock_data_dir (void)
{
  const char *env = g_getenv ("AIRLOCK_DATA_DIR");

  return (env && *env) ? env : AIRLOCK_DATADIR;
}

char *
airlock_sha256_file (const char *path, GError **error)
{
  g_autoptr (GFile) file = g_file_new_for_path (path);
  g_autoptr (GFileInputStream) in = NULL;
  g_autoptr (GChecksum) sum = g_checksum_new (G_CHECKSUM_SHA256);
  g_autofree guint8 *buf = g_malloc (1 << 20);

  in = g_file_read (file, NULL, error);
  if (!in)
    return NULL;
  for (;;)
    {
      gssize n = g_input_stream_read (G_INPUT_STREAM (in), buf, 1 << 20, NULL, error);
      if (n < 0)
        return NULL;
      if (n == 0)
        break;
      g_checksum_update (sum, buf, n);
    }
  return g_strdup (g_checksum_get_string (sum));
}
