/* lib/bundle without a VM: the one key-length rule, and a gate's bundles
 * verified as one set (bundle-set.c).
 *
 * Every fixture is the writers' own output: each bundle is written by
 * airlock_bundle_create()/_record()/_finish_run() from an evidence stream
 * made with guest/wire.h (the guest's own encoder) and replayed through a
 * real channel, so it verifies whole; the set record is what
 * airlock_bundle_set_write() writes over them. */
#include "config.h"

#include "bundle/bundle.h"
#include "bundle/bundle-json-private.h"
#include "record/run-record.h"
#include "evidence/channel.h"
#include "fsutil-private.h"
#include "gate/verdict.h"
#include "policy/policy.h"

#include "wire.h"

#include <glib/gstdio.h>
#include <string.h>

#define INDEX_A "sha256:1111111111111111111111111111111111111111111111111111111111111111"
#define INDEX_B "sha256:2222222222222222222222222222222222222222222222222222222222222222"
#define REF_A "oci-archive:release.tar"
#define HEARTBEAT_MS 1000
#define TOLERANCE_MS 3000
#define T0 1000000
#define REAL0 1700000000000000

static const guint8 test_nonce[AIRLOCK_NONCE_LEN] = {
  0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff,
  0x0f, 0x1e, 0x2d, 0x3c, 0x4b, 0x5a, 0x69, 0x78, 0x87, 0x96, 0xa5, 0xb4, 0xc3, 0xd2, 0xe1, 0xf0,
};

/* A guest's whole stream: hello, one heartbeat, a trailer that counts
 * them, as @arch's supervisor would send it. */
static GByteArray *
guest_stream (AirlockArch arch)
{
  static const guint8 build_id[20] = { 0xde, 0xad, 0xbe, 0xef };
  GByteArray *bytes = g_byte_array_new ();
  struct wire_frame f;
  size_t n;

  wire_begin (&f, AIRLOCK_FRAME_HELLO, 0);
  wire_put (&f, AIRLOCK_TLV_NONCE, test_nonce, AIRLOCK_NONCE_LEN);
  wire_put_str (&f, AIRLOCK_TLV_ARCH, arch == AIRLOCK_ARCH_AMD64 ? "x86_64" : "aarch64");
  wire_put_str (&f, AIRLOCK_TLV_KERNEL_RELEASE, "6.1.0-airlock");
  wire_put (&f, AIRLOCK_TLV_BUILD_ID, build_id, sizeof build_id);
  wire_put_u64 (&f, AIRLOCK_TLV_UPTIME_NS, 123456789);
  wire_put_u32 (&f, AIRLOCK_TLV_SECOND_OPEN_ERRNO, 16 /* EBUSY */);
  n = wire_end (&f);
  g_byte_array_append (bytes, f.bytes, (guint) n);

  wire_begin (&f, AIRLOCK_FRAME_HEARTBEAT, 1);
  wire_put_u64 (&f, AIRLOCK_TLV_UPTIME_NS, 1000000000ull);
  n = wire_end (&f);
  g_byte_array_append (bytes, f.bytes, (guint) n);

  wire_begin (&f, AIRLOCK_FRAME_TRAILER, 2);
  wire_put_u64 (&f, AIRLOCK_TLV_FRAME_COUNT, 2);
  wire_put_u64 (&f, AIRLOCK_TLV_HEARTBEAT_COUNT, 1);
  wire_put_u64 (&f, AIRLOCK_TLV_EVENT_COUNT, 0);
  wire_put_u32 (&f, AIRLOCK_TLV_EXIT_STATUS, 0);
  wire_put_u32 (&f, AIRLOCK_TLV_END_REASON, AIRLOCK_END_COMPLETED);
  n = wire_end (&f);
  g_byte_array_append (bytes, f.bytes, (guint) n);
  return bytes;
}

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

/* DIR/ARCH/: a finished bundle of @gate_id (NULL: a run of its own) for
 * the image (@reference, @index), written by the bundle writer from a
 * guest stream fed through a real channel, unsigned without @key. */
