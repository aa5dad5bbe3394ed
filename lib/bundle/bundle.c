/* Writing an evidence bundle (bundle.h): created before the VM boots, fed
 * the streams as they arrive, finished after the verdict. */
#define _GNU_SOURCE   /* renameat2() */
#include "config.h"

#include "bundle/bundle.h"
#include "json-util-private.h"
#include "bundle/bundle-network.h"
#include "protocol.h"

#include "bounds-private.h"
#include "fsutil-private.h"
#include "evidence/channel.h"

#include <errno.h>
#include <fcntl.h>
#include <json-glib/json-glib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


typedef enum {
  STREAM_EVIDENCE,
  STREAM_CONSOLE,
  STREAM_STDIN,
  STREAM_STDOUT,
  STREAM_STDERR,
  N_STREAMS,
} Stream;

static const char *const stream_files[N_STREAMS] = {
  "evidence.bin", "console.log", "stdin", "stdout", "stderr",
};

struct _AirlockBundle {
  char *dir;
  int dirfd;
  int fds[N_STREAMS];
  guint64 written[N_STREAMS];
  gboolean truncated[N_STREAMS];
  GMutex lock;          /* guards write_error */
  char *write_error;    /* the first stream write that failed */
  gboolean finished;
};

static int
create_at (AirlockBundle *bundle, const char *name, int extra_flags, GError **error)
{
  int fd = openat (bundle->dirfd, name,
                   O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | extra_flags, 0644);

  if (fd < 0)
    g_set_error (error, AIRLOCK_BUNDLE_ERROR,
                 errno == EEXIST ? AIRLOCK_BUNDLE_ERROR_EXISTS : AIRLOCK_BUNDLE_ERROR_IO,
                 "cannot create '%s/%s': %s%s", bundle->dir, name, g_strerror (errno),
                 errno == EEXIST ? " (a bundle file is never overwritten)" : "");
  return fd;
}

/* Creates @name with @len bytes, synced. */
static gboolean
write_new (AirlockBundle *bundle, const char *name, const void *data, gsize len, GError **error)
{
  int fd = create_at (bundle, name, 0, error);
  int saved;

  if (fd < 0)
    return FALSE;
  if (airlock_write_all (fd, data, len) && fsync (fd) == 0)
    {
      if (close (fd) == 0)
        return TRUE;
      fd = -1;
    }
  saved = errno;
  if (fd >= 0)
    close (fd);
  g_set_error (error, AIRLOCK_BUNDLE_ERROR, AIRLOCK_BUNDLE_ERROR_IO, "cannot write '%s/%s': %s",
               bundle->dir, name, g_strerror (saved));
  return FALSE;
}

static gboolean
write_new_text (AirlockBundle *bundle, const char *name, const char *text, GError **error)
{
  return write_new (bundle, name, text, strlen (text), error);
}

