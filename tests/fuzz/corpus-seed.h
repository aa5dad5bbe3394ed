/* What every gen-*-corpus program does with each seed it builds: write it
 * into the committed corpus, or (--check, the *-corpus-current tests) fail
 * when the committed file is missing or is not what the generator builds
 * today.  Header-only: the generators are programs of one file each. */
#pragma once

#include <glib.h>
#include <stdio.h>
#include <string.h>

/* Returns 0, or 1 after saying on stderr what is wrong with @path.  @self
 * is the generator's name, for the hint to run it again. */
static inline int
corpus_seed_put (const char *path, const guint8 *data, gsize size, gboolean check,
                 const char *self)
{
  g_autofree char *contents = NULL;
  g_autoptr (GError) error = NULL;
  gsize len = 0;

  if (!check)
    {
      if (g_file_set_contents (path, (const char *) data, (gssize) size, &error))
        return 0;
      fprintf (stderr, "cannot write seed '%s': %s\n", path, error->message);
      return 1;
    }
  if (!g_file_get_contents (path, &contents, &len, &error))
    {
      fprintf (stderr, "seed '%s' is missing: %s\n", path, error->message);
      return 1;
    }
  if (len != size || memcmp (contents, data, len) != 0)
    {
      fprintf (stderr, "seed '%s' differs from what %s builds; regenerate it\n", path, self);
      return 1;
    }
  return 0;
}
