/* lib/bundle without a VM: the one key-length rule, a gate's bundles
 * verified as one set (bundle-set.c), and the sinkhole's records as a file
 * of the bundle (network.jsonl: written as the process wrote it, held
 * against the capture by verify, shown in summary.md and the statement).
 *
 * Every fixture is the writers' own output: each bundle is written by
 * airlock_bundle_create()/_record()/_finish_run() from an evidence stream
 * made with guest/wire.h (the guest's own encoder) and replayed through a
 * real channel, so it verifies whole; the set record is what
 * airlock_bundle_set_write() writes over them. */
#include "config.h"

#include "bundle/bundle.h"
#include "json-util-private.h"
#include "bundle/bundle-network.h"
#include "record/run-record.h"
#include "evidence/channel.h"
#include "fsutil-private.h"
#include "gate/verdict.h"
#include "policy/policy.h"
#include "bundle/bundle-read.h"
#include "bundle/policy-suggest.h"

#include "wire.h"

#include <glib/gstdio.h>
#include <sys/stat.h>
#include <string.h>

#include "network-run.h"

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
 * them, as @arch's supervisor would send it; @lost: no trailer, as when
 * the run's host went away mid-run. */
static GByteArray *
guest_stream (AirlockArch arch, gboolean lost)
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
  if (lost)
    return bytes;

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

/* DIR/NAME/: a finished bundle of @arch_name's run, of @gate_id (NULL: a
 * run of its own) for the image (@reference, @index), written by the
 * bundle writer from a guest stream fed through a real channel, unsigned
 * without @key; @lost: a run whose host was lost before the trailer
 * (inconclusive). */
