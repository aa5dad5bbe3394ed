/* The intake's messages: its error domain, and image strings as those
 * messages show them (printable-private.h).  Every file of the intake
 * calls into this one, and it calls into none of them: at the bottom of
 * lib/image/, so no two files there need each other (the domain and the
 * rendering once lived in source.c, which itself calls blob.c). */
#include "config.h"

#include "image/image.h"
#include "image/printable-private.h"

#include <string.h>

G_DEFINE_QUARK (airlock-image-error-quark, airlock_image_error)

char *
airlock_image_printable (const char *s)
{
  g_autofree char *head = NULL;
  g_autofree char *escaped = NULL;
  gsize len;

  if (!s)
    return g_strdup ("(none)");
  len = strlen (s);
  if (len <= AIRLOCK_IMAGE_PRINTABLE_MAX)
    return g_strescape (s, NULL);
  /* Cut before escaping: the escaped form of a cut-off UTF-8 sequence is
   * octal like any other byte, and the work stays bounded. */
  head = g_strndup (s, AIRLOCK_IMAGE_PRINTABLE_MAX);
  escaped = g_strescape (head, NULL);
  return g_strdup_printf ("%s… (%" G_GSIZE_FORMAT " bytes)", escaped, len);
}

void
airlock_image_printable_list_bound (GString *list)
{
  gsize cut = AIRLOCK_IMAGE_PRINTABLE_LIST_MAX;

  if (list->len <= cut)
    return;
  while (cut > 0 && ((guchar) list->str[cut] & 0xc0) == 0x80)
    cut--;
  g_string_truncate (list, cut);
  g_string_append (list, "…");
}