AirlockBundle *
airlock_bundle_create (const char *dir, GError **error)
{
  g_autoptr (AirlockBundle) bundle = g_new0 (AirlockBundle, 1);
  g_autofree char *parent = g_path_get_dirname (dir);
  g_autofree char *marker = NULL;
  g_autofree char *now = NULL;
  g_autoptr (GDateTime) t = g_date_time_new_now_utc ();

  bundle->dir = g_strdup (dir);
  bundle->dirfd = -1;
  for (int i = 0; i < N_STREAMS; i++)
    bundle->fds[i] = -1;
  g_mutex_init (&bundle->lock);

  if (g_mkdir_with_parents (parent, 0755) < 0)
    {
      g_set_error (error, AIRLOCK_BUNDLE_ERROR, AIRLOCK_BUNDLE_ERROR_IO,
                   "cannot create the bundle's parent directory '%s': %s", parent,
                   g_strerror (errno));
      return NULL;
    }
  if (mkdir (dir, 0755) < 0)
    {
      int saved = errno;

      g_set_error (error, AIRLOCK_BUNDLE_ERROR,
                   saved == EEXIST ? AIRLOCK_BUNDLE_ERROR_EXISTS : AIRLOCK_BUNDLE_ERROR_IO,
                   "cannot create the bundle directory '%s': %s%s", dir, g_strerror (saved),
                   saved == EEXIST ? " (a bundle is never overwritten)" : "");
      return NULL;
    }
  bundle->dirfd = open (dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (bundle->dirfd < 0)
    {
      g_set_error (error, AIRLOCK_BUNDLE_ERROR, AIRLOCK_BUNDLE_ERROR_IO,
                   "cannot open the bundle directory '%s': %s", dir, g_strerror (errno));
      return NULL;
    }
  now = g_date_time_format_iso8601 (t);
  /* First, so that whatever happens next the bundle says it is not whole. */
  marker = g_strdup_printf ("airlock %s (pid %d) started this bundle at %s; it is incomplete "
                            "until this file is removed.\n",
                            AIRLOCK_VERSION, (int) getpid (), now);
  if (!write_new_text (bundle, AIRLOCK_BUNDLE_INCOMPLETE, marker, error))
    return NULL;
  for (int i = 0; i < N_STREAMS; i++)
    {
      bundle->fds[i] = create_at (bundle, stream_files[i], O_APPEND, error);
      if (bundle->fds[i] < 0)
        return NULL;
    }
  return g_steal_pointer (&bundle);
}

const char *
airlock_bundle_get_dir (AirlockBundle *bundle)
{
  return bundle->dir;
}

gboolean
airlock_bundle_move (AirlockBundle *bundle, const char *new_dir, GError **error)
{
  /* RENAME_NOREPLACE: an empty directory of that name is not replaced
   * either (plain rename() would). */
  if (renameat2 (AT_FDCWD, bundle->dir, AT_FDCWD, new_dir, RENAME_NOREPLACE) < 0)
    {
      int saved = errno;

      g_set_error (error, AIRLOCK_BUNDLE_ERROR,
                   saved == EEXIST ? AIRLOCK_BUNDLE_ERROR_EXISTS : AIRLOCK_BUNDLE_ERROR_IO,
                   "cannot move the bundle '%s' to '%s': %s", bundle->dir, new_dir,
                   g_strerror (saved));
      return FALSE;
    }
  /* The files are written through bundle->dirfd, which follows the move;
   * the name is for messages and the streams' paths. */
  g_free (bundle->dir);
  bundle->dir = g_strdup (new_dir);
  return TRUE;
}

void
airlock_bundle_record (AirlockVmRecord what, const guint8 *data, gsize len, gpointer user_data)
{
  AirlockBundle *bundle = user_data;
  Stream s;
  guint64 cap;

  switch (what)
    {
    case AIRLOCK_VM_RECORD_EVIDENCE:
      s = STREAM_EVIDENCE;
      /* What the channel keeps: past it the run is already inconclusive
       * (AIRLOCK_ANOMALY_BOUND), and verify reads no more. */
      cap = AIRLOCK_BOUND_EVIDENCE_STREAM;
      break;
    case AIRLOCK_VM_RECORD_CONSOLE:
      s = STREAM_CONSOLE;
      cap = AIRLOCK_BOUND_CONSOLE;
      break;
    case AIRLOCK_VM_RECORD_STDIN:
      s = STREAM_STDIN;
      cap = AIRLOCK_BOUND_STDIO;
      break;
    case AIRLOCK_VM_RECORD_STDOUT:
      s = STREAM_STDOUT;
      cap = AIRLOCK_BOUND_STDIO;
      break;
    case AIRLOCK_VM_RECORD_STDERR:
      s = STREAM_STDERR;
      cap = AIRLOCK_BOUND_STDIO;
      break;
    default:
      return;
    }
  if (bundle->fds[s] < 0 || len == 0)
    return;
  if (bundle->written[s] + len > cap)
    {
      bundle->truncated[s] = TRUE;
      len = (gsize) (cap - bundle->written[s]);
      if (len == 0)
        return;
    }
  if (!airlock_write_all (bundle->fds[s], data, len))
    {
      int saved = errno;

      g_mutex_lock (&bundle->lock);
      if (!bundle->write_error)
        bundle->write_error = g_strdup_printf ("cannot write '%s/%s': %s", bundle->dir,
                                               stream_files[s], g_strerror (saved));
      g_mutex_unlock (&bundle->lock);
      close (bundle->fds[s]);
      bundle->fds[s] = -1;
      return;
    }
  bundle->written[s] += len;
}

static char *
rfc3339 (gint64 real_us)
{
  g_autoptr (GDateTime) t = g_date_time_new_from_unix_utc (real_us / G_USEC_PER_SEC);

  return t ? g_date_time_format (t, "%Y-%m-%dT%H:%M:%SZ") : g_strdup ("1970-01-01T00:00:00Z");
}

/* Files the manifest lists, in the order written. */
typedef struct {
  char *name;
  char *sha256;
  guint64 size;
} FileEntry;

static void
file_entry_free (gpointer p)
{
  FileEntry *e = p;

  g_free (e->name);
  g_free (e->sha256);
  g_free (e);
}

static gboolean
add_written (AirlockBundle *bundle, GPtrArray *files, const char *name, const void *data, gsize len,
             GError **error)
{
  FileEntry *e;

  if (!write_new (bundle, name, data, len, error))
    return FALSE;
  e = g_new0 (FileEntry, 1);
  e->name = g_strdup (name);
  e->sha256 = g_compute_checksum_for_data (G_CHECKSUM_SHA256, data, len);
  e->size = len;
  g_ptr_array_add (files, e);
  return TRUE;
}

static gboolean
add_text (AirlockBundle *bundle, GPtrArray *files, const char *name, const char *text,
          GError **error)
{
  return add_written (bundle, files, name, text, strlen (text), error);
}

/* A stream file, hashed as it is on disk (what verify will hash). */
static gboolean
add_stream (AirlockBundle *bundle, GPtrArray *files, Stream s, GError **error)
{
  g_autofree char *path = g_build_filename (bundle->dir, stream_files[s], NULL);
  FileEntry *e;
  struct stat st;

  if (fsync (bundle->fds[s]) < 0 || close (bundle->fds[s]) < 0)
    {
      bundle->fds[s] = -1;
      g_set_error (error, AIRLOCK_BUNDLE_ERROR, AIRLOCK_BUNDLE_ERROR_IO, "cannot write '%s': %s",
                   path, g_strerror (errno));
      return FALSE;
    }
  bundle->fds[s] = -1;
  if (stat (path, &st) < 0)
    {
      g_set_error (error, AIRLOCK_BUNDLE_ERROR, AIRLOCK_BUNDLE_ERROR_IO, "cannot read '%s': %s",
                   path, g_strerror (errno));
      return FALSE;
    }
  e = g_new0 (FileEntry, 1);
  e->name = g_strdup (stream_files[s]);
  e->size = (guint64) st.st_size;
  e->sha256 = airlock_sha256_file (path, error);
  g_ptr_array_add (files, e);
  return e->sha256 != NULL;
}

static void
manifest_inputs (JsonBuilder *b, const AirlockBundleInput *in, const AirlockRunRecord *run)
{
  const AirlockGuestHello *hello = airlock_channel_get_hello (run->channel);
  g_autofree char *init_path = g_strdup_printf ("%s/init-%s", airlock_guest_programs_dir (),
                                                airlock_arch_to_string (in->arch));
  g_autofree char *init_sha = airlock_sha256_file (init_path, NULL);

  json_builder_set_member_name (b, "inputs");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "image");
  if (in->image)
    {
      json_builder_begin_object (b);
      airlock_json_set_str (b, "reference", in->image->reference);
      airlock_json_set_str (b, "platform", in->image->platform);
      airlock_json_set_image_digests (b, in->image->index_digest, in->image->manifest_digest,
                                      in->image->config_digest);
      json_builder_set_member_name (b, "layers");
      json_builder_begin_array (b);
      for (guint i = 0; i < in->image->layers->len; i++)
        {
          const AirlockImageLayer *l = in->image->layers->pdata[i];

          json_builder_begin_object (b);
          airlock_json_set_str (b, "digest", l->digest);
          airlock_json_set_int (b, "size", (gint64) l->size);
          airlock_json_set_str (b, "mediaType", l->media_type);
          json_builder_end_object (b);
        }
      json_builder_end_array (b);
      json_builder_end_object (b);
    }
  else
    json_builder_add_null_value (b);

  json_builder_set_member_name (b, "kernel");
  json_builder_begin_object (b);
  airlock_json_set_str (b, "release", in->guest ? in->guest->kernel_release : NULL);
  airlock_json_set_str (b, "source", in->guest ? in->guest->kernel_source : NULL);
  airlock_json_set_str (b, "sha256", in->guest ? in->guest->kernel_sha256 : NULL);
  json_builder_end_object (b);
  json_builder_set_member_name (b, "initramfs");
  json_builder_begin_object (b);
  airlock_json_set_str (b, "sha256", in->guest ? in->guest->initramfs_sha256 : NULL);
  json_builder_end_object (b);
  json_builder_set_member_name (b, "supervisor");
  json_builder_begin_object (b);
  /* The guest init (PID 1 and the supervisor) as built; the initramfs
   * digest covers the copy that ran, the build id is what it reported. */
  airlock_json_set_str (b, "program", init_path);
  airlock_json_set_str (b, "sha256", init_sha);
  airlock_json_set_str (b, "build_id", hello ? hello->build_id_hex : NULL);
  airlock_json_set_str (b, "guest_kernel", hello ? hello->kernel_release : NULL);
  /* What recorded the workload, as the guest's hello said (protocol.h). */
  if (hello && airlock_recorder_to_string (hello->recorder))
    airlock_json_set_str (b, "recorder", airlock_recorder_to_string (hello->recorder));
  json_builder_end_object (b);
  json_builder_set_member_name (b, "qemu");
  json_builder_begin_object (b);
  airlock_json_set_str (b, "version", run->qemu_version);
  json_builder_end_object (b);
  json_builder_set_member_name (b, "libvirt");
  json_builder_begin_object (b);
  airlock_json_set_str (b, "version", run->libvirt_version);
  airlock_json_set_str (b, "uri", run->uri);
  json_builder_end_object (b);
  json_builder_set_member_name (b, "airlock");
  json_builder_begin_object (b);
  airlock_json_set_str (b, "version", AIRLOCK_VERSION);
  json_builder_end_object (b);
  json_builder_end_object (b);
}