static void
write_bundle_as (const char *dir, const char *name, const char *arch_name, gboolean lost,
                 const char *gate_id, const char *reference, const char *index, GBytes *key)
{
  g_autofree char *sub = g_build_filename (dir, name, NULL);
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
  stream = guest_stream (arch, lost);
  bundle = airlock_bundle_create (sub, &error);
  g_assert_no_error (error);
  /* As the VM does: every byte to the bundle as it arrives, then to the
   * channel. */
  airlock_bundle_record (AIRLOCK_VM_RECORD_EVIDENCE, stream->data, stream->len, bundle);
  airlock_channel_feed (channel, stream->data, stream->len, T0, REAL0);
  airlock_channel_close (channel, T0);
  g_assert_cmpint (airlock_channel_get_state (channel) == AIRLOCK_CHANNEL_COMPLETE, ==, !lost);
  if (lost)
    {
      run.complete = FALSE;
      run.incomplete_reason = "the connection to libvirt 'qemu+ssh://h/system' was lost before "
                              "the trailer";
    }

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
write_bundle_keyed (const char *dir, const char *arch_name, const char *gate_id,
                    const char *reference, const char *index, GBytes *key)
{
  write_bundle_as (dir, arch_name, arch_name, FALSE, gate_id, reference, index, key);
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

/* A run whose pool host was lost mid-run and that ran again elsewhere
 * (lib/case/run.c): its first attempt, inconclusive, in amd64.attempt-1/
 * beside amd64/.  The set names it and verifies both; unnamed or of
 * another gate, it fails the set (one that is not inconclusive:
 * tests/vm/remote.sh, which has a passing bundle to put there). */
static char *
write_gate_with_attempt (const char *dir, const char *attempt_gate, GBytes *key)
{
  char *id = airlock_bundle_set_new_id ();
  gboolean arches[AIRLOCK_N_ARCHES] = { TRUE, FALSE };
  AirlockBundleSetInput in = {
    .gate_id = id, .arches = arches, .reference = REF_A, .index_digest = INDEX_A, .key = key,
  };
  g_autoptr (GError) error = NULL;

  write_bundle_as (dir, "amd64" AIRLOCK_BUNDLE_ATTEMPT_SUFFIX, "amd64", TRUE,
                   attempt_gate ? attempt_gate : id, REF_A, INDEX_A, key);
  write_bundle_keyed (dir, "amd64", id, REF_A, INDEX_A, key);
  g_assert_true (airlock_bundle_set_write (dir, &in, &error));
  g_assert_no_error (error);
  return id;
}

static void
test_set_lost_attempt_verifies (Fixture *f, gconstpointer data)
{
  g_autofree char *id = write_gate_with_attempt (f->gate, NULL, f->key);
  g_autoptr (AirlockBundleSetReport) r = airlock_bundle_set_verify (f->gate, f->key);

  assert_no_problem (r);
  g_assert_nonnull (r->attempts[AIRLOCK_ARCH_AMD64]);
  g_assert_null (r->attempts[AIRLOCK_ARCH_ARM64]);
  g_assert_cmpstr (r->attempts[AIRLOCK_ARCH_AMD64]->verdict, ==, "inconclusive");
  g_assert_cmpstr (r->attempts[AIRLOCK_ARCH_AMD64]->gate_id, ==, id);
  g_assert_true (r->attempts[AIRLOCK_ARCH_AMD64]->hmac_checked);
}

static void
test_set_unnamed_attempt_fails (Fixture *f, gconstpointer data)
{
  g_autofree char *id = write_gate (f->gate, TRUE, FALSE, f->key);
  g_autoptr (AirlockBundleSetReport) r = NULL;

  /* Put there after the set was written: the set does not name it. */
  write_bundle_as (f->gate, "amd64" AIRLOCK_BUNDLE_ATTEMPT_SUFFIX, "amd64", TRUE, id, REF_A,
                   INDEX_A, f->key);
  r = airlock_bundle_set_verify (f->gate, f->key);
  assert_problem (r, "amd64.attempt-1", "is not part of the set");
  g_assert_null (r->attempts[AIRLOCK_ARCH_AMD64]);
}

static void
test_set_attempt_of_another_gate_fails (Fixture *f, gconstpointer data)
{
  g_autofree char *other = airlock_bundle_set_new_id ();
  g_autofree char *id = write_gate_with_attempt (f->gate, other, f->key);
  g_autofree char *want = g_strdup_printf ("belongs to gate %s; the set is gate %s", other, id);
  g_autoptr (AirlockBundleSetReport) r = airlock_bundle_set_verify (f->gate, f->key);

  assert_problem (r, "amd64.attempt-1/manifest.json", want);
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
  assert_problem (big, AIRLOCK_BUNDLE_SET_FILE, "bytes, over the 16384 verify reads");
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

/* What a set's problems quote, the names in its directory and set.json's
 * values, is whoever made the set's bytes: printed by `airlock verify`,
 * none may reach a terminal as a control character (a title set, the
 * screen cleared, the cursor moved over the NOT VERIFIED line). */
static void
test_set_problems_escaped (Fixture *f, gconstpointer data)
{
  g_autofree char *id G_GNUC_UNUSED = write_gate (f->gate, TRUE, FALSE, f->key);
  g_autofree char *extra = g_build_filename (f->gate, "notes\x1b]0;pwned\x07", NULL);
  g_autofree char *path = g_build_filename (f->gate, AIRLOCK_BUNDLE_SET_FILE, NULL);
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  g_autoptr (AirlockBundleSetReport) r = NULL;
  g_autoptr (GError) error = NULL;
  gboolean saw_entry = FALSE, saw_reference = FALSE;

  g_file_set_contents (extra, "x", 1, &error);
  g_assert_no_error (error);
  json_parser_load_from_file (parser, path, &error);
  g_assert_no_error (error);
  json_object_set_string_member (json_object_get_object_member (
                                   json_node_get_object (json_parser_get_root (parser)), "image"),
                                 "reference", "oci-archive:x\x1b[2J.tar");
  json_generator_set_root (gen, json_parser_get_root (parser));
  g_assert_cmpint (g_unlink (path), ==, 0);
  json_generator_to_file (gen, path, &error);
  g_assert_no_error (error);

  r = airlock_bundle_set_verify (f->gate, NULL);
  g_assert_cmpuint (r->problems->len, >=, 2);
  for (guint i = 0; i < r->problems->len; i++)
    {
      const AirlockBundleProblem *p = r->problems->pdata[i];

      g_test_message ("problem: %s: %s", p->file ? p->file : "(none)", p->message);
      for (const char *c = p->message; *c; c++)
        g_assert_false (g_ascii_iscntrl (*c));
      for (const char *c = p->file ? p->file : ""; *c; c++)
        g_assert_false (g_ascii_iscntrl (*c));
      saw_entry |= p->file && g_str_has_prefix (p->file, "notes")
                   && strstr (p->message, "is not part of the set") != NULL;
      saw_reference |= strstr (p->message, "oci-archive:x") != NULL
                       && strstr (p->message, "a bundle of another image") != NULL;
    }
  g_assert_true (saw_entry);
  g_assert_true (saw_reference);
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

/* ---- the sinkhole's records (network.jsonl) ---- */

static void
feed_event (AirlockChannel *channel, const AirlockFrame *frame, gpointer user_data)
{
  g_autoptr (GError) error = NULL;

  if (frame->type == AIRLOCK_FRAME_EVENT)
    g_assert_true (airlock_event_log_add_frame (user_data, frame, &error));
  g_assert_no_error (error);
}

/* DIR: the bundle of the egress sample's run on the sinkhole network (the
 * capture @pcap, the record file @records; NULL: a run on the network
 * before the sinkhole, with a capture and no records — or, with
 * @sinkhole_error, one whose sinkhole lost them), signed with @key when
 * given. */
static void
write_network_bundle_policy (const char *dir, GBytes *pcap, GBytes *records,
                             const char *sinkhole_error, GBytes *key, const char *policy_text)
{
  g_autoptr (AirlockChannel) channel = airlock_channel_new (test_nonce, HEARTBEAT_MS, TOLERANCE_MS);
  g_autoptr (AirlockEventLog) log = airlock_event_log_new ();
  g_autoptr (AirlockPolicy) policy = policy_text
    ? airlock_policy_parse (policy_text, strlen (policy_text), "policy", NULL)
    : airlock_policy_new_default ();
  g_autoptr (AirlockVerdict) verdict = NULL;
  g_autoptr (AirlockBundle) bundle = NULL;
  g_autoptr (GByteArray) stream = network_run_guest_stream (test_nonce);
  g_autoptr (GError) error = NULL;
  g_autoptr (AirlockRunRecord) record = NULL;
  AirlockImage image = { 0 };
  AirlockBundleInput in = { 0 };
  AirlockRunRecordInput run = {
    .arch = AIRLOCK_ARCH_AMD64,
    .complete = TRUE,
    .log = log,
    .pcap = pcap,
    .sinkhole_records = records,
    .sinkhole_error = sinkhole_error,
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

  g_assert_nonnull (policy);
  bundle = airlock_bundle_create (dir, &error);
  g_assert_no_error (error);
  airlock_channel_set_frame_func (channel, feed_event, log);
  airlock_bundle_record (AIRLOCK_VM_RECORD_EVIDENCE, stream->data, stream->len, bundle);
  airlock_channel_feed (channel, stream->data, stream->len, T0, REAL0);
  airlock_channel_close (channel, T0);
  if (airlock_channel_get_state (channel) != AIRLOCK_CHANNEL_COMPLETE)
    g_error ("the stream does not replay: %s", airlock_channel_get_reason (channel));

  image.reference = (char *) REF_A;
  image.arch = AIRLOCK_ARCH_AMD64;
  image.platform = (char *) "linux/amd64";
  image.index_digest = (char *) INDEX_A;
  image.manifest_digest = (char *) "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
  image.config_digest = (char *) "sha256:cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc";
  image.layers = g_ptr_array_new ();
  run.trailer = airlock_channel_get_trailer (channel);
  run.guest_log = airlock_channel_get_log (channel);
  record = airlock_run_record_new (&run);
  g_assert_true (records == NULL || record->sinkhole != NULL);
  verdict = airlock_verdict_compute (record, policy);
  in.arch = AIRLOCK_ARCH_AMD64;
  in.case_name = "network";
  in.image = &image;
  in.timeout_ms = 30000;
  in.policy = policy;
  in.verdict = verdict;
  in.key = key;
  in.record = record;
  in.started_real_us = REAL0;
  in.finished_real_us = REAL0 + 2 * G_USEC_PER_SEC;
  g_assert_true (airlock_bundle_finish (bundle, &in, &error));
  g_assert_no_error (error);
  g_ptr_array_unref (image.layers);
}

static void
write_network_bundle_full (const char *dir, GBytes *pcap, GBytes *records,
                           const char *sinkhole_error, GBytes *key)
{
  write_network_bundle_policy (dir, pcap, records, sinkhole_error, key, NULL);
}

static void
write_network_bundle (const char *dir, GBytes *pcap, GBytes *records, GBytes *key)
{
  write_network_bundle_full (dir, pcap, records, NULL, key);
}

/* The egress run's bundle at root/net. */
static char *
write_egress_bundle (Fixture *f, GBytes *key)
{
  char *dir = g_build_filename (f->root, "net", NULL);
  NetworkRun n;
  g_autoptr (GBytes) pcap = NULL;
  g_autoptr (GBytes) records = NULL;

  network_run_init (&n);
  network_run_egress (&n);
  pcap = network_run_pcap (&n);
  records = network_run_records (&n);
  network_run_clear (&n);
  write_network_bundle (dir, pcap, records, key);
  return dir;
}

static char *
read_text (const char *dir, const char *name)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);
  g_autoptr (GError) error = NULL;
  char *text = NULL;

  g_file_get_contents (path, &text, NULL, &error);
  g_assert_no_error (error);
  return text;
}

static void
write_text (const char *dir, const char *name, const char *text)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);
  g_autoptr (GError) error = NULL;

  g_unlink (path);
  g_file_set_contents (path, text, -1, &error);
  g_assert_no_error (error);
}

/* What an attacker without the key can do after changing @name: the
 * manifest's digest and size of it made to match, the HMAC dropped. */
static void
refresh_manifest (const char *dir, const char *name)
{
  g_autofree char *manifest_path = g_build_filename (dir, "manifest.json", NULL);
  g_autofree char *hmac_path = g_build_filename (dir, "manifest.hmac", NULL);
  g_autofree char *file_path = g_build_filename (dir, name, NULL);
  g_autofree char *data = NULL;
  g_autofree char *sha = NULL;
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  g_autoptr (GError) error = NULL;
  JsonObject *entry;
  gsize len;

  g_file_get_contents (file_path, &data, &len, &error);
  g_assert_no_error (error);
  sha = g_compute_checksum_for_data (G_CHECKSUM_SHA256, (const guchar *) data, len);
  json_parser_load_from_file (parser, manifest_path, &error);
  g_assert_no_error (error);
  entry = json_object_get_object_member (
      json_object_get_object_member (json_node_get_object (json_parser_get_root (parser)), "files"),
      name);
  json_object_set_string_member (entry, "sha256", sha);
  json_object_set_int_member (entry, "size", (gint64) len);
  json_generator_set_root (gen, json_parser_get_root (parser));
  json_generator_set_pretty (gen, TRUE);
  g_unlink (manifest_path);
  json_generator_to_file (gen, manifest_path, &error);
  g_assert_no_error (error);
  g_unlink (hmac_path);
}

/* The bundle's problem naming @file whose message holds @needle, or fails. */
static void
assert_bundle_problem (AirlockBundleReport *r, const char *file, const char *needle)
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

/* The run's records are a file of the bundle, byte for byte as the
 * process wrote them, under the manifest and its HMAC; the bundle
 * verifies; summary.md and the statement say what the sinkhole saw. */
static void
test_network_bundle_verifies (Fixture *f, gconstpointer data)
{
  g_autofree char *dir = write_egress_bundle (f, f->key);
  g_autoptr (AirlockBundleReport) r = airlock_bundle_verify (dir, f->key);
  g_autofree char *records = read_text (dir, AIRLOCK_BUNDLE_NETWORK_FILE);
  g_autofree char *manifest = read_text (dir, "manifest.json");
  g_autofree char *summary = read_text (dir, "summary.md");
  g_autofree char *statement = read_text (dir, "attestation.intoto.json");
  g_autofree char *sha = g_compute_checksum_for_string (G_CHECKSUM_SHA256, records, -1);
  g_autoptr (GBytes) wanted = NULL;
  NetworkRun n;

  assert_no_problems (r->problems);
  g_assert_true (r->hmac_checked);
  network_run_init (&n);
  network_run_egress (&n);
  wanted = network_run_records (&n);
  network_run_clear (&n);
  g_assert_cmpmem (records, strlen (records), g_bytes_get_data (wanted, NULL),
                   g_bytes_get_size (wanted));
  g_assert_nonnull (strstr (manifest, sha));
  g_assert_null (strstr (manifest, "sinkhole_error"));
  g_assert_nonnull (strstr (summary, "#### Network, as the sinkhole served it\n"));
  g_assert_nonnull (strstr (summary, "| example.com | 198.18.243.18 | 80 | http | GET / Host: "
                                     "example.com User-Agent: egress-probe | "));
  g_assert_nonnull (strstr (summary, "| example.com | 198.18.243.18 | 443 | tls | SNI example.com"));
  g_assert_nonnull (strstr (summary, "| example.com. | A | 198.18.243.18 | udp |"));
  /* The connect names no host: the sinkhole's name for its address does. */
  {
    g_autoptr (JsonParser) parser = json_parser_new ();
    g_autoptr (GError) error = NULL;
    JsonObject *entry;

    json_parser_load_from_data (parser, statement, -1, &error);
    g_assert_no_error (error);
    entry = json_array_get_object_element (
        json_object_get_array_member (
            json_object_get_object_member (
                json_object_get_object_member (json_node_get_object (json_parser_get_root (parser)),
                                               "predicate"),
                "monitorLog"),
            "network"),
        0);
    g_assert_cmpstr (json_object_get_string_member (entry, "ip"), ==, "198.18.243.18");
    g_assert_cmpint (json_object_get_int_member (entry, "port"), ==, 80);
    g_assert_cmpstr (json_object_get_string_member (entry, "hostname"), ==, "example.com.");
  }
}

/* A record edited and the manifest made to match: the capture holds no
 * traffic under it. */
static void
test_network_edited_record_fails (Fixture *f, gconstpointer data)
{
  g_autofree char *dir = write_egress_bundle (f, NULL);
  g_autofree char *records = read_text (dir, AIRLOCK_BUNDLE_NETWORK_FILE);
  g_auto (GStrv) lines = g_strsplit (records, "\n", -1);
  g_autofree char *edited_line = NULL;
  g_autofree char *edited = NULL;
  g_autoptr (AirlockBundleReport) r = NULL;

  g_assert_nonnull (strstr (lines[1], "\"address\":\"198.18.243.18\""));
  {
    g_auto (GStrv) parts = g_strsplit (lines[1], "\"address\":\"198.18.243.18\"", -1);

    edited_line = g_strjoinv ("\"address\":\"198.18.0.99\"", parts);
  }
  g_free (lines[1]);
  lines[1] = g_steal_pointer (&edited_line);
  edited = g_strjoinv ("\n", lines);
  write_text (dir, AIRLOCK_BUNDLE_NETWORK_FILE, edited);
  refresh_manifest (dir, AIRLOCK_BUNDLE_NETWORK_FILE);
  r = airlock_bundle_verify (dir, NULL);
  assert_bundle_problem (r, AIRLOCK_BUNDLE_NETWORK_FILE,
                         "line 2 (tcp to 198.18.0.99:80, example.com.): net.pcap holds no SYN "
                         "from the guest to inet/stream/tcp 198.18.0.99:80");
  /* And the connection the capture shows at the real address lacks its
   * record now. */
  assert_bundle_problem (r, AIRLOCK_BUNDLE_NETWORK_FILE,
                         "net.pcap shows 1 connection(s) to inet/stream/tcp 198.18.243.18:80 that "
                         "the network took");
}

/* A line removed (the TLS connection), the manifest made to match. */
static void
test_network_removed_line_fails (Fixture *f, gconstpointer data)
{
  g_autofree char *dir = write_egress_bundle (f, NULL);
  g_autofree char *records = read_text (dir, AIRLOCK_BUNDLE_NETWORK_FILE);
  g_auto (GStrv) lines = g_strsplit (records, "\n", -1);
  g_autofree char *edited = NULL;
  g_autoptr (AirlockBundleReport) r = NULL;

  g_assert_nonnull (strstr (lines[2], "\"tls\""));
  g_free (lines[2]);
  lines[2] = g_strdup (lines[3]);
  g_free (lines[3]);
  lines[3] = g_strdup ("");
  g_free (lines[4]);
  lines[4] = NULL;
  edited = g_strjoinv ("\n", lines);
  write_text (dir, AIRLOCK_BUNDLE_NETWORK_FILE, edited);
  refresh_manifest (dir, AIRLOCK_BUNDLE_NETWORK_FILE);
  r = airlock_bundle_verify (dir, NULL);
  assert_bundle_problem (r, AIRLOCK_BUNDLE_NETWORK_FILE,
                         "net.pcap shows 1 connection(s) to inet/stream/tcp 198.18.243.18:443 that "
                         "the network took (it sent bytes or a FIN on them), but network.jsonl "
                         "records 0: a record is missing");
  /* What the summary said of it is gone too. */
  assert_bundle_problem (r, "summary.md", "differs from the summary made again");
}

/* Bytes changed: the digest, and with the manifest made to match, the
 * record file itself (a line that is not a record). */
static void
test_network_changed_bytes_fail (Fixture *f, gconstpointer data)
{
  g_autofree char *dir = write_egress_bundle (f, f->key);
  g_autofree char *records = read_text (dir, AIRLOCK_BUNDLE_NETWORK_FILE);
  g_autoptr (AirlockBundleReport) r = NULL;
  g_autoptr (AirlockBundleReport) refreshed = NULL;
  char *port = strstr (records, "\"port\":80");

  g_assert_nonnull (port);
  port[strlen ("\"port\":")] = 'x';
  write_text (dir, AIRLOCK_BUNDLE_NETWORK_FILE, records);
  r = airlock_bundle_verify (dir, f->key);
  assert_bundle_problem (r, AIRLOCK_BUNDLE_NETWORK_FILE, "does not match its digest in manifest.json");

  refresh_manifest (dir, AIRLOCK_BUNDLE_NETWORK_FILE);
  refreshed = airlock_bundle_verify (dir, NULL);
  assert_bundle_problem (refreshed, AIRLOCK_BUNDLE_NETWORK_FILE,
                         "the sinkhole's records were refused: line 2 of the sinkhole's records");
  assert_bundle_problem (refreshed, "verdict.json", "differs from the verdict re-derived");
}

/* Listed in the manifest and gone; there and not listed. */
static void
test_network_missing_or_unlisted_fails (Fixture *f, gconstpointer data)
{
  g_autofree char *dir = write_egress_bundle (f, f->key);
  g_autofree char *path = g_build_filename (dir, AIRLOCK_BUNDLE_NETWORK_FILE, NULL);
  g_autofree char *old = g_build_filename (f->root, "old", NULL);
  g_autoptr (AirlockBundleReport) r = NULL;
  g_autoptr (AirlockBundleReport) unlisted = NULL;
  NetworkRun n;
  g_autoptr (GBytes) pcap = NULL;

  g_assert_cmpint (g_unlink (path), ==, 0);
  r = airlock_bundle_verify (dir, f->key);
  assert_bundle_problem (r, AIRLOCK_BUNDLE_NETWORK_FILE, "is missing (manifest.json lists it)");

  network_run_init (&n);
  network_run_egress (&n);
  pcap = network_run_pcap (&n);
  network_run_clear (&n);
  write_network_bundle (old, pcap, NULL, NULL);
  write_text (old, AIRLOCK_BUNDLE_NETWORK_FILE, "{\"end\":true,\"records_dropped\":0,\"frames_refused\":0}\n");
  unlisted = airlock_bundle_verify (old, NULL);
  assert_bundle_problem (unlisted, AIRLOCK_BUNDLE_NETWORK_FILE, "is not listed in manifest.json");
}

/* A run on the network before the sinkhole (a capture, no records): no
 * network.jsonl, and it verifies; so does a bundle written before this
 * tree knew of network.jsonl (tests/unit/data/bundle-before-sinkhole: the
 * bundle fuzzer's writer-made seed as it was then, signed with its key). */
static void
test_network_before_sinkhole_verifies (Fixture *f, gconstpointer data)
{
  g_autofree char *dir = g_build_filename (f->root, "old", NULL);
  g_autofree char *network = g_build_filename (dir, AIRLOCK_BUNDLE_NETWORK_FILE, NULL);
  g_autofree char *committed = g_build_filename (BUNDLE_DATA_DIR, "bundle-before-sinkhole", NULL);
  g_autoptr (GBytes) key = g_bytes_new_static ("fuzz-bundle-key-0123456789abcdef", 32);
  g_autoptr (AirlockBundleReport) r = NULL;
  g_autoptr (AirlockBundleReport) old = NULL;
  g_autofree char *summary = NULL;
  NetworkRun n;
  g_autoptr (GBytes) pcap = NULL;

  network_run_init (&n);
  network_run_egress (&n);
  pcap = network_run_pcap (&n);
  network_run_clear (&n);
  write_network_bundle (dir, pcap, NULL, f->key);
  r = airlock_bundle_verify (dir, f->key);
  assert_no_problems (r->problems);
  g_assert_false (g_file_test (network, G_FILE_TEST_EXISTS));
  summary = read_text (dir, "summary.md");
  g_assert_null (strstr (summary, "Network"));

  old = airlock_bundle_verify (committed, key);
  assert_no_problems (old->problems);
  g_assert_true (old->hmac_checked);
}

/* A run the sinkhole served whose records were lost: no network.jsonl,
 * the reason in the manifest, the summary and the verdict, and the bundle
 * verifies (the reason is given to the run record again). */
static void
test_network_lost_records_verify (Fixture *f, gconstpointer data)
{
  g_autofree char *dir = g_build_filename (f->root, "lost", NULL);
  g_autofree char *network = g_build_filename (dir, AIRLOCK_BUNDLE_NETWORK_FILE, NULL);
  g_autoptr (AirlockBundleReport) r = NULL;
  g_autofree char *summary = NULL;
  g_autofree char *manifest = NULL;
  g_autofree char *verdict = NULL;
  NetworkRun n;
  g_autoptr (GBytes) pcap = NULL;

  network_run_init (&n);
  network_run_egress (&n);
  pcap = network_run_pcap (&n);
  network_run_clear (&n);
  write_network_bundle_full (dir, pcap, NULL, "the sinkhole network failed: killed", f->key);
  r = airlock_bundle_verify (dir, f->key);
  assert_no_problems (r->problems);
  g_assert_cmpstr (r->verdict, ==, "inconclusive");
  g_assert_false (g_file_test (network, G_FILE_TEST_EXISTS));
  manifest = read_text (dir, "manifest.json");
  g_assert_nonnull (strstr (manifest, "\"sinkhole_error\" : \"the sinkhole network failed: killed\""));
  summary = read_text (dir, "summary.md");
  g_assert_nonnull (strstr (summary, "No records of the network: the sinkhole network failed: killed"));
  verdict = read_text (dir, "verdict.json");
  g_assert_nonnull (strstr (verdict, "the sinkhole network failed: killed"));
}

/* The capture cross-check row by row: what the records may not say. */
static void
test_network_check_capture (void)
{
  NetworkRun n;
  g_autoptr (GBytes) pcap = NULL;
  g_autoptr (GBytes) records = NULL;
  g_autoptr (AirlockSinkholeLog) log = NULL;
  g_autoptr (AirlockCapture) capture = NULL;
  g_autoptr (GPtrArray) none = NULL;
  g_autoptr (GPtrArray) problems = NULL;
  g_autoptr (GError) error = NULL;
  AirlockCaptureGuest guest;
  AirlockSinkholeRecord *rec;

  network_run_init (&n);
  network_run_egress (&n);
  pcap = network_run_pcap (&n);
  airlock_capture_guest_init (&guest, network_run_guest_mac ());
  guest.sinkhole = TRUE;
  capture = airlock_capture_analyse (pcap, &guest, &error);
  g_assert_no_error (error);

  records = network_run_records (&n);
  log = airlock_sinkhole_log_new_from_bytes (records, &error);
  g_assert_no_error (error);
  none = airlock_network_check_capture (log, capture);
  g_assert_cmpuint (none->len, ==, 0);
  g_clear_pointer (&log, airlock_sinkhole_log_free);
  g_clear_pointer (&records, g_bytes_unref);

  /* A query the capture does not hold (one datagram to the resolver, two
   * records), asking what it did not ask; a second connection to :80 with
   * one SYN on the wire; a datagram nobody sent. */
  rec = network_run_record (&n, AIRLOCK_SINKHOLE_RECORD_DNS, NETWORK_RUN_RESOLVER, 53, 40000);
  rec->dns_transport = g_strdup ("udp");
  rec->dns.question = g_strdup ("pypi.org.");
  rec->dns.qtype = 28;
  network_run_write (&n, rec);
  rec = network_run_record (&n, AIRLOCK_SINKHOLE_RECORD_TCP, "198.18.243.18", 80, 40009);
  network_run_write (&n, rec);
  rec = network_run_record (&n, AIRLOCK_SINKHOLE_RECORD_UDP, "198.51.100.7", 9999, 40010);
  rec->bytes_in = 0;
  network_run_write (&n, rec);
  records = network_run_records (&n);
  network_run_clear (&n);
  log = airlock_sinkhole_log_new_from_bytes (records, &error);
  g_assert_no_error (error);
  problems = airlock_network_check_capture (log, capture);
  for (guint i = 0; i < problems->len; i++)
    g_test_message ("%s", (const char *) problems->pdata[i]);
  g_assert_cmpuint (problems->len, ==, 4);
  g_assert_cmpstr (problems->pdata[0], ==,
                   "line 4 (dns over udp to 10.0.2.3:53): it answers the question 'pypi.org.', "
                   "which no query in net.pcap to inet/dgram/udp 10.0.2.3:53 asks");
  g_assert_cmpstr (problems->pdata[1], ==,
                   "line 6 (udp to 198.51.100.7:9999): net.pcap holds no datagram from the guest "
                   "to inet/dgram/udp 198.51.100.7:9999: the record is not of this run's traffic");
  g_assert_cmpstr (problems->pdata[2], ==,
                   "line 1 and later: 2 record(s) of inet/dgram/udp 10.0.2.3:53, but net.pcap holds "
                   "1 datagram(s) from the guest to it");
  g_assert_cmpstr (problems->pdata[3], ==,
                   "line 2 and later: 2 record(s) of inet/stream/tcp 198.18.243.18:80, but net.pcap "
                   "holds 1 SYN(s) from the guest to it");
}

/* A bundle from anywhere may hold a FIFO where a file should be: opened
 * plainly, it would hold verify, show and the set's verify until someone
 * wrote to it (a pipeline gating on `airlock verify` would hang).  Each
 * says the file is not a regular one and goes on, as does the reader
 * replay uses on the recorded run's files (airlock_bundle_read_file). */
static void
test_fifo_files_refused (Fixture *f, gconstpointer data)
{
  g_autofree char *dir = write_egress_bundle (f, f->key);
  g_autofree char *manifest = g_build_filename (dir, "manifest.json", NULL);
  g_autofree char *console = g_build_filename (dir, "console.log", NULL);
  g_autofree char *id G_GNUC_UNUSED = write_gate (f->gate, TRUE, FALSE, NULL);
  g_autofree char *set = g_build_filename (f->gate, AIRLOCK_BUNDLE_SET_FILE, NULL);
  g_autoptr (AirlockBundleReport) r = NULL;
  g_autoptr (AirlockBundleView) v = NULL;
  g_autoptr (AirlockBundleSetReport) s = NULL;
  g_autoptr (GBytes) events = NULL;
  g_autoptr (GError) error = NULL;
  gboolean console_refused = FALSE;

  g_assert_cmpint (g_unlink (manifest), ==, 0);
  g_assert_cmpint (mkfifo (manifest, 0644), ==, 0);
  g_assert_cmpint (g_unlink (console), ==, 0);
  g_assert_cmpint (mkfifo (console, 0644), ==, 0);
  r = airlock_bundle_verify (dir, f->key);
  assert_bundle_problem (r, "manifest.json", "is not a regular file");
  v = airlock_bundle_read (dir, 10);
  for (guint i = 0; i < v->problems->len; i++)
    console_refused |= g_str_equal (v->problems->pdata[i], "console.log: is not a regular file");
  g_assert_true (console_refused);
  /* What replay reads of the recorded run, the same way. */
  events = airlock_bundle_read_file (dir, "events.jsonl", &error);
  g_assert_no_error (error);
  g_assert_cmpuint (g_bytes_get_size (events), >, 0);
  g_assert_null (airlock_bundle_read_file (dir, "console.log", &error));
  g_assert_error (error, AIRLOCK_BUNDLE_ERROR, AIRLOCK_BUNDLE_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "console.log' is not a regular file"));
  g_clear_error (&error);
  g_assert_null (airlock_bundle_read_file (dir, "no-such-file", &error));
  g_assert_nonnull (strstr (error->message, "no-such-file' is missing"));
  g_clear_error (&error);
  g_assert_null (airlock_bundle_read_file (dir, "../manifest.json", &error));
  g_assert_error (error, AIRLOCK_BUNDLE_ERROR, AIRLOCK_BUNDLE_ERROR_INVALID);

  g_assert_cmpint (g_unlink (set), ==, 0);
  g_assert_cmpint (mkfifo (set, 0644), ==, 0);
  s = airlock_bundle_set_verify (f->gate, NULL);
  assert_problem (s, AIRLOCK_BUNDLE_SET_FILE, "is not a regular file");
}

