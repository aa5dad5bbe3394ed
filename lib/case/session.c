/* The session (case.h): one arch, its QEMU checked once, its guest image
 * ensured once (the variants a case needs made on demand, see prepare.c),
 * one run at a time. */
#include "config.h"

#include "case/case-state-private.h"

#include "case/hosts-private.h"

gboolean
airlock_clock_from_string (const char *name, AirlockClock *ret_clock)
{
  if (g_strcmp0 (name, "warp") == 0)
    *ret_clock = AIRLOCK_CLOCK_WARP;
  else if (g_strcmp0 (name, "real") == 0)
    *ret_clock = AIRLOCK_CLOCK_REAL;
  else
    return FALSE;
  return TRUE;
}

const char *
airlock_clock_to_string (AirlockClock clock)
{
  return clock == AIRLOCK_CLOCK_REAL ? "real" : "warp";
}

AirlockSession *
airlock_session_new (AirlockArch arch, const AirlockSessionOptions *options, GError **error)
{
  g_autoptr (AirlockSession) s = g_new0 (AirlockSession, 1);
  AirlockSessionOptions o = { 0 };
  AirlockGuestImageOptions img = { 0 };
  const char *qemu_env = g_getenv (arch == AIRLOCK_ARCH_AMD64 ? "AIRLOCK_QEMU_X86_64"
                                                             : "AIRLOCK_QEMU_AARCH64");
  const char *qemu = qemu_env && *qemu_env ? qemu_env
                     : arch == AIRLOCK_ARCH_AMD64 ? AIRLOCK_QEMU_X86_64 : AIRLOCK_QEMU_AARCH64;
  g_autofree char *qemu_path = NULL;

  if (options)
    o = *options;
  s->arch = arch;
  /* A pool is two or more hosts; one is a plain URI, as --connect gives. */
  if (o.uris && o.uris[0] && o.uris[1])
    s->uris = g_strdupv ((char **) o.uris);
  else if (o.uris && o.uris[0])
    s->uri = g_strdup (o.uris[0]);
  else if (o.uri)
    s->uri = g_strdup (o.uri);
  else
    {
      g_auto (GStrv) listed = airlock_hosts_parse (g_getenv ("AIRLOCK_CONNECT"));

      if (g_strv_length (listed) >= 2)
        s->uris = g_steal_pointer (&listed);
    }
  s->host_slots = o.host_slots ? o.host_slots : 1;
  s->cache_dir = o.cache_dir ? g_strdup (o.cache_dir) : airlock_default_cache_dir ();
  s->accel = o.accel;
  s->boot_timeout_ms = o.boot_timeout_ms;
  s->clock = o.icount ? AIRLOCK_CLOCK_WARP : o.clock;
  s->progress = o.progress;
  s->progress_data = o.progress_data;
  s->max_image_bytes = o.max_image_bytes;

  /* Only a local hypervisor needs our QEMU; a remote URI brings its own. */
  qemu_path = g_path_is_absolute (qemu) ? g_strdup (qemu) : g_find_program_in_path (qemu);
  if (!s->uris && (!s->uri || g_str_has_prefix (s->uri, "qemu:///"))
      && (!qemu_path || !g_file_test (qemu_path, G_FILE_TEST_IS_EXECUTABLE)))
    {
      g_set_error (error, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_EMULATOR,
                   "cannot run %s guests here: '%s' is not installed (Debian: apt-get install %s)",
                   airlock_arch_to_string (arch), qemu,
                   arch == AIRLOCK_ARCH_AMD64 ? "qemu-system-x86" : "qemu-system-arm");
      return NULL;
    }
  img.cache_dir = s->cache_dir;
  img.progress = s->progress;
  img.progress_data = s->progress_data;
  s->guest = airlock_guest_image_ensure (arch, &img, error);
  if (!s->guest)
    return NULL;
  return g_steal_pointer (&s);
}

gboolean
airlock_session_error_cannot_run_here (const GError *error)
{
  return g_error_matches (error, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_EMULATOR)
         || g_error_matches (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_UNAVAILABLE);
}

void
airlock_session_free (AirlockSession *session)
{
  if (!session)
    return;
  airlock_guest_image_free (session->guest);
  airlock_guest_image_free (session->guest_testroot);
  airlock_guest_image_free (session->guest_shell);
  g_free (session->uri);
  g_strfreev (session->uris);
  g_free (session->cache_dir);
  g_free (session);
}

AirlockArch
airlock_session_get_arch (AirlockSession *session)
{
  return session->arch;
}

const AirlockGuestImage *
airlock_session_get_guest_image (AirlockSession *session)
{
  return session->guest;
}
