/* lib/bundle without a VM: the one key-length rule, and a gate's bundles
 * verified as one set (bundle-set.c).
 *
 * The set record in every fixture is what airlock_bundle_set_write()
 * writes.  The bundles under it are manifests only: the set layer reads a
 * bundle through airlock_bundle_verify()'s report (arch, gate id, image,
 * manifest digest), and a whole bundle needs a VM's run — what each
 * bundle's own verification adds is checked end to end by vm-bundle. */
#include "config.h"

#include "bundle/bundle.h"
#include "bundle/bundle-json-private.h"
#include "fsutil-private.h"

#include <glib/gstdio.h>
#include <string.h>

#define INDEX_A "sha256:1111111111111111111111111111111111111111111111111111111111111111"
#define INDEX_B "sha256:2222222222222222222222222222222222222222222222222222222222222222"
#define REF_A "oci-archive:release.tar"

typedef struct {
  char *root;      /* a scratch directory, removed at teardown */
  char *gate;      /* the gate directory: root/gate */
  GBytes *key;
} Fixture;

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;

  f->root = g_dir_make_tmp ("airlock-test-bundle-XXXXXX", &error);
  g_assert_no_error (error);
  f->gate = g_build_filename (f->root, "gate", NULL);
  g_assert_cmpint (g_mkdir (f->gate, 0755), ==, 0);
  f->key = g_bytes_new_static ("0123456789abcdef0123456789abcdef", 32);
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  airlock_rm_rf (f->root);
  g_free (f->root);
  g_free (f->gate);
  g_bytes_unref (f->key);
}

/* DIR/ARCH/manifest.json of a finished bundle of @gate_id (NULL: none)
 * for the image (@reference, @index). */
static void
write_bundle (const char *dir, const char *arch, const char *gate_id, const char *reference,
              const char *index)
{
  g_autofree char *sub = g_build_filename (dir, arch, NULL);
  g_autofree char *path = g_build_filename (sub, "manifest.json", NULL);
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autofree char *text = NULL;
  g_autoptr (GError) error = NULL;

  g_assert_cmpint (g_mkdir_with_parents (sub, 0755), ==, 0);
  json_builder_begin_object (b);
  airlock_json_set_str (b, "bundle", AIRLOCK_BUNDLE_FORMAT);
  airlock_json_set_str (b, "arch", arch);
  if (gate_id)
    airlock_json_set_str (b, "gate", gate_id);
  json_builder_set_member_name (b, "inputs");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "image");
  json_builder_begin_object (b);
  airlock_json_set_str (b, "reference", reference);
  airlock_json_set_str (b, "index", index);
  airlock_json_set_str (b, "manifest", g_str_equal (arch, "amd64")
                                           ? "sha256:aaaa" : "sha256:bbbb");
  json_builder_end_object (b);
  json_builder_end_object (b);
  json_builder_end_object (b);
  text = airlock_json_builder_to_text (b, TRUE);
  g_file_set_contents (path, text, -1, &error);
  g_assert_no_error (error);
}

/* A gate's directory as the gate leaves it: each of @arches' bundles,
 * then the set record over them.  Returns the gate id. */
static char *
write_gate (const char *dir, gboolean amd64, gboolean arm64, GBytes *key)
{
  char *id = airlock_bundle_set_new_id ();
  gboolean arches[AIRLOCK_N_ARCHES] = { amd64, arm64 };
  AirlockBundleSetInput in = {
    .gate_id = id,
    .arches = arches,
    .reference = REF_A,
    .index_digest = INDEX_A,
    .key = key,
  };
  g_autoptr (GError) error = NULL;

  if (amd64)
    write_bundle (dir, "amd64", id, REF_A, INDEX_A);
  if (arm64)
    write_bundle (dir, "arm64", id, REF_A, INDEX_A);
  g_assert_true (airlock_bundle_set_write (dir, &in, &error));
  g_assert_no_error (error);
  return id;
}