static void
write_bundle_keyed (const char *dir, const char *arch_name, const char *gate_id,
                    const char *reference, const char *index, GBytes *key)
{
  g_autofree char *sub = g_build_filename (dir, arch_name, NULL);
  g_autoptr (AirlockChannel) channel = airlock_channel_new (test_nonce, HEARTBEAT_MS, TOLERANCE_MS);
  g_autoptr (AirlockEventLog) log = airlock_event_log_new ();
  g_autoptr (AirlockPolicy) policy = airlock_policy_new_default ();
  g_autoptr (AirlockVerdict) verdict = NULL;
  g_autoptr (AirlockBundle) bundle = NULL;
  g_autoptr (GByteArray) stream = NULL;
  g_autoptr (GError) error = NULL;
  AirlockImage image = { 0 };
  AirlockArch arch;
  AirlockBundleInput in = { 0 };
  g_autoptr (AirlockRunRecord) record = NULL;
  AirlockRunRecordInput run = {
    .complete = TRUE,
    .log = log,
    .pcap_error = "the run had no NIC",
    .timeout_ms = 30000,
    .channel = channel,
    .accel = "tcg",
    .uri = "qemu:///embed",
    .domain_name = "airlock-test",
    .qemu_version = "7.2.0",
    .libvirt_version = "9.0.0",
    .heartbeat_ms = HEARTBEAT_MS,
    .heartbeat_tolerance_ms = TOLERANCE_MS,
  };

  g_assert_true (airlock_arch_from_string (arch_name, &arch));
  stream = guest_stream (arch);
  bundle = airlock_bundle_create (sub, &error);
  g_assert_no_error (error);
  /* As the VM does: every byte to the bundle as it arrives, then to the
   * channel. */
  airlock_bundle_record (AIRLOCK_VM_RECORD_EVIDENCE, stream->data, stream->len, bundle);
  airlock_channel_feed (channel, stream->data, stream->len, T0, REAL0);
  airlock_channel_close (channel, T0);
  g_assert_cmpint (airlock_channel_get_state (channel), ==, AIRLOCK_CHANNEL_COMPLETE);

  image.reference = (char *) reference;
  image.arch = arch;
  image.platform = (char *) (arch == AIRLOCK_ARCH_AMD64 ? "linux/amd64" : "linux/arm64/v8");
  image.index_digest = (char *) index;
  image.manifest_digest = (char *) (arch == AIRLOCK_ARCH_AMD64
                                    ? "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
                                    : "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb");
  image.config_digest = (char *) "sha256:cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc";
  image.layers = g_ptr_array_new ();
  /* What verify recomputes from the files: no NIC, so no capture. */
  run.arch = arch;
  run.trailer = airlock_channel_get_trailer (channel);
  run.guest_log = airlock_channel_get_log (channel);
  record = airlock_run_record_new (&run);
  verdict = airlock_verdict_compute (record, policy);
  in.arch = arch;
  in.case_name = "set";
  in.image = &image;
  in.timeout_ms = 30000;
  in.policy = policy;
  in.verdict = verdict;
  in.key = key;
  in.gate_id = gate_id;
  in.record = record;
  in.started_real_us = REAL0;
  in.finished_real_us = REAL0 + 2 * G_USEC_PER_SEC;
  g_assert_true (airlock_bundle_finish (bundle, &in, &error));
  g_assert_no_error (error);
  g_ptr_array_unref (image.layers);
}