static char *
manifest_json (AirlockBundle *bundle, const AirlockBundleInput *in, const AirlockRunRecord *run,
               const AirlockBundleFacts *facts, GPtrArray *files)
{
  AirlockChannel *channel = run->channel;
  const AirlockTrailer *trailer = airlock_channel_get_trailer (channel);
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autofree char *nonce = airlock_hex_encode (airlock_channel_get_nonce (channel), 32);

  json_builder_begin_object (b);
  airlock_json_set_str (b, "bundle", AIRLOCK_BUNDLE_FORMAT);
  airlock_json_set_str (b, "arch", airlock_arch_to_string (in->arch));
  /* Under this manifest's digests and HMAC: the bundle says which gate's
   * set it belongs to, so it cannot be passed off as another's. */
  if (in->gate_id)
    airlock_json_set_str (b, "gate", in->gate_id);

  json_builder_set_member_name (b, "case");
  json_builder_begin_object (b);
  airlock_json_set_str (b, "name", in->case_name);
  /* What the case asked for (what `airlock replay` runs again), then
   * what the supervisor was told to run. */
  airlock_json_set_strv (b, "args", in->args);
  airlock_json_set_strv (b, "env_set", in->env_set);
  airlock_json_set_str (b, "guest_program", in->guest_program);
  airlock_json_set_bool (b, "shell", in->shell);
  airlock_json_set_bool (b, "tty", in->tty);
  if (in->clock_ns)
    airlock_json_set_int (b, "clock_ns", (gint64) in->clock_ns);
  if (in->serve)
    airlock_json_set_strv (b, "serve", in->serve);
  airlock_json_set_strv (b, "argv", in->argv);
  airlock_json_set_strv (b, "env", in->envp);
  airlock_json_set_str (b, "cwd", in->cwd);
  airlock_json_set_str (b, "user", in->user);
  airlock_json_set_int (b, "timeout_ms", in->timeout_ms);
  /* Under a warped clock timeout_ms is the wall's limit, guest_time_ms the
   * guest's (what `airlock replay` runs again and verify judges by). */
  airlock_json_set_str (b, "clock", run->clock_warp ? "warp" : "real");
  if (run->clock_warp)
    airlock_json_set_int (b, "guest_time_ms", run->guest_time_ms);
  airlock_json_set_bool (b, "controls", in->controls);
  json_builder_end_object (b);

  manifest_inputs (b, in, run);

  json_builder_set_member_name (b, "run");
  json_builder_begin_object (b);
  airlock_json_set_str (b, "accel", run->accel);
  airlock_json_set_bool (b, "icount", in->icount);
  airlock_json_set_str (b, "domain", run->domain_name);
  airlock_json_set_str (b, "nonce", nonce);
  airlock_json_set_int (b, "heartbeat_ms", run->heartbeat_ms);
  airlock_json_set_int (b, "heartbeat_tolerance_ms", run->heartbeat_tolerance_ms);
  airlock_json_set_bool (b, "complete", run->complete);
  airlock_json_set_str (b, "reason", run->incomplete_reason);
  airlock_json_set_str (b, "pcap_error", run->pcap_error);
  /* Why a run the sinkhole served has no network.jsonl: verify gives the
   * run record the same reason (and a run no sinkhole served, none). */
  if (!run->sinkhole_records && run->sinkhole_served)
    airlock_json_set_str (b, "sinkhole_error", run->sinkhole_error);
  airlock_json_set_str (b, "chain_head", facts->chain_head);
  airlock_json_set_int (b, "frames", airlock_channel_get_frames (channel)->len);
  if (trailer)
    {
      airlock_json_set_int (b, "exit_status", trailer->exit_status);
      airlock_json_set_int (b, "end_reason", trailer->end_reason);
    }
  airlock_json_set_str (b, "started", facts->started);
  airlock_json_set_str (b, "finished", facts->finished);
  airlock_json_set_bool (b, "stdout_truncated", bundle->truncated[STREAM_STDOUT] || run->output_truncated);
  airlock_json_set_bool (b, "stderr_truncated", bundle->truncated[STREAM_STDERR]);
  airlock_json_set_bool (b, "console_truncated", bundle->truncated[STREAM_CONSOLE]);
  airlock_json_set_bool (b, "stdin_truncated", bundle->truncated[STREAM_STDIN]);
  json_builder_end_object (b);

  json_builder_set_member_name (b, "files");
  json_builder_begin_object (b);
  for (guint i = 0; i < files->len; i++)
    {
      const FileEntry *e = files->pdata[i];

      json_builder_set_member_name (b, e->name);
      json_builder_begin_object (b);
      airlock_json_set_str (b, "sha256", e->sha256);
      airlock_json_set_int (b, "size", (gint64) e->size);
      json_builder_end_object (b);
    }
  json_builder_end_object (b);
  json_builder_end_object (b);

  return airlock_json_builder_to_text (b, TRUE);
}