/* The set's problem naming @file whose message holds @needle, or fails. */
static void
assert_problem (AirlockBundleSetReport *r, const char *file, const char *needle)
{
  for (guint i = 0; i < r->problems->len; i++)
    {
      const AirlockBundleProblem *p = r->problems->pdata[i];

      if (g_strcmp0 (p->file, file) == 0 && strstr (p->message, needle))
        return;
    }
  for (guint i = 0; i < r->problems->len; i++)
    {
      const AirlockBundleProblem *p = r->problems->pdata[i];

      g_test_message ("problem: %s: %s", p->file ? p->file : "(none)", p->message);
    }
  g_test_fail_printf ("no problem of '%s' says '%s'", file, needle);
}

static void
rename_or_fail (const char *from, const char *to)
{
  g_assert_cmpint (g_rename (from, to), ==, 0);
}

/* ---- keys ---- */

static void
test_key_rule (void)
{
  static const struct {
    gsize len;
    gboolean ok;
  } rows[] = {
    { 0, FALSE }, { 6, FALSE }, { 15, FALSE }, { 16, TRUE }, { 65536, TRUE }, { 65537, FALSE },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      g_autofree guint8 *bytes = g_malloc0 (rows[i].len + 1);
      g_autoptr (GBytes) key = g_bytes_new (bytes, rows[i].len);
      g_autoptr (GError) error = NULL;
      gboolean ok = airlock_bundle_key_check (key, "the key", &error);

      g_test_message ("a key of %" G_GSIZE_FORMAT " bytes", rows[i].len);
      g_assert_cmpint (ok, ==, rows[i].ok);
      if (ok)
        g_assert_no_error (error);
      else
        g_assert_error (error, AIRLOCK_BUNDLE_ERROR, AIRLOCK_BUNDLE_ERROR_KEY);
    }
}

/* The key file gate refuses, verify refuses too: one loader for both. */
static void
test_key_six_bytes_refused_everywhere (Fixture *f, gconstpointer data)
{
  g_autofree char *path = g_build_filename (f->root, "short-key", NULL);
  g_autoptr (GBytes) key = NULL;
  g_autoptr (GBytes) six = g_bytes_new_static ("secret", 6);
  g_autoptr (GError) error = NULL;
  g_autofree char *bundle = g_build_filename (f->gate, "amd64", NULL);
  g_autoptr (AirlockBundleReport) r = NULL;
  g_autoptr (AirlockBundleSetReport) s = NULL;
  gboolean arches[AIRLOCK_N_ARCHES] = { TRUE, FALSE };
  AirlockBundleSetInput in = { .gate_id = "00", .arches = arches, .key = six };

  g_file_set_contents (path, "secret", 6, &error);
  g_assert_no_error (error);
  key = airlock_bundle_key_load (path, &error);
  g_assert_null (key);
  g_assert_error (error, AIRLOCK_BUNDLE_ERROR, AIRLOCK_BUNDLE_ERROR_KEY);
  g_assert_nonnull (strstr (error->message, path));
  g_assert_nonnull (strstr (error->message, "6 bytes"));
  g_clear_error (&error);

  /* The library's verifiers and the set writer hold to it as well. */
  write_bundle (f->gate, "amd64", NULL, REF_A, INDEX_A);
  r = airlock_bundle_verify (bundle, six);
  g_assert_cmpuint (r->problems->len, ==, 1);
  g_assert_nonnull (strstr (((AirlockBundleProblem *) r->problems->pdata[0])->message, "6 bytes"));
  s = airlock_bundle_set_verify (f->gate, six);
  g_assert_cmpuint (s->problems->len, ==, 1);
  g_assert_nonnull (strstr (((AirlockBundleProblem *) s->problems->pdata[0])->message, "6 bytes"));
  g_assert_false (airlock_bundle_set_write (f->gate, &in, &error));
  g_assert_error (error, AIRLOCK_BUNDLE_ERROR, AIRLOCK_BUNDLE_ERROR_KEY);
}

/* ---- the set ---- */

