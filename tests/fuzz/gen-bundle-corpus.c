/* Writes the seed corpus of fuzz-bundle (tests/fuzz/corpus/bundle/) in
 * fuzz-bundle.h's format.
 *
 * The first seed, real-egress-amd64, is a real bundle: `airlock gate` of
 * the sample egress image on amd64 under TCG, imported once with
 *
 *   gen-bundle-corpus --import BUNDLE_DIR corpus/bundle/real-egress-amd64
 *
 * (every regular file, by name).  The others are made from it here:
 * signed (manifest.hmac under FUZZ_BUNDLE_KEY), unfinished (INCOMPLETE),
 * without its capture, with evidence.bin a symlink, with a subdirectory.
 *
 *   gen-bundle-corpus DIR           write the variants into DIR (next to the real one)
 *   gen-bundle-corpus --check DIR   exit 1 unless DIR holds exactly them
 *
 * The seeds are committed; the "fuzz" test suite runs --check so they
 * cannot drift from this program. */
#include "config.h"

#include <glib.h>
#include <stdio.h>
#include <string.h>

#include "fuzz-bundle.h"

#define REAL_SEED "real-egress-amd64"

typedef struct {
  guint8 type;
  char *name;
  GBytes *data;
} Entry;

static void
entry_free (gpointer p)
{
  Entry *e = p;

  g_free (e->name);
  g_bytes_unref (e->data);
  g_free (e);
}

static GPtrArray *
parse (GBytes *bytes)
{
  GPtrArray *entries = g_ptr_array_new_with_free_func (entry_free);
  gsize size, pos = 0;
  const guint8 *data = g_bytes_get_data (bytes, &size);
  FuzzBundleEntry fe;

  while (fuzz_bundle_next (data, size, &pos, &fe))
    {
      Entry *e = g_new0 (Entry, 1);

      e->type = fe.type;
      e->name = g_strdup (fe.name);
      e->data = g_bytes_new (fe.data, fe.len);
      g_ptr_array_add (entries, e);
    }
  return entries;
}

static GByteArray *
serialise (GPtrArray *entries)
{
  GByteArray *out = g_byte_array_new ();

  for (guint i = 0; i < entries->len; i++)
    {
      Entry *e = entries->pdata[i];
      gsize len;
      const void *d = g_bytes_get_data (e->data, &len);

      fuzz_bundle_put (out, e->type, e->name, d, len);
    }
  return out;
}

static Entry *
find (GPtrArray *entries, const char *name)
{
  for (guint i = 0; i < entries->len; i++)
    if (g_str_equal (((Entry *) entries->pdata[i])->name, name))
      return entries->pdata[i];
  return NULL;
}

static void
add (GPtrArray *entries, guint8 type, const char *name, const char *text)
{
  Entry *e = g_new0 (Entry, 1);

  e->type = type;
  e->name = g_strdup (name);
  e->data = g_bytes_new (text, strlen (text));
  g_ptr_array_add (entries, e);
}

static void
drop (GPtrArray *entries, const char *name)
{
  Entry *e = find (entries, name);

  if (e)
    g_ptr_array_remove (entries, e);
}

static void
variant_signed (GPtrArray *entries)
{
  Entry *manifest = find (entries, "manifest.json");
  g_autoptr (GHmac) hmac = g_hmac_new (G_CHECKSUM_SHA256, (const guchar *) FUZZ_BUNDLE_KEY,
                                       strlen (FUZZ_BUNDLE_KEY));
  g_autofree char *line = NULL;
  gsize len;
  const guchar *d = g_bytes_get_data (manifest->data, &len);

  g_hmac_update (hmac, d, (gssize) len);
  line = g_strdup_printf ("%s\n", g_hmac_get_string (hmac));
  add (entries, FUZZ_BUNDLE_FILE, "manifest.hmac", line);
}

static void
variant_unfinished (GPtrArray *entries)
{
  add (entries, FUZZ_BUNDLE_FILE, "INCOMPLETE",
       "the run was interrupted\nairlock: cancelled by SIGINT\n");
}

static void
variant_no_pcap (GPtrArray *entries)
{
  drop (entries, "net.pcap");
}

static void
variant_symlink (GPtrArray *entries)
{
  drop (entries, "evidence.bin");
  add (entries, FUZZ_BUNDLE_SYMLINK, "evidence.bin", "frames.jsonl");
}

