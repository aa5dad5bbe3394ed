/* What every gen-*-corpus program does with each seed it builds: write it
 * into the committed corpus, or (--check, the *-corpus-current tests) fail
 * when the committed file is missing or is not what the generator builds
 * today; and the command line and loop over the seeds they share
 * (corpus_seed_main).  Header-only: the generators are programs of one
 * file each. */
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

/* A seed built into an empty byte array: the generators whose seeds are
 * nothing but their bytes keep a table of these. */
typedef struct {
  const char *name;
  void (*build) (GByteArray *bytes);
} CorpusSeed;

/* One corpus a generator writes.  @kind is the word on the command line
 * that picks it, or NULL when the generator writes only this corpus and
 * takes no such word.  Its @n_seeds seeds come either from @seeds, or,
 * for a generator whose seeds carry more than bytes while they are built,
 * from @seed_build: seed @i, a new array the caller frees, and its name
 * in @ret_name. */
typedef struct {
  const char *kind;
  gsize n_seeds;
  const CorpusSeed *seeds;
  GByteArray *(*seed_build) (gsize i, const char **ret_name);
} CorpusSet;

/* The usage line names the corpora, e.g. "[--check] sockaddr|dns DIR". */
static inline int
corpus_seed_usage (const char *self, const CorpusSet *sets, gsize n_sets)
{
  g_autoptr (GString) kinds = g_string_new (NULL);

  for (gsize i = 0; i < n_sets && sets[0].kind; i++)
    g_string_append_printf (kinds, "%s%s", i ? "|" : "", sets[i].kind);
  fprintf (stderr, "usage: %s [--check] %s%sDIR\n", self, kinds->str, kinds->len ? " " : "");
  return 2;
}

/* main() of a generator of the corpora @sets: "SELF [--check] DIR" when
 * it writes one corpus (its kind NULL), "SELF [--check] KIND DIR" when it
 * writes several.  Returns main's status: 0, 1 when a seed could not be
 * written or (--check) differs, 2 on a usage error. */
static inline int
corpus_seed_main (int argc, char **argv, const CorpusSet *sets, gsize n_sets)
{
  int n_args = sets[0].kind ? 2 : 1;
  gboolean check = argc == n_args + 2 && strcmp (argv[1], "--check") == 0;
  const char *kind = sets[0].kind ? argv[check ? 2 : 1] : NULL;
  const char *dir;
  const CorpusSet *set = NULL;
  int status = 0;

  if (!(argc == n_args + 1 || check))
    return corpus_seed_usage (argv[0], sets, n_sets);
  dir = argv[check ? n_args + 1 : n_args];
  for (gsize i = 0; i < n_sets && !set; i++)
    if (!kind || strcmp (kind, sets[i].kind) == 0)
      set = &sets[i];
  if (!set)
    {
      fprintf (stderr, "%s: unknown corpus '%s'\n", argv[0], kind);
      return corpus_seed_usage (argv[0], sets, n_sets);
    }

  for (gsize i = 0; i < set->n_seeds; i++)
    {
      g_autoptr (GByteArray) bytes = NULL;
      g_autofree char *path = NULL;
      const char *name;

      if (set->seeds)
        {
          bytes = g_byte_array_new ();
          set->seeds[i].build (bytes);
          name = set->seeds[i].name;
        }
      else
        bytes = set->seed_build (i, &name);
      path = g_build_filename (dir, name, NULL);
      status |= corpus_seed_put (path, bytes->data, bytes->len, check, argv[0]);
    }
  return status;
}