static void
assert_no_problem (AirlockBundleSetReport *r)
{
  for (guint i = 0; i < r->problems->len; i++)
    {
      const AirlockBundleProblem *p = r->problems->pdata[i];

      g_test_message ("problem: %s: %s", p->file ? p->file : "(none)", p->message);
    }
  g_assert_cmpuint (r->problems->len, ==, 0);
}

static void
test_set_whole_verifies (Fixture *f, gconstpointer data)
{
  g_autofree char *id = write_gate (f->gate, TRUE, TRUE, f->key);
  g_autoptr (AirlockBundleSetReport) r = airlock_bundle_set_verify (f->gate, f->key);
  g_autoptr (AirlockBundleSetReport) unkeyed = airlock_bundle_set_verify (f->gate, NULL);

  assert_no_problem (r);
  g_assert_true (r->hmac_checked);
  g_assert_cmpstr (r->gate_id, ==, id);
  g_assert_true (r->asked[AIRLOCK_ARCH_AMD64] && r->asked[AIRLOCK_ARCH_ARM64]);
  /* Each bundle went through its own verification too. */
  g_assert_nonnull (r->bundles[AIRLOCK_ARCH_AMD64]);
  g_assert_nonnull (r->bundles[AIRLOCK_ARCH_ARM64]);
  g_assert_cmpstr (r->bundles[AIRLOCK_ARCH_ARM64]->gate_id, ==, id);

  /* Without a key: consistent, signature present but not checked. */
  assert_no_problem (unkeyed);
  g_assert_false (unkeyed->hmac_checked);
  g_assert_true (unkeyed->hmac_present);
}

static void
test_set_one_arch_verifies (Fixture *f, gconstpointer data)
{
  g_autofree char *id = write_gate (f->gate, TRUE, FALSE, f->key);
  g_autoptr (AirlockBundleSetReport) r = airlock_bundle_set_verify (f->gate, f->key);

  assert_no_problem (r);
  g_assert_true (r->asked[AIRLOCK_ARCH_AMD64]);
  g_assert_false (r->asked[AIRLOCK_ARCH_ARM64]);
}

/* Finding 5: a directory holding only amd64/ verified. */
static void
test_set_missing_arch (Fixture *f, gconstpointer data)
{
  g_autofree char *id = write_gate (f->gate, TRUE, TRUE, f->key);
  g_autofree char *arm64 = g_build_filename (f->gate, "arm64", NULL);
  g_autoptr (AirlockBundleSetReport) r = NULL;

  airlock_rm_rf (arm64);
  r = airlock_bundle_set_verify (f->gate, f->key);
  assert_problem (r, "arm64", "is missing: the set asks for arm64");
  g_assert_cmpuint (r->problems->len, ==, 1);
}

/* An arch whose run wrote no finished bundle: the set says so, and a
 * bundle put there afterwards is not the gate's. */
static void
test_set_unfinished_arch (Fixture *f, gconstpointer data)
{
  g_autofree char *id = airlock_bundle_set_new_id ();
  gboolean arches[AIRLOCK_N_ARCHES] = { TRUE, TRUE };
  AirlockBundleSetInput in = {
    .gate_id = id, .arches = arches, .reference = REF_A, .index_digest = INDEX_A, .key = f->key,
  };
  g_autofree char *marker = g_build_filename (f->gate, "arm64", AIRLOCK_BUNDLE_INCOMPLETE, NULL);
  g_autoptr (AirlockBundleSetReport) r = NULL;
  g_autoptr (GError) error = NULL;

  write_bundle (f->gate, "amd64", id, REF_A, INDEX_A);
  write_bundle (f->gate, "arm64", id, REF_A, INDEX_A);
  g_file_set_contents (marker, "not finished\n", -1, &error);
  g_assert_no_error (error);
  g_assert_true (airlock_bundle_set_write (f->gate, &in, &error));
  g_assert_no_error (error);
  g_assert_cmpint (g_unlink (marker), ==, 0);
  r = airlock_bundle_set_verify (f->gate, f->key);
  assert_problem (r, "arm64", "the gate wrote no finished bundle for arm64");
}

