/* Bundle text helpers (bundle-json-private.h). */
#include "config.h"

#include "bundle/bundle-json-private.h"

#include "evidence/frame-private.h"

#include <string.h>

char *
airlock_bundle_safe_text (const char *s)
{
  g_autofree char *escaped = NULL;
  g_autofree char *doubled = NULL;

  if (!s)
    return NULL;
  escaped = airlock_evidence_escape_bytes ((const guint8 *) s, strlen (s));
  /* The escaper changes nothing but backslashes in a clean string. */
  {
    g_auto (GStrv) parts = g_strsplit (s, "\\", -1);

    doubled = g_strjoinv ("\\\\", parts);
  }
  return g_str_equal (escaped, doubled) ? g_strdup (s) : g_steal_pointer (&escaped);
}