static void
write_bundle (const char *dir, const char *arch, const char *gate_id, const char *reference,
              const char *index)
{
  write_bundle_keyed (dir, arch, gate_id, reference, index, NULL);
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
    write_bundle_keyed (dir, "amd64", id, REF_A, INDEX_A, key);
  if (arm64)
    write_bundle_keyed (dir, "arm64", id, REF_A, INDEX_A, key);
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
assert_no_problems (GPtrArray *problems)
{
  for (guint i = 0; i < problems->len; i++)
    {
      const AirlockBundleProblem *p = problems->pdata[i];

      g_test_message ("problem: %s: %s", p->file ? p->file : "(none)", p->message);
    }
  g_assert_cmpuint (problems->len, ==, 0);
}

/* The set and every bundle in it verify. */
static void
assert_no_problem (AirlockBundleSetReport *r)
{
  assert_no_problems (r->problems);
  for (unsigned a = 0; a < AIRLOCK_N_ARCHES; a++)
    if (r->asked[a])
      {
        g_assert_nonnull (r->bundles[a]);
        assert_no_problems (r->bundles[a]->problems);
      }
}

/* cp DIR/FROM DIR/TO for a bundle (a flat directory of files). */
static void
copy_bundle (const char *dir, const char *from, const char *to)
{
  g_autofree char *src = g_build_filename (dir, from, NULL);
  g_autofree char *dst = g_build_filename (dir, to, NULL);
  g_autoptr (GDir) d = g_dir_open (src, 0, NULL);
  const char *name;

  g_assert_nonnull (d);
  g_assert_cmpint (g_mkdir (dst, 0755), ==, 0);
  while ((name = g_dir_read_name (d)))
    {
      g_autofree char *a = g_build_filename (src, name, NULL);
      g_autofree char *b = g_build_filename (dst, name, NULL);
      g_autofree char *data = NULL;
      g_autoptr (GError) error = NULL;
      gsize len;

      g_file_get_contents (a, &data, &len, &error);
      g_assert_no_error (error);
      g_file_set_contents (b, data, (gssize) len, &error);
      g_assert_no_error (error);
    }
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
  /* Each bundle went through its own verification too, HMAC and all. */
  g_assert_true (r->bundles[AIRLOCK_ARCH_AMD64]->hmac_checked);
  g_assert_true (r->bundles[AIRLOCK_ARCH_ARM64]->hmac_checked);
  g_assert_cmpstr (r->bundles[AIRLOCK_ARCH_ARM64]->gate_id, ==, id);

  /* Without a key: consistent, signature present but not checked. */
  assert_no_problem (unkeyed);
  g_assert_false (unkeyed->hmac_checked);
  g_assert_true (unkeyed->hmac_present);
}

static void
test_set_one_arch_verifies (Fixture *f, gconstpointer data)
{
  g_autofree char *id G_GNUC_UNUSED = write_gate (f->gate, TRUE, FALSE, f->key);
  g_autoptr (AirlockBundleSetReport) r = airlock_bundle_set_verify (f->gate, f->key);

  assert_no_problem (r);
  g_assert_true (r->asked[AIRLOCK_ARCH_AMD64]);
  g_assert_false (r->asked[AIRLOCK_ARCH_ARM64]);
}

/* Finding 5: a directory holding only amd64/ verified. */
static void
test_set_missing_arch (Fixture *f, gconstpointer data)
{
  g_autofree char *id G_GNUC_UNUSED = write_gate (f->gate, TRUE, TRUE, f->key);
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
  g_autofree char *id G_GNUC_UNUSED = write_gate (f->gate, TRUE, TRUE, f->key);
  g_autofree char *arm64 = g_build_filename (f->gate, "arm64", NULL);
  g_autoptr (AirlockBundleSetReport) r = NULL;

  airlock_rm_rf (arm64);
  copy_bundle (f->gate, "amd64", "arm64");
  r = airlock_bundle_set_verify (f->gate, f->key);
  /* Alone, the copy verifies: only the set can tell. */
  assert_no_problems (r->bundles[AIRLOCK_ARCH_ARM64]->problems);
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
  g_autofree char *id G_GNUC_UNUSED = write_gate (f->gate, TRUE, TRUE, f->key);
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
  g_autofree char *id G_GNUC_UNUSED = write_gate (f->gate, TRUE, TRUE, f->key);
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
  g_autofree char *id G_GNUC_UNUSED = write_gate (f->gate, TRUE, TRUE, f->key);
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
  g_autofree char *id G_GNUC_UNUSED = write_gate (f->gate, TRUE, TRUE, NULL);
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
  g_autofree char *id G_GNUC_UNUSED = write_gate (f->gate, TRUE, TRUE, f->key);
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
  g_autofree char *id G_GNUC_UNUSED = write_gate (f->gate, TRUE, FALSE, NULL);
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