/* Finding 5: amd64's signed bundle copied into arm64/ gave "2 of 2". */
static void
test_set_swapped_arch (Fixture *f, gconstpointer data)
{
  g_autofree char *id = write_gate (f->gate, TRUE, TRUE, f->key);
  g_autofree char *amd64 = g_build_filename (f->gate, "amd64", "manifest.json", NULL);
  g_autofree char *arm64 = g_build_filename (f->gate, "arm64", "manifest.json", NULL);
  g_autofree char *text = NULL;
  g_autoptr (AirlockBundleSetReport) r = NULL;
  g_autoptr (GError) error = NULL;
  gsize len;

  g_file_get_contents (amd64, &text, &len, &error);
  g_assert_no_error (error);
  g_assert_cmpint (g_unlink (arm64), ==, 0);
  g_file_set_contents (arm64, text, (gssize) len, &error);
  g_assert_no_error (error);
  r = airlock_bundle_set_verify (f->gate, f->key);
  assert_problem (r, "arm64/manifest.json", "is the bundle of arch 'amd64', under arm64/");
  assert_problem (r, "arm64/manifest.json", "the bundle was replaced or rewritten after the gate");
}

/* Two gates of the same image: one's arm64 bundle in the other's set. */
static void
test_set_two_gates_mixed (Fixture *f, gconstpointer data)
{
  g_autofree char *other = g_build_filename (f->root, "other", NULL);
  g_autofree char *id = write_gate (f->gate, TRUE, TRUE, f->key);
  g_autofree char *other_id = NULL;
  g_autofree char *arm64 = g_build_filename (f->gate, "arm64", NULL);
  g_autofree char *other_arm64 = g_build_filename (other, "arm64", NULL);
  g_autofree char *want = NULL;
  g_autoptr (AirlockBundleSetReport) r = NULL;

  g_assert_cmpint (g_mkdir (other, 0755), ==, 0);
  other_id = write_gate (other, TRUE, TRUE, f->key);
  g_assert_cmpstr (id, !=, other_id);
  airlock_rm_rf (arm64);
  rename_or_fail (other_arm64, arm64);
  r = airlock_bundle_set_verify (f->gate, f->key);
  want = g_strdup_printf ("belongs to gate %s; the set is gate %s", other_id, id);
  assert_problem (r, "arm64/manifest.json", want);
  assert_problem (r, "arm64/manifest.json", "the bundle was replaced or rewritten after the gate");
}

/* A bundle of another image, even of the same gate id. */
static void
test_set_other_image (Fixture *f, gconstpointer data)
{
  g_autofree char *id = write_gate (f->gate, TRUE, TRUE, f->key);
  g_autoptr (AirlockBundleSetReport) r = NULL;
  g_autofree char *arm64 = g_build_filename (f->gate, "arm64", NULL);

  airlock_rm_rf (arm64);
  write_bundle (f->gate, "arm64", id, REF_A, INDEX_B);
  r = airlock_bundle_set_verify (f->gate, f->key);
  assert_problem (r, "arm64/manifest.json", "a bundle of another image");
}

/* A bundle of a single run (no gate id) put into a set. */
static void
test_set_bundle_without_gate (Fixture *f, gconstpointer data)
{
  g_autofree char *id = write_gate (f->gate, TRUE, TRUE, f->key);
  g_autoptr (AirlockBundleSetReport) r = NULL;
  g_autofree char *arm64 = g_build_filename (f->gate, "arm64", NULL);

  airlock_rm_rf (arm64);
  write_bundle (f->gate, "arm64", NULL, REF_A, INDEX_A);
  r = airlock_bundle_set_verify (f->gate, f->key);
  assert_problem (r, "arm64/manifest.json", "names no gate");
}

/* The record edited to drop arm64 (and arm64/ deleted): the HMAC says so;
 * without the key, the edit is only as good as an attacker's. */
