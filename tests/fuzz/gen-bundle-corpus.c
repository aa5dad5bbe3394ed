/* Writes the seed corpus of fuzz-bundle (tests/fuzz/corpus/bundle/) in
 * fuzz-bundle.h's format.
 *
 * The first seed, real-egress-amd64, is a real bundle: `airlock gate` of
 * the sample egress image on amd64 under TCG, imported once with
 *
 *   gen-bundle-corpus --import BUNDLE_DIR corpus/bundle/real-egress-amd64
 *
 * (every regular file, by name; it was written by a branch whose verdict
 * differs, so verify finds its derived files stale: a seed for the
 * decoders, not for a bundle that verifies).  real-egress-sinkhole-amd64
 * is the same gate on the sinkhole network, imported the same way: its
 * network.jsonl (the controls' and the probe's DNS, HTTP and TLS records)
 * and the sinkhole's capture.  Variants of the first are made here: signed (manifest.hmac under FUZZ_BUNDLE_KEY), unfinished
 * (INCOMPLETE), without its capture, with evidence.bin a symlink, with a
 * subdirectory.  And written-signed is a bundle this tree's writer
 * (airlock_bundle_create/_record/_finish, as tests/unit/test-bundle.c uses
 * it) writes from a short guest stream, signed with FUZZ_BUNDLE_KEY: it
 * verifies whole, so the harness's checks of a verified bundle are
 * reached; written-network is the same of a run on the sinkhole network
 * (tests/unit/network-run.h: the egress sample's lookup and connections,
 * the capture and network.jsonl that agree), so the record reader, the
 * capture cross-check and the network report are reached whole too.
 * (They name the airlock version: regenerate after a bump.)
 *
 *   gen-bundle-corpus DIR           write the variants into DIR (next to the real one)
 *   gen-bundle-corpus --check DIR   exit 1 unless DIR holds exactly them
 *
 * The seeds are committed; the "fuzz" test suite runs --check so they
 * cannot drift from this program. */
#include "config.h"

#include "bundle/bundle.h"
#include "evidence/channel.h"
#include "fsutil-private.h"
#include "gate/verdict.h"
#include "policy/policy.h"
#include "record/run-record.h"

#include "wire.h"

#include <glib.h>
#include <stdio.h>
#include <string.h>

#include "fuzz-bundle.h"
#include "corpus-seed.h"
#include "network-run.h"

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

static const guint8 seed_nonce[AIRLOCK_NONCE_LEN] = {
  0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff,
  0x0f, 0x1e, 0x2d, 0x3c, 0x4b, 0x5a, 0x69, 0x78, 0x87, 0x96, 0xa5, 0xb4, 0xc3, 0xd2, 0xe1, 0xf0,
};

static void
frame_out (GByteArray *out, struct wire_frame *f)
{
  size_t n = wire_end (f);

  g_assert (n > 0);
  g_byte_array_append (out, f->bytes, (guint) n);
}

static void
event_frame (GByteArray *out, guint64 seq, guint32 kind, guint32 status_or_result)
{
  struct wire_frame f;

  wire_begin (&f, AIRLOCK_FRAME_EVENT, seq);
  wire_put_u32 (&f, AIRLOCK_TLV_EV_KIND, kind);
  wire_put_u64 (&f, AIRLOCK_TLV_EV_TIME_NS, 1000 + seq);
  wire_put_u32 (&f, AIRLOCK_TLV_EV_PHASE, AIRLOCK_PHASE_WORKLOAD);
  if (kind == AIRLOCK_EVENT_WORKLOAD_START)
    wire_put_u32 (&f, AIRLOCK_TLV_EV_PID, 90);
  else if (kind == AIRLOCK_EVENT_WORKLOAD_EXEC)
    {
      wire_put_u32 (&f, AIRLOCK_TLV_EV_NSPID, 2);
      wire_put_str (&f, AIRLOCK_TLV_EV_PATH, "/usr/bin/app");
      wire_put_u64 (&f, AIRLOCK_TLV_EV_RESULT, status_or_result);
    }
  else
    wire_put_u32 (&f, AIRLOCK_TLV_EV_EXIT_STATUS, status_or_result);
  frame_out (out, &f);
}

/* A guest's whole stream: hello, the workload's start, exec and exit, a
 * heartbeat, a trailer that counts them. */
