/* airlock verify: re-derive everything a bundle claims from its raw files
 * (lib/bundle/bundle-verify.c) and say, per file, what does not hold. */
#include "config.h"

#include "harness.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Where verify writes: the text on stdout, or under --json JSON Lines on
 * stdout (docs/json.md) and the text on stderr. */
typedef struct {
  gboolean json;
  FILE *text;
} VerifyOut;

static void
add_problems (JsonBuilder *b, GPtrArray *problems)
{
  json_builder_set_member_name (b, "problems");
  json_builder_begin_array (b);
  for (guint i = 0; i < problems->len; i++)
    {
      const AirlockBundleProblem *p = problems->pdata[i];

      json_builder_begin_object (b);
      airlock_json_set_str (b, "file", p->file);
      airlock_json_set_str (b, "message", p->message);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
}

static const char *
hmac_state (gboolean checked, gboolean present)
{
  return checked ? "checked" : present ? "present" : "absent";
}

static void
print_json (JsonBuilder *b)
{
  g_autofree char *line = airlock_json_builder_to_text (b, FALSE);

  printf ("%s\n", line);
}

/* One "bundle" line. */
static void
json_bundle (const char *dir, const AirlockBundleReport *r)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();

  json_builder_begin_object (b);
  airlock_json_set_str (b, "type", "bundle");
  airlock_json_set_str (b, "dir", dir);
  airlock_json_set_str (b, "arch", r->arch);
  airlock_json_set_bool (b, "verified", r->problems->len == 0);
  airlock_json_set_str (b, "verdict", r->verdict);
  airlock_json_set_str (b, "reference", r->reference);
  airlock_json_set_str (b, "index", r->index_digest);
  airlock_json_set_str (b, "manifest", r->manifest_digest);
  airlock_json_set_str (b, "gate", r->gate_id);
  airlock_json_set_str (b, "hmac", hmac_state (r->hmac_checked, r->hmac_present));
  add_problems (b, r->problems);
  json_builder_end_object (b);
  print_json (b);
}