static void
test_set_record_tampered (Fixture *f, gconstpointer data)
{
  g_autofree char *id = write_gate (f->gate, TRUE, TRUE, f->key);
  g_autofree char *path = g_build_filename (f->gate, AIRLOCK_BUNDLE_SET_FILE, NULL);
  g_autofree char *arm64 = g_build_filename (f->gate, "arm64", NULL);
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  g_autoptr (AirlockBundleSetReport) r = NULL;
  g_autoptr (GError) error = NULL;
  JsonObject *o;

  json_parser_load_from_file (parser, path, &error);
  g_assert_no_error (error);
  o = json_node_get_object (json_parser_get_root (parser));
  json_array_remove_element (json_object_get_array_member (o, "arches"), 1);
  json_object_remove_member (json_object_get_object_member (o, "bundles"), "arm64");
  json_generator_set_root (gen, json_parser_get_root (parser));
  json_generator_set_pretty (gen, TRUE);
  g_assert_cmpint (g_unlink (path), ==, 0);
  json_generator_to_file (gen, path, &error);
  g_assert_no_error (error);
  airlock_rm_rf (arm64);

  r = airlock_bundle_set_verify (f->gate, f->key);
  assert_problem (r, AIRLOCK_BUNDLE_SET_HMAC, "does not match set.json under the key given");
  g_assert_false (r->hmac_checked);
}

static void
test_set_record_unsigned (Fixture *f, gconstpointer data)
{
  g_autofree char *id = write_gate (f->gate, TRUE, TRUE, f->key);
  g_autofree char *hmac = g_build_filename (f->gate, AIRLOCK_BUNDLE_SET_HMAC, NULL);
  g_autoptr (AirlockBundleSetReport) r = NULL;

  g_assert_cmpint (g_unlink (hmac), ==, 0);
  r = airlock_bundle_set_verify (f->gate, f->key);
  assert_problem (r, AIRLOCK_BUNDLE_SET_HMAC, "is missing: the set record is not signed");
}

/* Without a key the record still binds each bundle by digest: a bundle
 * changed after the gate shows even when set.json is unsigned. */