static GByteArray *
guest_stream (void)
{
  static const guint8 build_id[20] = { 0xde, 0xad, 0xbe, 0xef };
  GByteArray *out = g_byte_array_new ();
  struct wire_frame f;

  wire_begin (&f, AIRLOCK_FRAME_HELLO, 0);
  wire_put (&f, AIRLOCK_TLV_NONCE, seed_nonce, AIRLOCK_NONCE_LEN);
  wire_put_str (&f, AIRLOCK_TLV_ARCH, "x86_64");
  wire_put_str (&f, AIRLOCK_TLV_KERNEL_RELEASE, "6.1.0-airlock");
  wire_put (&f, AIRLOCK_TLV_BUILD_ID, build_id, sizeof build_id);
  wire_put_u64 (&f, AIRLOCK_TLV_UPTIME_NS, 123456789);
  wire_put_u32 (&f, AIRLOCK_TLV_SECOND_OPEN_ERRNO, 16 /* EBUSY */);
  frame_out (out, &f);
  event_frame (out, 1, AIRLOCK_EVENT_WORKLOAD_START, 0);
  event_frame (out, 2, AIRLOCK_EVENT_WORKLOAD_EXEC, 0);
  wire_begin (&f, AIRLOCK_FRAME_HEARTBEAT, 3);
  wire_put_u64 (&f, AIRLOCK_TLV_UPTIME_NS, 1000000000ull);
  frame_out (out, &f);
  event_frame (out, 4, AIRLOCK_EVENT_WORKLOAD_EXIT, 0);
  wire_begin (&f, AIRLOCK_FRAME_TRAILER, 5);
  wire_put_u64 (&f, AIRLOCK_TLV_FRAME_COUNT, 5);
  wire_put_u64 (&f, AIRLOCK_TLV_HEARTBEAT_COUNT, 1);
  wire_put_u64 (&f, AIRLOCK_TLV_EVENT_COUNT, 3);
  wire_put_u32 (&f, AIRLOCK_TLV_EXIT_STATUS, 0);
  wire_put_u32 (&f, AIRLOCK_TLV_END_REASON, AIRLOCK_END_COMPLETED);
  frame_out (out, &f);
  return out;
}

static void
feed_event (AirlockChannel *channel, const AirlockFrame *frame, gpointer user_data)
{
  g_autoptr (GError) error = NULL;

  if (frame->type == AIRLOCK_FRAME_EVENT && !airlock_event_log_add_frame (user_data, frame, &error))
    g_error ("seed event does not decode: %s", error->message);
}

static gint compare_names (gconstpointer a, gconstpointer b);

/* The writer's bundle of @stream (with the capture @pcap and the
 * sinkhole's records @records when given), serialised: see the header
 * comment. */