#define ADD(path, fn) g_test_add (path, Fixture, NULL, fixture_setup, fn, fixture_teardown)

static gboolean
has_reason (const AirlockBundleView *v, const char *prefix)
{
  for (guint i = 0; i < v->reasons->len; i++)
    if (g_str_has_prefix (v->reasons->pdata[i], prefix))
      return TRUE;
  return FALSE;
}

/* `airlock policy suggest`: from the egress run's bundle, the rule that
 * admits its connection by the name the sinkhole handed the address out
 * for, under a comment naming the process and the name; it parses, and
 * the same run judged under it has no egress the policy does not admit
 * (under the default policy it had).  Two bundles of the same run merge
 * into the same one rule. */
static void
test_policy_suggest_round_trip (Fixture *f, gconstpointer data)
{
  g_autofree char *dir = write_egress_bundle (f, NULL);
  g_autofree char *again = g_build_filename (f->root, "suggested", NULL);
  g_autoptr (GPtrArray) views = g_ptr_array_new_with_free_func ((GDestroyNotify) airlock_bundle_view_free);
  g_autoptr (AirlockBundleView) judged = NULL;
  g_autoptr (AirlockPolicy) policy = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree char *text = NULL;
  g_autofree char *merged = NULL;
  g_autoptr (GBytes) pcap = NULL;
  g_autoptr (GBytes) records = NULL;
  NetworkRun n;

  g_ptr_array_add (views, airlock_bundle_read (dir, 0));
  g_assert_true (has_reason (views->pdata[0], "egress not admitted by the policy"));
  text = airlock_policy_suggest (views);
  policy = airlock_policy_parse (text, strlen (text), "suggestion", &error);
  g_assert_no_error (error);
  g_assert_cmpuint (airlock_policy_get_n_rules (policy), ==, 1);
  if (!strstr (text, "\n# amd64: egress-probe[2] connect 198.18.243.18:80, the address handed out "
                     "for example.com; its connections sent Host example.com\n"
                     "allow tcp any port 80 host=example.com exe=/usr/local/bin/egress-probe\n"))
    g_error ("unexpected suggestion:\n%s", text);

  network_run_init (&n);
  network_run_egress (&n);
  pcap = network_run_pcap (&n);
  records = network_run_records (&n);
  network_run_clear (&n);
  write_network_bundle_policy (again, pcap, records, NULL, NULL, text);
  judged = airlock_bundle_read (again, 0);
  g_assert_true (judged->has_manifest);
  g_assert_false (has_reason (judged, "egress not admitted by the policy"));

  g_ptr_array_add (views, airlock_bundle_read (again, 0));
  merged = airlock_policy_suggest (views);
  g_clear_pointer (&policy, airlock_policy_free);
  policy = airlock_policy_parse (merged, strlen (merged), "merged", &error);
  g_assert_no_error (error);
  g_assert_cmpuint (airlock_policy_get_n_rules (policy), ==, 1);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/bundle/key/one-length-rule", test_key_rule);
  ADD ("/bundle/key/six-bytes-refused-everywhere", test_key_six_bytes_refused_everywhere);
  g_test_add_func ("/bundle/set/ids-differ", test_set_ids_differ);
  ADD ("/bundle/set/whole-set-verifies", test_set_whole_verifies);
  ADD ("/bundle/policy/suggest-admits-what-was-recorded", test_policy_suggest_round_trip);
  ADD ("/bundle/set/one-arch-gate-verifies", test_set_one_arch_verifies);
  ADD ("/bundle/set/missing-arch-fails", test_set_missing_arch);
  ADD ("/bundle/set/unfinished-arch-fails", test_set_unfinished_arch);
  ADD ("/bundle/set/swapped-arch-fails", test_set_swapped_arch);
  ADD ("/bundle/set/two-gates-mixed-fail", test_set_two_gates_mixed);
  ADD ("/bundle/set/other-image-fails", test_set_other_image);
  ADD ("/bundle/set/lost-attempt-verifies", test_set_lost_attempt_verifies);
  ADD ("/bundle/set/unnamed-attempt-fails", test_set_unnamed_attempt_fails);
  ADD ("/bundle/set/attempt-of-another-gate-fails", test_set_attempt_of_another_gate_fails);
  ADD ("/bundle/set/bundle-without-gate-fails", test_set_bundle_without_gate);
  ADD ("/bundle/set/record-tampered-fails", test_set_record_tampered);
  ADD ("/bundle/set/record-unsigned-fails-with-key", test_set_record_unsigned);
  ADD ("/bundle/set/record-names-each-manifest", test_set_record_names_each_manifest);
  ADD ("/bundle/set/record-missing-fails", test_set_record_missing);
  ADD ("/bundle/set/record-oversized-or-broken-fails", test_set_record_oversized);
  ADD ("/bundle/set/extra-bundle-fails", test_set_extra_bundle);
  ADD ("/bundle/set/problems-escaped", test_set_problems_escaped);
  ADD ("/bundle/set/never-overwritten", test_set_never_overwritten);
  ADD ("/bundle/fifo-files-refused", test_fifo_files_refused);
  ADD ("/bundle/network/records-are-a-file-and-verify", test_network_bundle_verifies);
  ADD ("/bundle/network/edited-record-fails", test_network_edited_record_fails);
  ADD ("/bundle/network/removed-line-fails", test_network_removed_line_fails);
  ADD ("/bundle/network/changed-bytes-fail", test_network_changed_bytes_fail);
  ADD ("/bundle/network/missing-or-unlisted-fails", test_network_missing_or_unlisted_fails);
  ADD ("/bundle/network/bundles-before-the-sinkhole-verify", test_network_before_sinkhole_verifies);
  ADD ("/bundle/network/lost-records-say-why-and-verify", test_network_lost_records_verify);
  g_test_add_func ("/bundle/network/check-capture", test_network_check_capture);
  return g_test_run ();
}
