/* `airlock verify`: everything a bundle claims, re-derived from its raw
 * files (bundle.h).  Nothing in a bundle is trusted: every file is read
 * with a bound, every JSON value is type-checked, and a check that cannot
 * be made is itself a problem.
 *
 * Layers, each catching what the one before cannot:
 *   1. digests and sizes against manifest.json — any changed, truncated,
 *      deleted or added file;
 *   2. the HMAC of manifest.json under the key — a manifest rewritten to
 *      match changed files;
 *   3. re-derivation — the channel replayed frame by frame (evidence.bin
 *      against frames.jsonl and the chain head), the events decoded again,
 *      the sinkhole's records (network.jsonl) held against the capture,
 *      the verdict recomputed, summary and statement made again — a bundle
 *      whose files were all rewritten consistently except in what they
 *      mean. */
#include "config.h"

#include "bundle/bundle.h"
#include "json-util-private.h"
#include "bundle/bundle-network.h"
#include "bundle/problem-private.h"
#include "evidence/frame-private.h"
#include "fsutil-private.h"
#include "json-bounded-private.h"

#include "bounds-private.h"
#include "evidence/channel.h"
#include "protocol.h"

#include <errno.h>
#include <fcntl.h>
#include <json-glib/json-glib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Files verify reads into memory are bounded by the same table the live
 * run keeps to (bounds-private.h): a bundle a run wrote always fits. */

static const char *const known_files[] = {
  "manifest.json", "manifest.hmac", AIRLOCK_BUNDLE_INCOMPLETE, NULL,
};

static void G_GNUC_PRINTF (3, 4)
problem (AirlockBundleReport *r, const char *file, const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  airlock_bundle_problem_addv (r->problems, file, fmt, ap);
  va_end (ap);
}

/* A value of the manifest, printable (see problem()). */
static char *
escaped_or_null (const char *value)
{
  return value ? airlock_evidence_escape_bytes ((const guint8 *) value, strlen (value)) : NULL;
}

void
airlock_bundle_report_free (AirlockBundleReport *report)
{
  if (!report)
    return;
  g_ptr_array_unref (report->problems);
  g_free (report->arch);
  g_free (report->verdict);
  g_free (report->manifest_digest);
  g_free (report->index_digest);
  g_free (report->reference);
  g_free (report->gate_id);
  g_free (report->manifest_sha256);
  g_free (report);
}

/* Reads @name in @dirfd: a regular file (never through a symlink, never a
 * FIFO that would hold verify until someone writes it), at most @max bytes.
 * NULL with a problem recorded when it cannot; a missing file is one only
 * when @required. */
static GBytes *
read_file (AirlockBundleReport *r, int dirfd, const char *name, gsize max, gboolean required)
{
  g_autofree char *why = NULL;
  GBytes *bytes = airlock_read_at_bounded (dirfd, name, max, FALSE, "verify", NULL, &why);

  if (bytes)
    return bytes;
  if (errno != ENOENT)
    problem (r, name, "%s", why);
  else if (required)
    problem (r, name, "cannot be read: it is missing");
  return NULL;
}

static JsonNode *
parse_json (AirlockBundleReport *r, const char *name, GBytes *bytes)
{
  g_autoptr (GError) error = NULL;
  gsize len;
  const char *data = g_bytes_get_data (bytes, &len);
  JsonNode *root = airlock_json_parse_bounded (data, len, NULL, &error);

  if (!root)
    problem (r, name, "%s", error->message);
  return root;
}