static GByteArray *
written (GByteArray *stream, GBytes *pcap, GBytes *records)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *root = g_dir_make_tmp ("gen-bundle-corpus-XXXXXX", &error);
  g_autofree char *dir = NULL;
  g_autoptr (AirlockChannel) channel = airlock_channel_new (seed_nonce, 1000, 3000);
  g_autoptr (AirlockEventLog) log = airlock_event_log_new ();
  g_autoptr (AirlockPolicy) policy = airlock_policy_new_default ();
  g_autoptr (AirlockVerdict) verdict = NULL;
  g_autoptr (AirlockBundle) bundle = NULL;
  g_autoptr (AirlockRunRecord) record = NULL;
  g_autoptr (GBytes) key = g_bytes_new_static (FUZZ_BUNDLE_KEY, strlen (FUZZ_BUNDLE_KEY));
  g_autoptr (GBytes) out_bytes = g_bytes_new_static ("hello\n", 6);
  g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GDir) d = NULL;
  GByteArray *out = g_byte_array_new ();
  AirlockImage image = { 0 };
  AirlockBundleInput in = { 0 };
  AirlockRunRecordInput run = {
    .arch = AIRLOCK_ARCH_AMD64,
    .complete = TRUE,
    .log = log,
    .pcap = pcap,
    .pcap_error = pcap ? NULL : "the run had no NIC",
    .sinkhole_records = records,
    .timeout_ms = 30000,
    .channel = channel,
    .stdout_bytes = out_bytes,
    .accel = "tcg",
    .uri = "qemu:///embed",
    .domain_name = "airlock-fuzz",
    .qemu_version = "7.2.0",
    .libvirt_version = "9.0.0",
    .heartbeat_ms = 1000,
    .heartbeat_tolerance_ms = 3000,
  };
  const char *entry;

  if (!root)
    g_error ("cannot make a directory: %s", error->message);
  dir = g_build_filename (root, "amd64", NULL);
  bundle = airlock_bundle_create (dir, &error);
  if (!bundle)
    g_error ("cannot create the seed bundle: %s", error->message);
  airlock_channel_set_frame_func (channel, feed_event, log);
  /* As the VM does: every byte to the bundle as it arrives, then to the
   * channel. */
  airlock_bundle_record (AIRLOCK_VM_RECORD_EVIDENCE, stream->data, stream->len, bundle);
  airlock_bundle_record (AIRLOCK_VM_RECORD_STDOUT, (const guint8 *) "hello\n", 6, bundle);
  airlock_channel_feed (channel, stream->data, stream->len, 1000000, 1700000000000000);
  airlock_channel_close (channel, 1000000);
  if (airlock_channel_get_state (channel) != AIRLOCK_CHANNEL_COMPLETE)
    g_error ("the seed stream does not replay: %s", airlock_channel_get_reason (channel));

  image.reference = (char *) "oci-archive:fuzz.tar";
  image.arch = AIRLOCK_ARCH_AMD64;
  image.platform = (char *) "linux/amd64";
  image.index_digest = (char *) "sha256:1111111111111111111111111111111111111111111111111111111111111111";
  image.manifest_digest = (char *) "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
  image.config_digest = (char *) "sha256:cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc";
  image.layers = g_ptr_array_new ();
  run.trailer = airlock_channel_get_trailer (channel);
  run.guest_log = airlock_channel_get_log (channel);
  record = airlock_run_record_new (&run);
  verdict = airlock_verdict_compute (record, policy);
  in.arch = AIRLOCK_ARCH_AMD64;
  in.case_name = "fuzz";
  in.image = &image;
  in.timeout_ms = 30000;
  in.policy = policy;
  in.verdict = verdict;
  in.key = key;
  in.record = record;
  in.started_real_us = 1700000000000000;
  in.finished_real_us = 1700000002000000;
  if (!airlock_bundle_finish (bundle, &in, &error))
    g_error ("cannot finish the seed bundle: %s", error->message);
  g_ptr_array_unref (image.layers);
  g_clear_pointer (&bundle, airlock_bundle_free);

  d = g_dir_open (dir, 0, &error);
  if (!d)
    g_error ("cannot list the seed bundle: %s", error->message);
  while ((entry = g_dir_read_name (d)))
    g_ptr_array_add (names, g_strdup (entry));
  g_ptr_array_sort (names, compare_names);
  for (guint i = 0; i < names->len; i++)
    {
      g_autofree char *path = g_build_filename (dir, names->pdata[i], NULL);
      g_autofree char *contents = NULL;
      gsize len;

      if (!g_file_get_contents (path, &contents, &len, &error))
        g_error ("cannot read '%s': %s", path, error->message);
      fuzz_bundle_put (out, FUZZ_BUNDLE_FILE, names->pdata[i], contents, len);
    }
  airlock_rm_rf (root);
  return out;
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

      if (!find (entries, "manifest.json"))
        {
          fprintf (stderr, "'%s' holds no manifest.json\n", real_path);
          return 1;
        }
      variants[i].build (entries);
      bytes = serialise (entries);
      status |= corpus_seed_put (path, bytes->data, bytes->len, check, argv[0]);
    }
  {
    g_autoptr (GByteArray) stream = guest_stream ();
    g_autoptr (GByteArray) bytes = written (stream, NULL, NULL);
    g_autofree char *path = g_build_filename (dir, "written-signed", NULL);

    status |= corpus_seed_put (path, bytes->data, bytes->len, check, argv[0]);
  }
  {
    g_autoptr (GByteArray) stream = network_run_guest_stream (seed_nonce);
    g_autoptr (GByteArray) bytes = NULL;
    g_autoptr (GBytes) pcap = NULL;
    g_autoptr (GBytes) records = NULL;
    g_autofree char *path = g_build_filename (dir, "written-network", NULL);
    NetworkRun n;

    network_run_init (&n);
    network_run_egress (&n);
    pcap = network_run_pcap (&n);
    records = network_run_records (&n);
    network_run_clear (&n);
    bytes = written (stream, pcap, records);
    status |= corpus_seed_put (path, bytes->data, bytes->len, check, argv[0]);
  }
  return status;
}