/* Prints one bundle's report.  TRUE when it verified. */
static gboolean
print_bundle (VerifyOut *out, const char *dir, const AirlockBundleReport *r)
{
  const char *label = r->arch ? r->arch : dir;
  FILE *f = out->text;

  if (out->json)
    json_bundle (dir, r);

  for (guint i = 0; i < r->problems->len; i++)
    {
      const AirlockBundleProblem *p = r->problems->pdata[i];

      fprintf (f, "%s: %s%s%s\n", label, p->file ? p->file : "", p->file ? ": " : "", p->message);
    }
  if (r->problems->len)
    {
      fprintf (f, "%s: NOT VERIFIED: %s (%u problem%s)\n", label, dir, r->problems->len,
              r->problems->len == 1 ? "" : "s");
      return FALSE;
    }
  fprintf (f, "%s: verified %s: verdict %s, bound to manifest %s%s%s; %s\n", label, dir,
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
verify_set (VerifyOut *out, const char *dir, GBytes *key, guint *n, guint *failed)
{
  g_autoptr (AirlockBundleSetReport) s = airlock_bundle_set_verify (dir, key);
  FILE *f = out->text;

  for (unsigned a = 0; a < AIRLOCK_N_ARCHES; a++)
    if (s->bundles[a])
      {
        g_autofree char *sub = g_build_filename (dir, airlock_arch_to_string ((AirlockArch) a), NULL);

        (*n)++;
        *failed += !print_bundle (out, sub, s->bundles[a]);
      }
  /* A first attempt whose host was lost mid-run: evidence of the gate
   * too (inconclusive), verified like the others. */
  for (unsigned a = 0; a < AIRLOCK_N_ARCHES; a++)
    if (s->attempts[a])
      {
        g_autofree char *sub = g_strconcat (dir, "/", airlock_arch_to_string ((AirlockArch) a),
                                            AIRLOCK_BUNDLE_ATTEMPT_SUFFIX, NULL);

        (*n)++;
        *failed += !print_bundle (out, sub, s->attempts[a]);
      }
  if (out->json)
    {
      g_autoptr (JsonBuilder) b = json_builder_new ();

      json_builder_begin_object (b);
      airlock_json_set_str (b, "type", "set");
      airlock_json_set_str (b, "dir", dir);
      airlock_json_set_bool (b, "verified", s->problems->len == 0);
      airlock_json_set_str (b, "gate", s->gate_id);
      json_builder_set_member_name (b, "arches");
      json_builder_begin_array (b);
      for (unsigned a = 0; a < AIRLOCK_N_ARCHES; a++)
        if (s->asked[a])
          json_builder_add_string_value (b, airlock_arch_to_string ((AirlockArch) a));
      json_builder_end_array (b);
      airlock_json_set_str (b, "hmac", hmac_state (s->hmac_checked, s->hmac_present));
      add_problems (b, s->problems);
      json_builder_end_object (b);
      print_json (b);
    }
  for (guint i = 0; i < s->problems->len; i++)
    {
      const AirlockBundleProblem *p = s->problems->pdata[i];

      fprintf (f, "%s: %s%s%s\n", dir, p->file ? p->file : "", p->file ? ": " : "", p->message);
    }
  if (s->problems->len)
    {
      fprintf (f, "%s: NOT VERIFIED as one set (%u problem%s)\n", dir, s->problems->len,
              s->problems->len == 1 ? "" : "s");
      return FALSE;
    }
  fprintf (f, "%s: verified as one set: gate %s, %s%s%s; %s\n", dir, s->gate_id,
          s->asked[AIRLOCK_ARCH_AMD64] ? "amd64" : "",
          s->asked[AIRLOCK_ARCH_AMD64] && s->asked[AIRLOCK_ARCH_ARM64] ? " and " : "",
          s->asked[AIRLOCK_ARCH_ARM64] ? "arm64" : "",
          s->hmac_checked ? "HMAC checked"
          : s->hmac_present ? "HMAC present, not checked (no --key-file)"
                            : "not signed");
  return TRUE;
}

/* verify's last line under --json: how many bundles verified, the exit
 * status, every error. */
static void
json_summary (int exit_status, guint n, guint failed, guint sets_failed, GPtrArray *errors)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();

  json_builder_begin_object (b);
  airlock_json_set_str (b, "type", "summary");
  airlock_json_set_str (b, "command", "verify");
  airlock_json_set_int (b, "exit_status", exit_status);
  airlock_json_set_int (b, "bundles", n);
  airlock_json_set_int (b, "verified", n - failed);
  airlock_json_set_int (b, "sets_not_verified", sets_failed);
  g_ptr_array_add (errors, NULL);
  airlock_json_set_strv (b, "errors", (const char *const *) errors->pdata);
  g_ptr_array_remove_index (errors, errors->len - 1);
  json_builder_end_object (b);
  print_json (b);
}

static int verify_main (VerifyOut *out, int argc, char **argv, GPtrArray *errors, guint *n,
                        guint *failed, guint *sets_failed);

int
cmd_verify (int argc, char **argv)
{
  VerifyOut out = { FALSE, stdout };
  g_autoptr (GPtrArray) errors = g_ptr_array_new_with_free_func (g_free);
  guint n = 0, failed = 0, sets_failed = 0;
  int status = verify_main (&out, argc, argv, errors, &n, &failed, &sets_failed);

  if (out.json)
    json_summary (status, n, failed, sets_failed, errors);
  return status;
}

/* Prints "airlock verify: MESSAGE" and keeps MESSAGE for the summary. */
static void verify_error (GPtrArray *errors, const char *format, ...) G_GNUC_PRINTF (2, 3);

static void
verify_error (GPtrArray *errors, const char *format, ...)
{
  va_list ap;

  va_start (ap, format);
  harness_keep_error (errors, "airlock verify", format, ap);
  va_end (ap);
}

static int
verify_main (VerifyOut *out, int argc, char **argv, GPtrArray *errors, guint *ret_n,
             guint *ret_failed, guint *ret_sets_failed)
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
    { "json", 0, 0, G_OPTION_ARG_NONE, &out->json,
      "print JSON Lines only on stdout, a bundle or set per line and a summary last (docs/json.md)", NULL },
    { NULL },
  };
  guint n = 0, failed = 0, sets_failed = 0;
  int status;

  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    {
      verify_error (errors, "%s", error->message);
      return HARNESS_EXIT_USAGE;
    }
  if (out->json)
    out->text = stderr;
  if (argc < 2)
    {
      verify_error (errors, "give a bundle directory (or one holding ARCH/ bundles)");
      return HARNESS_EXIT_USAGE;
    }
  if (key_file && !(key = airlock_bundle_key_load (key_file, &error)))
    {
      verify_error (errors, "--key-file: %s", error->message);
      return HARNESS_EXIT_USAGE;
    }
  for (int i = 1; i < argc; i++)
    if (!g_file_test (argv[i], G_FILE_TEST_IS_DIR))
      {
        /* Before any bundle is verified, not after the first. */
        verify_error (errors, "'%s' is not a directory", argv[i]);
        return HARNESS_EXIT_USAGE;
      }
  for (int i = 1; i < argc; i++)
    {
      const char *dir = argv[i];

      if (harness_is_bundle (dir))
        {
          g_autoptr (AirlockBundleReport) r = airlock_bundle_verify (dir, key);

          n++;
          failed += !print_bundle (out, dir, r);
          /* Alone, a bundle cannot show the rest of its gate was whole. */
          if (r->gate_id)
            fprintf (out->text, "%s: note: one bundle of gate %s; verify the gate's --out "
                     "directory to check it with the rest of its set\n",
                     r->arch ? r->arch : dir, r->gate_id);
          continue;
        }
      /* A gate's --out DIR: one bundle per arch, and the set record that
       * binds them. */
      if (!airlock_bundle_dir_is_set (dir))
        {
          fprintf (out->text, "%s: NOT VERIFIED: no manifest.json, and no set.json, amd64/ or "
                   "arm64/ in it\n", dir);
          if (out->json)
            {
              g_autoptr (JsonBuilder) b = json_builder_new ();

              json_builder_begin_object (b);
              airlock_json_set_str (b, "type", "bundle");
              airlock_json_set_str (b, "dir", dir);
              airlock_json_set_bool (b, "verified", FALSE);
              json_builder_set_member_name (b, "problems");
              json_builder_begin_array (b);
              json_builder_begin_object (b);
              airlock_json_set_str (b, "file", NULL);
              airlock_json_set_str (b, "message",
                                    "no manifest.json, and no set.json, amd64/ or arm64/ in it");
              json_builder_end_object (b);
              json_builder_end_array (b);
              json_builder_end_object (b);
              print_json (b);
            }
          n++;
          failed++;
          continue;
        }
      sets_failed += !verify_set (out, dir, key, &n, &failed);
    }
  if (n > 1 || sets_failed)
    fprintf (out->text, "%u of %u bundles verified%s\n", n - failed, n,
             sets_failed ? "; not as the set they must make" : "");
  status = failed || sets_failed ? HARNESS_EXIT_FAIL : HARNESS_EXIT_OK;
  *ret_n = n;
  *ret_failed = failed;
  *ret_sets_failed = sets_failed;
  return status;
}