/* Layer 1: every listed file against its digest and size; nothing extra. */
static void
check_files (AirlockBundleReport *r, const char *dir, int dirfd, JsonObject *files)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  g_autoptr (GList) names = files ? json_object_get_members (files) : NULL;
  const char *entry;

  if (!files)
    {
      problem (r, "manifest.json", "lists no files");
      return;
    }
  for (GList *l = names; l; l = l->next)
    {
      const char *name = l->data;
      JsonObject *f = airlock_json_get_object (files, name);
      const char *want = airlock_json_get_string (f, "sha256");
      gint64 want_size = -1;
      g_autofree char *path = NULL;
      g_autofree char *have = NULL;
      g_autoptr (GError) error = NULL;
      struct stat st;

      if (strchr (name, '/') || g_str_equal (name, "..") || g_str_equal (name, ".") || !*name)
        {
          problem (r, "manifest.json", "lists a file outside the bundle: '%s'", name);
          continue;
        }
      if (!want || !airlock_json_get_int (f, "size", &want_size))
        {
          problem (r, "manifest.json", "has no sha256 and size for '%s'", name);
          continue;
        }
      if (fstatat (dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        {
          problem (r, name, "is missing (manifest.json lists it)");
          continue;
        }
      if (!S_ISREG (st.st_mode))
        {
          problem (r, name, "is not a regular file");
          continue;
        }
      if ((gint64) st.st_size != want_size)
        problem (r, name, "is %" G_GINT64_FORMAT " bytes; manifest.json says %" G_GINT64_FORMAT
                 " (truncated or extended)", (gint64) st.st_size, want_size);
      path = g_build_filename (dir, name, NULL);
      have = airlock_sha256_file (path, &error);
      if (!have)
        problem (r, name, "cannot be read: %s", error->message);
      else if (g_ascii_strcasecmp (have, want) != 0)
        problem (r, name, "does not match its digest in manifest.json (sha256 %s, the manifest "
                 "says %s)", have, want);
    }
  while (d && (entry = g_dir_read_name (d)))
    if (!g_strv_contains (known_files, entry) && !json_object_has_member (files, entry))
      problem (r, entry, "is not listed in manifest.json");
}

static void
check_hmac (AirlockBundleReport *r, int dirfd, GBytes *manifest, GBytes *key)
{
  g_autoptr (GBytes) recorded = read_file (r, dirfd, "manifest.hmac", 4096, key != NULL);
  g_autoptr (GHmac) hmac = NULL;
  g_autofree char *line = NULL;
  const char *want;
  gsize n;
  guint8 diff = 0;

  r->hmac_present = recorded != NULL;
  if (!key || !recorded)
    return;
  hmac = g_hmac_new (G_CHECKSUM_SHA256, g_bytes_get_data (key, NULL), g_bytes_get_size (key));
  g_hmac_update (hmac, g_bytes_get_data (manifest, NULL), (gssize) g_bytes_get_size (manifest));
  want = g_hmac_get_string (hmac);
  line = g_strstrip (g_strndup (g_bytes_get_data (recorded, NULL), g_bytes_get_size (recorded)));
  n = strlen (want);
  /* Constant time: the comparison must not say how much of it matched. */
  if (strlen (line) != n)
    diff = 1;
  for (gsize i = 0; i < n && i < strlen (line); i++)
    diff |= (guint8) (line[i] ^ want[i]);
  if (diff)
    problem (r, "manifest.hmac", "does not match manifest.json under the key given: the "
             "manifest was changed, or signed with another key");
  else
    r->hmac_checked = TRUE;
}

typedef struct {
  guint64 seq;
  gint64 offset, size, mono, real;
  char *chain;
} RecordedFrame;

static void
recorded_frame_clear (gpointer p)
{
  g_free (((RecordedFrame *) p)->chain);
}

static GArray *
parse_frames (AirlockBundleReport *r, GBytes *text)
{
  GArray *frames = g_array_new (FALSE, TRUE, sizeof (RecordedFrame));
  g_auto (GStrv) lines = g_strsplit (g_bytes_get_data (text, NULL), "\n", -1);

  g_array_set_clear_func (frames, recorded_frame_clear);
  for (guint i = 0; lines[i]; i++)
    {
      g_autoptr (JsonNode) root = NULL;
      RecordedFrame f = { 0 };
      JsonObject *o;
      gint64 seq;

      if (!*lines[i] && !lines[i + 1])
        break;
      root = airlock_json_parse_bounded (lines[i], strlen (lines[i]), NULL, NULL);
      if (!root || !JSON_NODE_HOLDS_OBJECT (root))
        {
          problem (r, "frames.jsonl", "line %u is not a JSON object", i + 1);
          g_array_unref (frames);
          return NULL;
        }
      o = json_node_get_object (root);
      if (!airlock_json_get_int (o, "seq", &seq) || !airlock_json_get_int (o, "offset", &f.offset)
          || !airlock_json_get_int (o, "size", &f.size) || !airlock_json_get_int (o, "received_mono_us", &f.mono)
          || !airlock_json_get_int (o, "received_real_us", &f.real) || !airlock_json_get_string (o, "chain")
          || f.offset < 0 || f.size <= 0)
        {
          problem (r, "frames.jsonl", "line %u lacks seq, offset, size, receipt times or chain",
                   i + 1);
          g_array_unref (frames);
          return NULL;
        }
      f.seq = (guint64) seq;
      f.chain = g_strdup (airlock_json_get_string (o, "chain"));
      g_array_append_val (frames, f);
    }
  return frames;
}

typedef struct {
  AirlockEventLog *log;
} Replay;

static void
replay_frame (AirlockChannel *channel, const AirlockFrame *frame, gpointer user_data)
{
  Replay *rp = user_data;
  g_autoptr (GError) error = NULL;

  /* As the VM does: a record the host cannot place ends the run. */
  if (frame->type == AIRLOCK_FRAME_EVENT
      && !airlock_event_log_add_frame (rp->log, frame, &error))
    {
      g_autofree char *why = g_strdup_printf ("malformed event: %s", error->message);

      airlock_channel_fail (channel, AIRLOCK_ANOMALY_MALFORMED, why);
    }
}

/* Layer 3a: the channel from host.bin and evidence.bin, frame by frame as
 * frames.jsonl says they arrived, its events into @rp->log.  Returns the
 * replayed channel, or NULL when it cannot be set up.  Nothing is fed
 * after it returns, so @rp need only outlive this call's feeds. */
static AirlockChannel *
replay (AirlockBundleReport *r, JsonObject *run, GBytes *host, GBytes *evidence, GArray *recorded,
        gboolean complete, Replay *rp)
{
  g_autoptr (AirlockChannel) channel = NULL;
  g_autoptr (GBytes) spec = NULL;
  guint8 nonce[AIRLOCK_NONCE_LEN];
  gint64 hb = 0, tol = 0;
  gsize host_len, ev_len, pos = 0;
  const guint8 *host_data = g_bytes_get_data (host, &host_len);
  const guint8 *ev = g_bytes_get_data (evidence, &ev_len);
  const guint8 *hello;
  gsize hello_len;
  GPtrArray *frames;
  gint64 last_mono = 0, last_real = 0;

  if (!airlock_hex_decode (airlock_json_get_string (run, "nonce"), nonce, sizeof nonce)
      || !airlock_json_get_int (run, "heartbeat_ms", &hb) || !airlock_json_get_int (run, "heartbeat_tolerance_ms", &tol)
      || hb <= 0 || tol <= 0 || hb > G_MAXUINT32 || tol > G_MAXUINT32)
    {
      problem (r, "manifest.json", "run has no nonce or heartbeat settings to replay with");
      return NULL;
    }
  if (host_len < AIRLOCK_HOST_HELLO_SIZE)
    {
      problem (r, "host.bin", "is %" G_GSIZE_FORMAT " bytes, shorter than a host hello", host_len);
      return NULL;
    }
  channel = airlock_channel_new (nonce, (guint) hb, (guint) tol);
  if (host_len > AIRLOCK_HOST_HELLO_SIZE)
    {
      spec = g_bytes_new (host_data + AIRLOCK_HOST_HELLO_SIZE, host_len - AIRLOCK_HOST_HELLO_SIZE);
      if (host_len - AIRLOCK_HOST_HELLO_SIZE > AIRLOCK_SPEC_MAX)
        {
          problem (r, "host.bin", "carries a run spec over %u bytes", AIRLOCK_SPEC_MAX);
          return NULL;
        }
      airlock_channel_set_spec (channel, spec);
    }
  hello = airlock_channel_get_host_hello (channel, &hello_len);
  if (hello_len != AIRLOCK_HOST_HELLO_SIZE || memcmp (hello, host_data, hello_len) != 0)
    problem (r, "host.bin", "its host hello is not the one the manifest's nonce and heartbeat "
             "make (changed nonce, heartbeat or spec length)");
  airlock_channel_set_frame_func (channel, replay_frame, rp);

  for (guint i = 0; i < recorded->len; i++)
    {
      const RecordedFrame *f = &g_array_index (recorded, RecordedFrame, i);
      gsize end = (gsize) f->offset + (gsize) f->size;

      if (end > ev_len || (gsize) f->offset < pos)
        {
          problem (r, "frames.jsonl", "frame %u (seq %" G_GUINT64_FORMAT ") lies at bytes %"
                   G_GINT64_FORMAT "-%" G_GSIZE_FORMAT ", outside evidence.bin's %" G_GSIZE_FORMAT
                   " bytes or before the frame it follows", i, f->seq, f->offset, end, ev_len);
          return g_steal_pointer (&channel);
        }
      airlock_channel_check_time (channel, f->mono);
      airlock_channel_feed (channel, ev + pos, end - pos, f->mono, f->real);
      pos = end;
      last_mono = f->mono;
      last_real = f->real;
      frames = airlock_channel_get_frames (channel);
      if (frames->len != i + 1)
        {
          problem (r, "evidence.bin", "frame %u (seq %" G_GUINT64_FORMAT ", bytes %" G_GINT64_FORMAT
                   "-%" G_GSIZE_FORMAT ") does not replay: %s", i, f->seq, f->offset, end,
                   airlock_channel_get_reason (channel) ? airlock_channel_get_reason (channel)
                                                        : "no frame ends where frames.jsonl says");
          return g_steal_pointer (&channel);
        }
      {
        const AirlockFrame *got = frames->pdata[i];
        g_autofree char *chain = airlock_hex_encode (got->chain, 32);

        if (got->seq != f->seq || (gint64) got->offset != f->offset || (gint64) got->size != f->size
            || g_ascii_strcasecmp (chain, f->chain) != 0)
          {
            problem (r, "evidence.bin", "frame %u (seq %" G_GUINT64_FORMAT ", bytes %"
                     G_GINT64_FORMAT "-%" G_GSIZE_FORMAT ") does not match frames.jsonl: its chain "
                     "value is %s, recorded %s", i, f->seq, f->offset, end, chain, f->chain);
            return g_steal_pointer (&channel);
          }
      }
    }
  /* A complete run accepted every byte: the rest must replay to the same
   * end.  An incomplete one stopped where the host stopped, for the reason
   * the manifest gives (a timeout or a dead VM leaves no mark in the
   * stream), so what follows is not decoded. */
  if (complete)
    {
      if (pos < ev_len)
        airlock_channel_feed (channel, ev + pos, ev_len - pos, last_mono, last_real);
      airlock_channel_close (channel, last_mono);
      if (airlock_channel_get_state (channel) != AIRLOCK_CHANNEL_COMPLETE)
        problem (r, "evidence.bin", "the manifest says the run is complete, but the stream "
                 "replays as inconclusive: %s",
                 airlock_channel_get_reason (channel) ? airlock_channel_get_reason (channel) : "?");
      else if (airlock_channel_get_frames (channel)->len != recorded->len)
        problem (r, "frames.jsonl", "records %u frames; evidence.bin holds %u", recorded->len,
                 airlock_channel_get_frames (channel)->len);
    }
  return g_steal_pointer (&channel);
}

/* Compares two texts line by line; the first difference is a problem on
 * @file. */
static gboolean
compare_lines (AirlockBundleReport *r, const char *file, GBytes *have, const char *want,
               const char *what)
{
  g_auto (GStrv) a = NULL;
  g_auto (GStrv) b = NULL;
  guint i;

  if (g_bytes_get_size (have) == strlen (want)
      && memcmp (g_bytes_get_data (have, NULL), want, strlen (want)) == 0)
    return TRUE;
  a = g_strsplit (g_bytes_get_data (have, NULL), "\n", -1);
  b = g_strsplit (want, "\n", -1);
  for (i = 0; a[i] && b[i]; i++)
    if (!g_str_equal (a[i], b[i]))
      break;
  problem (r, file, "line %u differs from %s", i + 1, what);
  return FALSE;
}

AirlockBundleReport *
airlock_bundle_verify (const char *dir, GBytes *key)
{
  AirlockBundleReport *r = g_new0 (AirlockBundleReport, 1);
  g_autoptr (GBytes) manifest_bytes = NULL;
  g_autoptr (JsonNode) manifest = NULL;
  g_autoptr (GBytes) host = NULL, evidence = NULL, frames_text = NULL, events_text = NULL;
  g_autoptr (GBytes) pcap = NULL, policy_text = NULL, chain_text = NULL, network = NULL;
  g_autoptr (GBytes) verdict_text = NULL, summary_text = NULL, statement_text = NULL;
  g_autoptr (GBytes) incomplete = NULL;
  g_autoptr (GArray) recorded = NULL;
  g_autoptr (AirlockChannel) channel = NULL;
  g_autoptr (AirlockEventLog) log = NULL;
  g_autoptr (AirlockPolicy) policy = NULL;
  g_autoptr (AirlockVerdict) verdict = NULL;
  g_autoptr (GError) error = NULL;
  JsonObject *m, *run, *image, *inputs, *files;
  gboolean complete = FALSE;
  gboolean network_listed;
  AirlockArch arch;
  Replay rp = { NULL };
  int dirfd;

  r->problems = g_ptr_array_new_with_free_func (airlock_bundle_problem_free);
  if (key && !airlock_bundle_key_check (key, "the key given", &error))
    {
      problem (r, NULL, "%s", error->message);
      return r;
    }
  dirfd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirfd < 0)
    {
      problem (r, NULL, "cannot open the bundle directory '%s': %s", dir, g_strerror (errno));
      return r;
    }

  incomplete = read_file (r, dirfd, AIRLOCK_BUNDLE_INCOMPLETE, 65536, FALSE);
  if (incomplete)
    {
      g_autofree char *first = g_strndup (g_bytes_get_data (incomplete, NULL),
                                          strcspn (g_bytes_get_data (incomplete, NULL), "\n"));

      problem (r, AIRLOCK_BUNDLE_INCOMPLETE, "the bundle was not finished: %s", first);
    }
  manifest_bytes = read_file (r, dirfd, "manifest.json", AIRLOCK_BOUND_MANIFEST, TRUE);
  if (!manifest_bytes)
    goto out;
  /* What a gate's set record names this bundle by (bundle-set.c). */
  r->manifest_sha256 = g_compute_checksum_for_bytes (G_CHECKSUM_SHA256, manifest_bytes);
  /* First: the signature is over the bytes, whatever they parse to. */
  check_hmac (r, dirfd, manifest_bytes, key);
  if (!(manifest = parse_json (r, "manifest.json", manifest_bytes)))
    goto out;
  if (!JSON_NODE_HOLDS_OBJECT (manifest))
    {
      problem (r, "manifest.json", "is not a JSON object");
      goto out;
    }
  m = json_node_get_object (manifest);
  if (g_strcmp0 (airlock_json_get_string (m, "bundle"), AIRLOCK_BUNDLE_FORMAT) != 0)
    {
      problem (r, "manifest.json", "is not an %s manifest", AIRLOCK_BUNDLE_FORMAT);
      goto out;
    }
  r->arch = escaped_or_null (airlock_json_get_string (m, "arch"));
  if (!r->arch || !airlock_arch_from_string (r->arch, &arch))
    {
      problem (r, "manifest.json", "names no arch airlock knows");
      goto out;
    }
  run = airlock_json_get_object (m, "run");
  inputs = airlock_json_get_object (m, "inputs");
  image = airlock_json_get_object (inputs, "image");
  files = airlock_json_get_object (m, "files");
  r->manifest_digest = escaped_or_null (airlock_json_get_string (image, "manifest"));
  r->index_digest = escaped_or_null (airlock_json_get_string (image, "index"));
  r->reference = g_strdup (airlock_json_get_string (image, "reference"));
  r->gate_id = escaped_or_null (airlock_json_get_string (m, "gate"));
  if (!run || !airlock_json_get_bool (run, "complete", &complete))
    {
      problem (r, "manifest.json", "has no run record");
      goto out;
    }

  check_files (r, dir, dirfd, files);

  host = read_file (r, dirfd, "host.bin", 1 << 20, TRUE);
  evidence = read_file (r, dirfd, "evidence.bin", AIRLOCK_BOUND_EVIDENCE_STREAM, TRUE);
  frames_text = read_file (r, dirfd, "frames.jsonl", AIRLOCK_BOUND_DERIVED_FILE, TRUE);
  events_text = read_file (r, dirfd, "events.jsonl", AIRLOCK_BOUND_DERIVED_FILE, TRUE);
  chain_text = read_file (r, dirfd, "chain-head", 4096, TRUE);
  policy_text = read_file (r, dirfd, "policy.txt", AIRLOCK_POLICY_TEXT_MAX, TRUE);
  verdict_text = read_file (r, dirfd, "verdict.json", AIRLOCK_BOUND_DERIVED_FILE, TRUE);
  summary_text = read_file (r, dirfd, "summary.md", AIRLOCK_BOUND_DERIVED_FILE, TRUE);
  statement_text = read_file (r, dirfd, "attestation.intoto.json", AIRLOCK_BOUND_DERIVED_FILE,
                                TRUE);
  pcap = read_file (r, dirfd, "net.pcap", AIRLOCK_BOUND_CAPTURE, FALSE);
  /* The sinkhole's records, when the manifest lists them: a bundle
   * written before the sinkhole (QEMU's restricted network) has none, and
   * is judged as it was then.  Missing, it is a problem of layer 1. */
  network_listed = files && json_object_has_member (files, AIRLOCK_BUNDLE_NETWORK_FILE);
  if (network_listed)
    network = read_file (r, dirfd, AIRLOCK_BUNDLE_NETWORK_FILE, AIRLOCK_SINKHOLE_LOG_MAX, FALSE);
  if (!host || !evidence || !frames_text || !events_text || !chain_text || !policy_text)
    goto out;
  recorded = parse_frames (r, frames_text);
  if (!recorded)
    goto out;

  rp.log = log = airlock_event_log_new ();
  channel = replay (r, run, host, evidence, recorded, complete, &rp);
  if (!channel)
    goto out;

  /* The chain head, three ways: replayed, chain-head, the manifest. */
  {
    g_autofree char *head = airlock_hex_encode (airlock_channel_get_chain_head (channel), 32);
    g_autofree char *file_head = g_strstrip (g_strndup (g_bytes_get_data (chain_text, NULL),
                                                        g_bytes_get_size (chain_text)));

    if (g_ascii_strcasecmp (head, file_head) != 0)
      problem (r, "chain-head", "says %s; the stream replays to %s", file_head, head);
    if (g_strcmp0 (airlock_json_get_string (run, "chain_head"), head) != 0)
      problem (r, "manifest.json", "records chain head %s; the stream replays to %s",
               airlock_json_get_string (run, "chain_head") ? airlock_json_get_string (run, "chain_head") : "(none)", head);
  }

  /* Layer 3b: the events decoded again. */
  {
    g_autofree char *want = airlock_bundle_events_jsonl (arch, airlock_event_log_get_events (log));

    compare_lines (r, "events.jsonl", events_text, want, "the event decoded from evidence.bin");
  }

  /* Layer 3c: the verdict recomputed from the evidence. */
  policy = airlock_policy_parse (g_bytes_get_data (policy_text, NULL),
                                 g_bytes_get_size (policy_text), "policy.txt", &error);
  if (!policy)
    {
      problem (r, "policy.txt", "does not parse: %s", error->message);
      goto out;
    }
  {
    const char *pcap_error = airlock_json_get_string (run, "pcap_error");
    JsonObject *kase = airlock_json_get_object (m, "case");
    JsonObject *airlock = airlock_json_get_object (inputs, "airlock");
    g_autofree char *evidence_sha = g_compute_checksum_for_bytes (G_CHECKSUM_SHA256, evidence);
    g_autofree char *head = airlock_hex_encode (airlock_channel_get_chain_head (channel), 32);
    g_autofree char *policy_str = g_strndup (g_bytes_get_data (policy_text, NULL),
                                             g_bytes_get_size (policy_text));
    g_autofree char *want_verdict = NULL;
    g_autofree char *want_summary = NULL;
    g_autofree char *want_statement = NULL;
    AirlockBundleFacts facts = { 0 };

    gint64 timeout_ms = 0, guest_time_ms = 0;
    g_autoptr (AirlockRunRecord) record = NULL;
    AirlockRunRecordInput rin = {
      .arch = arch,
      .complete = complete,
      .incomplete_reason = airlock_json_get_string (run, "reason"),
      .trailer = airlock_channel_get_trailer (channel),
      .guest_log = airlock_channel_get_log (channel),
      .log = log,
      .pcap = pcap,
      .pcap_error = pcap ? NULL : (pcap_error ? pcap_error : "the run had no NIC"),
      .sinkhole_records = network,
      .sinkhole_error = network_listed
                          ? "network.jsonl, which manifest.json lists, cannot be read"
                          : airlock_json_get_string (run, "sinkhole_error"),
      /* The frames' receipt times, replayed: how long the workload was
       * watched in wall time. */
      .channel = channel,
    };

    /* The same record the live run judged, made from the raw files. */
    if (airlock_json_get_int (kase, "timeout_ms", &timeout_ms) && timeout_ms > 0
        && timeout_ms <= G_MAXUINT32)
      rin.timeout_ms = (guint32) timeout_ms;
    /* A bundle from before the warped clock ran on the real one, and its
     * verdict did not say how long the workload was watched: judged as it
     * was. */
    rin.clock_warp = g_strcmp0 (airlock_json_get_string (kase, "clock"), "warp") == 0;
    rin.span_unknown = airlock_json_get_string (kase, "clock") == NULL;
    if (rin.clock_warp && airlock_json_get_int (kase, "guest_time_ms", &guest_time_ms)
        && guest_time_ms > 0 && guest_time_ms <= G_MAXUINT32)
      rin.guest_time_ms = (guint32) guest_time_ms;
    record = airlock_run_record_new (&rin);
    if (network && !record->sinkhole)
      problem (r, AIRLOCK_BUNDLE_NETWORK_FILE, "%s", record->sinkhole_error);
    /* The sinkhole's records held against the raw capture: what it says it
     * took in must be traffic the capture holds, and the other way. */
    if (record->sinkhole && record->capture)
      {
        g_autoptr (GPtrArray) contradictions =
          airlock_network_check_capture (record->sinkhole, record->capture);

        for (guint i = 0; i < contradictions->len; i++)
          problem (r, AIRLOCK_BUNDLE_NETWORK_FILE, "%s", (const char *) contradictions->pdata[i]);
      }
    verdict = airlock_verdict_compute (record, policy);
    r->verdict = g_strdup (airlock_verdict_kind_to_string (verdict->kind));
    facts.arch = arch;
    facts.case_name = airlock_json_get_string (kase, "name");
    facts.reference = airlock_json_get_string (image, "reference");
    facts.index_digest = airlock_json_get_string (image, "index");
    facts.manifest_digest = airlock_json_get_string (image, "manifest");
    facts.config_digest = airlock_json_get_string (image, "config");
    facts.airlock_version = airlock_json_get_string (airlock, "version");
    facts.accel = airlock_json_get_string (run, "accel");
    facts.recorder = airlock_channel_get_hello (channel)
                       ? airlock_recorder_to_string (airlock_channel_get_hello (channel)->recorder)
                       : NULL;
    facts.chain_head = head;
    facts.evidence_sha256 = evidence_sha;
    facts.policy_text = policy_str;
    facts.started = airlock_json_get_string (run, "started");
    facts.finished = airlock_json_get_string (run, "finished");
    facts.events = airlock_event_log_get_events (log);
    facts.verdict = verdict;
    facts.sinkhole = record->sinkhole;
    /* As the writer said it: why the records did not read, or the
     * manifest's reason for having none (none at all in a bundle from
     * before the sinkhole). */
    facts.before_clock = rin.span_unknown;
    facts.sinkhole_error = record->sinkhole ? NULL
                           : network_listed ? record->sinkhole_error
                                            : airlock_json_get_string (run, "sinkhole_error");
    want_verdict = airlock_bundle_verdict_json (&facts);
    want_summary = airlock_bundle_summary_md (&facts);
    want_statement = airlock_bundle_statement_json (&facts);
    if (verdict_text
        && !compare_lines (r, "verdict.json", verdict_text, want_verdict,
                           "the verdict re-derived from the evidence"))
      {
        g_autoptr (JsonNode) said = parse_json (r, "verdict.json", verdict_text);
        const char *claim = said && JSON_NODE_HOLDS_OBJECT (said)
                                ? airlock_json_get_string (json_node_get_object (said), "verdict")
                                : NULL;

        if (claim && !g_str_equal (claim, r->verdict))
          problem (r, "verdict.json", "says '%s'; the evidence says '%s'", claim, r->verdict);
      }
    if (summary_text)
      compare_lines (r, "summary.md", summary_text, want_summary,
                     "the summary made again from the evidence");
    if (statement_text)
      compare_lines (r, "attestation.intoto.json", statement_text, want_statement,
                     "the statement made again from the evidence");
  }

out:
  close (dirfd);
  return r;
}
