/* --serve NAME:PORT=FILE, shared by run, gate, shell and replay: what an
 * admitted name answers in the sinkhole network (docs/sinkhole.md). */
#include "config.h"

#include "harness.h"

#include <string.h>

/* A fixture is a response, not a payload to stage: 1 MiB is far more than
 * any HTTP answer a test needs, and bounds what a typo'd path can read. */
#define SERVE_FILE_MAX (1u << 20)

gboolean
harness_apply_serve (AirlockCase *c, const char *const *specs, GPtrArray *ret_lines,
                     GError **error)
{
  for (guint i = 0; specs && specs[i]; i++)
    {
      const char *spec = specs[i];
      const char *eq = strchr (spec, '=');
      const char *colon = eq ? memchr (spec, ':', (gsize) (eq - spec)) : NULL;
      g_autofree char *name = NULL;
      g_autofree char *port_text = NULL;
      g_autofree char *contents = NULL;
      g_autoptr (GBytes) bytes = NULL;
      g_autoptr (GError) local = NULL;
      guint64 port;
      gsize len;

      if (!colon || colon == spec || !eq[1])
        {
          g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                       "--serve '%s': expected NAME:PORT=FILE, e.g. pypi.org:443=reply.bin", spec);
          return FALSE;
        }
      name = g_strndup (spec, (gsize) (colon - spec));
      port_text = g_strndup (colon + 1, (gsize) (eq - colon - 1));
      if (!g_ascii_string_to_unsigned (port_text, 10, 1, 65535, &port, NULL))
        {
          g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                       "--serve '%s': '%s' is not a port (1 to 65535)", spec, port_text);
          return FALSE;
        }
      if (!g_file_get_contents (eq + 1, &contents, &len, &local))
        {
          g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--serve '%s': %s", spec,
                       local->message);
          return FALSE;
        }
      if (len > SERVE_FILE_MAX)
        {
          g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                       "--serve '%s': '%s' is %" G_GSIZE_FORMAT " bytes; a fixture is at most 1 MiB",
                       spec, eq + 1, len);
          return FALSE;
        }
      bytes = g_bytes_new_take (g_steal_pointer (&contents), len);
      if (ret_lines)
        {
          g_autofree char *sum = g_compute_checksum_for_bytes (G_CHECKSUM_SHA256, bytes);
          g_ptr_array_add (ret_lines, airlock_case_fixture_line (name, (guint16) port, sum));
        }
      if (!airlock_case_serve (c, name, (guint16) port, bytes))
        {
          g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                       "--serve '%s': '%s' is not a host name", spec, name);
          return FALSE;
        }
    }
  return TRUE;
}