static gboolean
finish_files (AirlockBundle *bundle, const AirlockBundleInput *in, const AirlockRunRecord *run,
              GError **error)
{
  AirlockChannel *channel = run->channel;
  GPtrArray *events = run->events;
  GBytes *raw = airlock_channel_get_raw (channel);
  GBytes *spec = airlock_channel_get_spec (channel);
  GBytes *pcap = run->pcap;
  g_autoptr (GPtrArray) files = g_ptr_array_new_with_free_func (file_entry_free);
  g_autoptr (GByteArray) host = g_byte_array_new ();
  g_autofree char *chain = airlock_hex_encode (airlock_channel_get_chain_head (channel), 32);
  g_autofree char *chain_line = g_strconcat (chain, "\n", NULL);
  g_autofree char *frames = airlock_bundle_frames_jsonl (airlock_channel_get_frames (channel));
  g_autofree char *events_text = airlock_bundle_events_jsonl (in->arch, events);
  g_autofree char *policy = airlock_policy_to_text (in->policy);
  g_autofree char *evidence_sha = NULL;
  g_autofree char *started = rfc3339 (in->started_real_us);
  g_autofree char *finished = rfc3339 (in->finished_real_us);
  g_autofree char *verdict_text = NULL;
  g_autofree char *summary = NULL;
  g_autofree char *statement = NULL;
  g_autofree char *manifest = NULL;
  AirlockBundleFacts facts = { 0 };
  gsize hello_len;
  const guint8 *hello = airlock_channel_get_host_hello (channel, &hello_len);

  if (in->key && !airlock_bundle_key_check (in->key, "the bundle's HMAC key", error))
    return FALSE;
  g_mutex_lock (&bundle->lock);
  if (bundle->write_error)
    {
      g_set_error (error, AIRLOCK_BUNDLE_ERROR, AIRLOCK_BUNDLE_ERROR_IO, "%s",
                   bundle->write_error);
      g_mutex_unlock (&bundle->lock);
      return FALSE;
    }
  g_mutex_unlock (&bundle->lock);
  /* The streamed copy must be the channel's, byte for byte. */
  if (bundle->written[STREAM_EVIDENCE] != g_bytes_get_size (raw))
    {
      g_set_error (error, AIRLOCK_BUNDLE_ERROR, AIRLOCK_BUNDLE_ERROR_IO,
                   "'%s/evidence.bin' holds %" G_GUINT64_FORMAT " bytes but the channel received "
                   "%" G_GSIZE_FORMAT,
                   bundle->dir, bundle->written[STREAM_EVIDENCE], g_bytes_get_size (raw));
      return FALSE;
    }
  for (int s = 0; s < N_STREAMS; s++)
    if (!add_stream (bundle, files, (Stream) s, error))
      return FALSE;
  evidence_sha = g_strdup (((FileEntry *) files->pdata[STREAM_EVIDENCE])->sha256);

  g_byte_array_append (host, hello, (guint) hello_len);
  if (spec)
    g_byte_array_append (host, g_bytes_get_data (spec, NULL), (guint) g_bytes_get_size (spec));
  if (!add_written (bundle, files, "host.bin", host->data, host->len, error)
      || !add_text (bundle, files, "frames.jsonl", frames, error)
      || !add_text (bundle, files, "chain-head", chain_line, error)
      || !add_text (bundle, files, "events.jsonl", events_text, error)
      || !add_text (bundle, files, "policy.txt", policy, error))
    return FALSE;
  if (pcap && !add_written (bundle, files, "net.pcap", g_bytes_get_data (pcap, NULL),
                            g_bytes_get_size (pcap), error))
    return FALSE;
  /* The sinkhole's records as its process wrote them, byte for byte: what
   * verify reads back is what the run's verdict read. */
  if (run->sinkhole_records
      && !add_written (bundle, files, AIRLOCK_BUNDLE_NETWORK_FILE,
                       g_bytes_get_data (run->sinkhole_records, NULL),
                       g_bytes_get_size (run->sinkhole_records), error))
    return FALSE;

  facts.arch = in->arch;
  facts.case_name = in->case_name;
  if (in->image)
    {
      facts.reference = in->image->reference;
      facts.index_digest = in->image->index_digest;
      facts.manifest_digest = in->image->manifest_digest;
      facts.config_digest = in->image->config_digest;
    }
  facts.airlock_version = AIRLOCK_VERSION;
  facts.accel = run->accel;
  facts.recorder = airlock_channel_get_hello (run->channel)
                     ? airlock_recorder_to_string (airlock_channel_get_hello (run->channel)->recorder)
                     : NULL;
  facts.chain_head = chain;
  facts.evidence_sha256 = evidence_sha;
  facts.policy_text = policy;
  facts.started = started;
  facts.finished = finished;
  facts.events = events;
  facts.verdict = in->verdict;
  facts.sinkhole = run->sinkhole;
  facts.sinkhole_error = run->sinkhole || !run->sinkhole_served ? NULL : run->sinkhole_error;
  verdict_text = airlock_bundle_verdict_json (&facts);
  summary = airlock_bundle_summary_md (&facts);
  statement = airlock_bundle_statement_json (&facts);
  if (!add_text (bundle, files, "verdict.json", verdict_text, error)
      || !add_text (bundle, files, "summary.md", summary, error)
      || !add_text (bundle, files, "attestation.intoto.json", statement, error))
    return FALSE;

  manifest = manifest_json (bundle, in, run, &facts, files);
  if (!write_new_text (bundle, "manifest.json", manifest, error))
    return FALSE;
  if (in->key)
    {
      g_autoptr (GHmac) hmac = g_hmac_new (G_CHECKSUM_SHA256, g_bytes_get_data (in->key, NULL),
                                           g_bytes_get_size (in->key));
      g_autofree char *line = NULL;

      g_hmac_update (hmac, (const guchar *) manifest, (gssize) strlen (manifest));
      line = g_strconcat (g_hmac_get_string (hmac), "\n", NULL);
      if (!write_new_text (bundle, "manifest.hmac", line, error))
        return FALSE;
    }
  if (fsync (bundle->dirfd) < 0 || unlinkat (bundle->dirfd, AIRLOCK_BUNDLE_INCOMPLETE, 0) < 0
      || fsync (bundle->dirfd) < 0)
    {
      g_set_error (error, AIRLOCK_BUNDLE_ERROR, AIRLOCK_BUNDLE_ERROR_IO,
                   "cannot complete the bundle '%s': %s", bundle->dir, g_strerror (errno));
      return FALSE;
    }
  return TRUE;
}