static void
variant_subdir (GPtrArray *entries)
{
  drop (entries, "stdout");
  add (entries, FUZZ_BUNDLE_DIR, "stdout", "");
}

static const struct {
  const char *name;
  void (*build) (GPtrArray *entries);
} variants[] = {
  { "signed", variant_signed },
  { "unfinished", variant_unfinished },
  { "no-pcap", variant_no_pcap },
  { "symlink", variant_symlink },
  { "subdir", variant_subdir },
};

static gint
compare_names (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

static int
import (const char *src, const char *out_path)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GDir) d = g_dir_open (src, 0, &error);
  g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GByteArray) out = g_byte_array_new ();
  const char *entry;

  if (!d)
    {
      fprintf (stderr, "cannot open '%s': %s\n", src, error->message);
      return 1;
    }
  while ((entry = g_dir_read_name (d)))
    g_ptr_array_add (names, g_strdup (entry));
  g_ptr_array_sort (names, compare_names);
  for (guint i = 0; i < names->len; i++)
    {
      g_autofree char *path = g_build_filename (src, names->pdata[i], NULL);
      g_autofree char *contents = NULL;
      gsize len;

      if (!g_file_test (path, G_FILE_TEST_IS_REGULAR) || g_file_test (path, G_FILE_TEST_IS_SYMLINK))
        continue;
      if (!g_file_get_contents (path, &contents, &len, &error))
        {
          fprintf (stderr, "cannot read '%s': %s\n", path, error->message);
          return 1;
        }
      fuzz_bundle_put (out, FUZZ_BUNDLE_FILE, names->pdata[i], contents, len);
    }
  if (!g_file_set_contents (out_path, (const char *) out->data, out->len, &error))
    {
      fprintf (stderr, "cannot write '%s': %s\n", out_path, error->message);
      return 1;
    }
  return 0;
}

int
main (int argc, char **argv)
{
  gboolean check = argc == 3 && strcmp (argv[1], "--check") == 0;
  const char *dir = check ? argv[2] : argv[1];
  g_autofree char *real_path = NULL;
  g_autofree char *real = NULL;
  g_autoptr (GError) error = NULL;
  gsize real_len;
  int status = 0;

  if (argc == 4 && strcmp (argv[1], "--import") == 0)
    return import (argv[2], argv[3]);
  if (!(argc == 2 || check))
    {
      fprintf (stderr, "usage: %s [--check] DIR | --import BUNDLE_DIR FILE\n", argv[0]);
      return 2;
    }
  real_path = g_build_filename (dir, REAL_SEED, NULL);
  if (!g_file_get_contents (real_path, &real, &real_len, &error))
    {
      fprintf (stderr, "the real bundle '%s' is missing: %s\n", real_path, error->message);
      return 1;
    }

  for (gsize i = 0; i < G_N_ELEMENTS (variants); i++)
    {
      g_autoptr (GBytes) real_bytes = g_bytes_new_static (real, real_len);
      g_autoptr (GPtrArray) entries = parse (real_bytes);
      g_autoptr (GByteArray) bytes = NULL;
      g_autofree char *path = g_build_filename (dir, variants[i].name, NULL);
      g_autofree char *contents = NULL;
      gsize len = 0;

      if (!find (entries, "manifest.json"))
        {
          fprintf (stderr, "'%s' holds no manifest.json\n", real_path);
          return 1;
        }
      variants[i].build (entries);
      bytes = serialise (entries);
      if (check)
        {
          if (!g_file_get_contents (path, &contents, &len, &error))
            {
              fprintf (stderr, "seed '%s' is missing: %s\n", path, error->message);
              g_clear_error (&error);
              status = 1;
            }
          else if (len != bytes->len || memcmp (contents, bytes->data, len) != 0)
            {
              fprintf (stderr, "seed '%s' differs from what %s builds; regenerate it\n", path,
                       argv[0]);
              status = 1;
            }
        }
      else if (!g_file_set_contents (path, (const char *) bytes->data, bytes->len, &error))
        {
          fprintf (stderr, "cannot write seed '%s': %s\n", path, error->message);
          g_clear_error (&error);
          status = 1;
        }
    }
  return status;
}
