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

/* Prints one bundle's report.  TRUE when it verified. */
static gboolean
print_bundle (const char *dir, const AirlockBundleReport *r)
{
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

/* A gate's directory: each bundle, then the set they must make
 * (lib/bundle/bundle-set.c).  Counts bundles into @n and @failed; TRUE
 * when the set holds. */
static gboolean
verify_set (const char *dir, GBytes *key, guint *n, guint *failed)
{
  g_autoptr (AirlockBundleSetReport) s = airlock_bundle_set_verify (dir, key);

  for (unsigned a = 0; a < AIRLOCK_N_ARCHES; a++)
    if (s->bundles[a])
      {
        g_autofree char *sub = g_build_filename (dir, airlock_arch_to_string ((AirlockArch) a), NULL);

        (*n)++;
        *failed += !print_bundle (sub, s->bundles[a]);
      }
  for (guint i = 0; i < s->problems->len; i++)
    {
      const AirlockBundleProblem *p = s->problems->pdata[i];

      printf ("%s: %s%s%s\n", dir, p->file ? p->file : "", p->file ? ": " : "", p->message);
    }
  if (s->problems->len)
    {
      printf ("%s: NOT VERIFIED as one set (%u problem%s)\n", dir, s->problems->len,
              s->problems->len == 1 ? "" : "s");
      return FALSE;
    }
  printf ("%s: verified as one set: gate %s, %s%s%s; %s\n", dir, s->gate_id,
          s->asked[AIRLOCK_ARCH_AMD64] ? "amd64" : "",
          s->asked[AIRLOCK_ARCH_AMD64] && s->asked[AIRLOCK_ARCH_ARM64] ? " and " : "",
          s->asked[AIRLOCK_ARCH_ARM64] ? "arm64" : "",
          s->hmac_checked ? "HMAC checked"
          : s->hmac_present ? "HMAC present, not checked (no --key-file)"
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
      "check the manifest's (and a gate's set.json's) HMAC-SHA256 under the key in FILE (a bundle without one fails)", "FILE" },
    { NULL },
  };
  guint n = 0, failed = 0, sets_failed = 0;

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
  if (key_file && !(key = airlock_bundle_key_load (key_file, &error)))
    {
      fprintf (stderr, "airlock verify: --key-file: %s\n", error->message);
      return HARNESS_EXIT_USAGE;
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
          g_autoptr (AirlockBundleReport) r = airlock_bundle_verify (dir, key);

          n++;
          failed += !print_bundle (dir, r);
          /* Alone, a bundle cannot show the rest of its gate was whole. */
          if (r->gate_id)
            printf ("%s: note: one bundle of gate %s; verify the gate's --out directory to check "
                    "it with the rest of its set\n", r->arch ? r->arch : dir, r->gate_id);
          continue;
        }
      /* A gate's --out DIR: one bundle per arch, and the set record that
       * binds them. */
      if (!airlock_bundle_dir_is_set (dir))
        {
          printf ("%s: NOT VERIFIED: no manifest.json, and no set.json, amd64/ or arm64/ in it\n",
                  dir);
          n++;
          failed++;
          continue;
        }
      sets_failed += !verify_set (dir, key, &n, &failed);
    }
  if (n > 1 || sets_failed)
    printf ("%u of %u bundles verified%s\n", n - failed, n,
            sets_failed ? "; not as the set they must make" : "");
  return failed || sets_failed ? HARNESS_EXIT_FAIL : HARNESS_EXIT_OK;
}