static void
test_set_record_names_each_manifest (Fixture *f, gconstpointer data)
{
  g_autofree char *id = write_gate (f->gate, TRUE, TRUE, NULL);
  g_autofree char *arm64 = g_build_filename (f->gate, "arm64", "manifest.json", NULL);
  g_autoptr (AirlockBundleSetReport) r = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree char *text = NULL;

  g_file_get_contents (arm64, &text, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (g_unlink (arm64), ==, 0);
  /* Same gate, arch and image: only the digest can tell. */
  g_file_set_contents (arm64, text, (gssize) strlen (text) - 1, &error);
  g_assert_no_error (error);
  r = airlock_bundle_set_verify (f->gate, NULL);
  assert_problem (r, "arm64/manifest.json", "the bundle was replaced or rewritten after the gate");
  g_assert_cmpuint (r->problems->len, ==, 1);
  g_assert_false (r->hmac_present);
}

static void
test_set_record_missing (Fixture *f, gconstpointer data)
{
  g_autofree char *id = write_gate (f->gate, TRUE, TRUE, f->key);
  g_autofree char *path = g_build_filename (f->gate, AIRLOCK_BUNDLE_SET_FILE, NULL);
  g_autoptr (AirlockBundleSetReport) r = NULL;

  g_assert_cmpint (g_unlink (path), ==, 0);
  r = airlock_bundle_set_verify (f->gate, f->key);
  assert_problem (r, AIRLOCK_BUNDLE_SET_FILE, "is missing: without the set record");
  /* The bundles are still each reported. */
  g_assert_nonnull (r->bundles[AIRLOCK_ARCH_AMD64]);
  g_assert_nonnull (r->bundles[AIRLOCK_ARCH_ARM64]);
}

/* A record no gate writes: too large to read, or not JSON. */
static void
test_set_record_oversized (Fixture *f, gconstpointer data)
{
  g_autofree char *id = write_gate (f->gate, TRUE, FALSE, NULL);
  g_autofree char *path = g_build_filename (f->gate, AIRLOCK_BUNDLE_SET_FILE, NULL);
  g_autofree char *deep = g_strnfill (1 << 20, '[');
  g_autoptr (AirlockBundleSetReport) big = NULL;
  g_autoptr (AirlockBundleSetReport) bad = NULL;
  g_autoptr (GError) error = NULL;

  g_assert_cmpint (g_unlink (path), ==, 0);
  g_file_set_contents (path, deep, -1, &error);
  g_assert_no_error (error);
  big = airlock_bundle_set_verify (f->gate, NULL);
  assert_problem (big, AIRLOCK_BUNDLE_SET_FILE, "is too large to be one");
  g_assert_cmpint (g_unlink (path), ==, 0);
  g_file_set_contents (path, "{\"set\": ", -1, &error);
  g_assert_no_error (error);
  bad = airlock_bundle_set_verify (f->gate, NULL);
  assert_problem (bad, AIRLOCK_BUNDLE_SET_FILE, "is not valid JSON");
}

/* An amd64-only gate with an arm64 bundle added beside it. */
static void
test_set_extra_bundle (Fixture *f, gconstpointer data)
{
  g_autofree char *id = write_gate (f->gate, TRUE, FALSE, f->key);
  g_autoptr (AirlockBundleSetReport) r = NULL;

  write_bundle (f->gate, "arm64", id, REF_A, INDEX_A);
  r = airlock_bundle_set_verify (f->gate, f->key);
  assert_problem (r, "arm64", "is not part of the set (set.json names only amd64)");
  g_assert_cmpuint (r->problems->len, ==, 1);
}

/* The record is written once: a second gate into the directory fails. */
static void
test_set_never_overwritten (Fixture *f, gconstpointer data)
{
  g_autofree char *id = write_gate (f->gate, TRUE, FALSE, NULL);
  gboolean arches[AIRLOCK_N_ARCHES] = { TRUE, FALSE };
  AirlockBundleSetInput in = { .gate_id = id, .arches = arches };
  g_autoptr (GError) error = NULL;

  g_assert_false (airlock_bundle_set_write (f->gate, &in, &error));
  g_assert_error (error, AIRLOCK_BUNDLE_ERROR, AIRLOCK_BUNDLE_ERROR_EXISTS);
}

static void
test_set_ids_differ (void)
{
  g_autofree char *a = airlock_bundle_set_new_id ();
  g_autofree char *b = airlock_bundle_set_new_id ();

  g_assert_cmpuint (strlen (a), ==, 32);
  g_assert_cmpstr (a, !=, b);
}

#define ADD(path, fn) g_test_add (path, Fixture, NULL, fixture_setup, fn, fixture_teardown)

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/bundle/key/one-length-rule", test_key_rule);
  ADD ("/bundle/key/six-bytes-refused-everywhere", test_key_six_bytes_refused_everywhere);
  g_test_add_func ("/bundle/set/ids-differ", test_set_ids_differ);
  ADD ("/bundle/set/whole-set-verifies", test_set_whole_verifies);
  ADD ("/bundle/set/one-arch-gate-verifies", test_set_one_arch_verifies);
  ADD ("/bundle/set/missing-arch-fails", test_set_missing_arch);
  ADD ("/bundle/set/unfinished-arch-fails", test_set_unfinished_arch);
  ADD ("/bundle/set/swapped-arch-fails", test_set_swapped_arch);
  ADD ("/bundle/set/two-gates-mixed-fail", test_set_two_gates_mixed);
  ADD ("/bundle/set/other-image-fails", test_set_other_image);
  ADD ("/bundle/set/bundle-without-gate-fails", test_set_bundle_without_gate);
  ADD ("/bundle/set/record-tampered-fails", test_set_record_tampered);
  ADD ("/bundle/set/record-unsigned-fails-with-key", test_set_record_unsigned);
  ADD ("/bundle/set/record-names-each-manifest", test_set_record_names_each_manifest);
  ADD ("/bundle/set/record-missing-fails", test_set_record_missing);
  ADD ("/bundle/set/record-oversized-or-broken-fails", test_set_record_oversized);
  ADD ("/bundle/set/extra-bundle-fails", test_set_extra_bundle);
  ADD ("/bundle/set/never-overwritten", test_set_never_overwritten);
  return g_test_run ();
}
