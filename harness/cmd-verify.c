/* airlock verify: re-derive everything a bundle claims from its raw files
 * (lib/bundle/bundle-verify.c) and say, per file, what does not hold. */
#include "config.h"

#include "harness.h"

#include "bundle/bundle.h"

#include <stdio.h>
#include <string.h>

gboolean
harness_is_bundle (const char *dir)
{
  g_autofree char *manifest = g_build_filename (dir, "manifest.json", NULL);
  g_autofree char *marker = g_build_filename (dir, AIRLOCK_BUNDLE_INCOMPLETE, NULL);

  return g_file_test (manifest, G_FILE_TEST_EXISTS) || g_file_test (marker, G_FILE_TEST_EXISTS);
}

/* Verifies one bundle; prints its problems.  TRUE when it verified. */
static gboolean
verify_one (const char *dir, GBytes *key)
{
  g_autoptr (AirlockBundleReport) r = airlock_bundle_verify (dir, key);
  const char *label = r->arch ? r->arch : dir;

  for (guint i = 0; i < r->problems->len; i++)
    {
      const AirlockBundleProblem *p = r->problems->pdata[i];

      printf ("%s: %s%s%s\n", label, p->file ? p->file : "", p->file ? ": " : "", p->message);
    }
  if (r->problems->len)
    {
      printf ("%s: NOT VERIFIED: %s (%u problem%s)\n", label, dir, r->problems->len,
              r->problems->len == 1 ? "" : "s");
      return FALSE;
    }
  printf ("%s: verified %s: verdict %s, bound to manifest %s%s%s; %s\n", label, dir,
          r->verdict ? r->verdict : "?", r->manifest_digest ? r->manifest_digest : "(no image)",
          r->index_digest ? ", index " : "", r->index_digest ? r->index_digest : "",
          r->hmac_checked ? "HMAC checked"
          : r->hmac_present ? "HMAC present, not checked (no --key-file)"
                            : "not signed");
  return TRUE;
}

int
cmd_verify (int argc, char **argv)
{
  g_autofree char *key_file = NULL;
  g_autoptr (GBytes) key = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (GOptionContext) ctx = g_option_context_new ("DIR… - check evidence bundles: "
                                                         "digests, HMAC, the channel replayed, "
                                                         "events decoded again, the verdict "
                                                         "recomputed");
  GOptionEntry entries[] = {
    { "key-file", 0, 0, G_OPTION_ARG_FILENAME, &key_file,
      "check the manifest's HMAC-SHA256 under the key in FILE (a bundle without one fails)", "FILE" },
    { NULL },
  };
  guint n = 0, failed = 0;

  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    {
      fprintf (stderr, "airlock verify: %s\n", error->message);
      return HARNESS_EXIT_USAGE;
    }
  if (argc < 2)
    {
      fprintf (stderr, "airlock verify: give a bundle directory (or one holding ARCH/ bundles)\n");
      return HARNESS_EXIT_USAGE;
    }
  if (key_file)
    {
      g_autofree char *contents = NULL;
      gsize len = 0;

      if (!g_file_get_contents (key_file, &contents, &len, &error))
        {
          fprintf (stderr, "airlock verify: --key-file: %s\n", error->message);
          return HARNESS_EXIT_USAGE;
        }
      key = g_bytes_new_take (g_steal_pointer (&contents), len);
    }
  for (int i = 1; i < argc; i++)
    {
      const char *dir = argv[i];

      if (!g_file_test (dir, G_FILE_TEST_IS_DIR))
        {
          fprintf (stderr, "airlock verify: '%s' is not a directory\n", dir);
          return HARNESS_EXIT_USAGE;
        }
      if (harness_is_bundle (dir))
        {
          n++;
          failed += !verify_one (dir, key);
          continue;
        }
      /* A gate's --out DIR: one bundle per arch. */
      {
        guint found = 0;

        for (unsigned a = 0; a < AIRLOCK_N_ARCHES; a++)
          {
            g_autofree char *sub = g_build_filename (dir, airlock_arch_to_string ((AirlockArch) a), NULL);

            if (!g_file_test (sub, G_FILE_TEST_IS_DIR))
              continue;
            found++;
            n++;
            failed += !verify_one (sub, key);
          }
        if (!found)
          {
            printf ("%s: NOT VERIFIED: no manifest.json, and no amd64/ or arm64/ bundle in it\n", dir);
            n++;
            failed++;
          }
      }
    }
  if (n > 1)
    printf ("%u of %u bundles verified\n", n - failed, n);
  return failed ? HARNESS_EXIT_FAIL : HARNESS_EXIT_OK;
}