void
airlock_bundle_abandon (AirlockBundle *bundle, const char *reason)
{
  /* Appended: nothing in a bundle is rewritten. */
  int fd = openat (bundle->dirfd, AIRLOCK_BUNDLE_INCOMPLETE,
                   O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);

  bundle->finished = TRUE;
  if (fd >= 0)
    {
      g_autofree char *line = g_strdup_printf ("not finished: %s\n", reason);

      (void) airlock_write_all (fd, (const guint8 *) line, strlen (line));
      (void) fsync (fd);
      close (fd);
    }
}

gboolean
airlock_bundle_finish (AirlockBundle *bundle, const AirlockBundleInput *input, GError **error)
{
  g_autoptr (GError) local = NULL;

  g_return_val_if_fail (!bundle->finished, FALSE);
  g_return_val_if_fail (input->record != NULL, FALSE);
  bundle->finished = TRUE;
  if (finish_files (bundle, input, input->record, &local))
    return TRUE;
  airlock_bundle_abandon (bundle, local->message);
  g_propagate_error (error, g_steal_pointer (&local));
  return FALSE;
}

void
airlock_bundle_free (AirlockBundle *bundle)
{
  if (!bundle)
    return;
  for (int i = 0; i < N_STREAMS; i++)
    if (bundle->fds[i] >= 0)
      {
        (void) fsync (bundle->fds[i]);
        close (bundle->fds[i]);
      }
  if (bundle->dirfd >= 0)
    close (bundle->dirfd);
  g_mutex_clear (&bundle->lock);
  g_free (bundle->write_error);
  g_free (bundle->dir);
  g_free (bundle);
}
