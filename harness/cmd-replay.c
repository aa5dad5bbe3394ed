/* airlock replay: run a bundle's case again, from the same pinned inputs,
 * and say whether it did the same.
 *
 * Every input the bundle pins is checked before anything boots: the image
 * (index, manifest and config digests, and every layer blob read through
 * and checked against its digest — a cached rootfs disk would otherwise
 * hide a changed blob), the guest kernel and initramfs, the supervisor
 * build.  A missing or changed one is refused, named with its expected
 * digest.  QEMU's and libvirt's versions are reported when they differ.
 * The case runs with the same arguments, env overrides, stdin, timeout,
 * controls and policy, and the guest clock set to the recorded run's start;
 * then the two runs' attempts are compared as multisets keyed by
 * (executable, system call, action, family, type, protocol, address, port,
 * DNS names), what the sinkhole served them as multisets of its records'
 * names and destinations (lib/bundle/bundle-network.h: the question and
 * type of each DNS query, each connection's name or address, port and
 * protocol), the controls by name, and the verdicts (replay-compare.c). */
#include "config.h"

#include "harness.h"
#include "replay.h"

#include <json-glib/json-glib.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* What one arch's replay said: its `--json` line (docs/json.md, replay).
 * Replays run one arch after the other, so one is current at a time. */
typedef struct {
  char *arch;
  char *bundle;
  GPtrArray *messages;     /* every line said for this arch, as printed */
  GPtrArray *differences;  /* char *, when it ran and differed */
  gboolean ran;
  guint attempts, network_calls;
  char *verdict;
  int status;              /* the arch's exit status */
} ReplayReport;

/* stdout, or stderr under --json (stdout then holds JSON Lines only). */
static FILE *text_out;
static ReplayReport *current;

/* Prints a line for people (@human: stdout or stderr) and keeps it, without
 * its newline, for the current arch's --json line. */
static G_GNUC_PRINTF (2, 3) void
say (FILE *human, const char *format, ...)
{
  va_list ap;
  g_autofree char *line = NULL;

  va_start (ap, format);
  line = g_strdup_vprintf (format, ap);
  va_end (ap);
  fputs (line, human == stdout && text_out ? text_out : human);
  if (current)
    g_ptr_array_add (current->messages, g_strdup (g_strchomp (line)));
}

static void
recorded_clear (Recorded *r)
{
  g_free (r->dir);
  if (r->root)
    json_node_unref (r->root);
}

static gint64
int_or (JsonObject *o, const char *name, gint64 fallback)
{
  gint64 v = fallback;

  (void) airlock_json_get_int (o, name, &v);
  return v;
}

static gboolean
load_recorded (const char *dir, Recorded *r, GError **error)
{
  g_autofree char *path = g_build_filename (dir, "manifest.json", NULL);
  g_autofree char *marker = g_build_filename (dir, "INCOMPLETE", NULL);

  r->dir = g_strdup (dir);
  if (g_file_test (marker, G_FILE_TEST_EXISTS))
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
                   "the bundle '%s' is incomplete (its run did not finish): nothing to replay", dir);
      return FALSE;
    }
  r->root = airlock_json_load_bounded (path, path, error);
  if (!r->root)
    return FALSE;
  if (!JSON_NODE_HOLDS_OBJECT (r->root)
      || g_strcmp0 (airlock_json_get_string (json_node_get_object (r->root), "bundle"), "airlock-bundle/v1") != 0)
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "'%s' is not an airlock bundle manifest",
                   path);
      return FALSE;
    }
  r->m = json_node_get_object (r->root);
  r->kase = airlock_json_get_object (r->m, "case");
  r->inputs = airlock_json_get_object (r->m, "inputs");
  r->image = airlock_json_get_object (r->inputs, "image");
  r->run = airlock_json_get_object (r->m, "run");
  if (!airlock_json_get_string (r->m, "arch") || !airlock_arch_from_string (airlock_json_get_string (r->m, "arch"), &r->arch))
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "'%s' names no arch airlock knows", path);
      return FALSE;
    }
  if (!r->image || !airlock_json_get_string (r->image, "reference") || !airlock_json_get_string (r->image, "manifest"))
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
                   "'%s' ran no image (a test program): replay runs image cases", path);
      return FALSE;
    }
  return TRUE;
}

/* The recorded reference with a relative path that is not there relative
 * to the working directory (the gate ran in another one: a CI job's
 * workspace) resolved against the bundle's directory, then the directory
 * holding it (a gate's --out, or where the artifacts were downloaded).
 * The reference as recorded when it names no path of ours, its path is
 * absolute or there, or neither directory has it: its error then says
 * what is missing. */
static char *
locate_recorded_reference (const char *ref, const char *bundle_dir)
{
  const char *colon = strchr (ref, ':');
  g_autofree char *transport = colon ? g_strndup (ref, (gsize) (colon - ref)) : NULL;
  g_autofree char *parent = g_path_get_dirname (bundle_dir);
  const char *const dirs[] = { bundle_dir, parent };
  g_auto (GStrv) parts = NULL;

  if (!transport || (!g_str_equal (transport, "oci") && !g_str_equal (transport, "oci-archive")
                     && !g_str_equal (transport, "docker-archive")))
    return g_strdup (ref);
  /* skopeo's syntax, as lib/image reads it: the path ends at the next ':'. */
  parts = g_strsplit (colon + 1, ":", 2);
  if (!parts[0] || !*parts[0] || g_path_is_absolute (parts[0])
      || g_file_test (parts[0], G_FILE_TEST_EXISTS))
    return g_strdup (ref);
  for (guint i = 0; i < G_N_ELEMENTS (dirs); i++)
    {
      g_autofree char *path = g_build_filename (dirs[i], parts[0], NULL);

      if (g_file_test (path, G_FILE_TEST_EXISTS))
        return parts[1] ? g_strdup_printf ("%s:%s:%s", transport, path, parts[1])
                        : g_strdup_printf ("%s:%s", transport, path);
    }
  return g_strdup (ref);
}

/* Prints one refusal line per input that is missing or changed.  @ref is
 * the image to check: the recorded reference (found as
 * locate_recorded_reference() finds it) or --image's, @given TRUE.  A
 * given image must be the recorded one by its arch's manifest digest (the
 * manifest binds the config and every layer); its index may differ (a
 * copy of one arch, a registry's index), which is only noted.  Sets
 * @ret_index_digest to the index digest @ref resolved to. */
static gboolean
check_inputs (const Recorded *r, const char *ref, gboolean given, AirlockSession *session,
              const char *cache_dir, guint *ret_refused, char **ret_index_digest)
{
  const char *arch_name = airlock_arch_to_string (r->arch);
  const char *pinned_manifest = airlock_json_get_string (r->image, "manifest");
  const AirlockGuestImage *guest = airlock_session_get_guest_image (session);
  JsonObject *kernel = airlock_json_get_object (r->inputs, "kernel"), *initramfs = airlock_json_get_object (r->inputs, "initramfs");
  JsonObject *supervisor = airlock_json_get_object (r->inputs, "supervisor");
  g_autoptr (AirlockImageSource) source = NULL;
  g_autoptr (AirlockImage) image = NULL;
  g_autoptr (GError) error = NULL;
  guint refused = 0;

#define REFUSE(...)                                                             \
  do                                                                            \
    {                                                                           \
      g_autofree char *refusal_ = g_strdup_printf (__VA_ARGS__);                \
      say (stdout, "%s: refused: %s\n", arch_name, refusal_);                   \
      refused++;                                                                \
    }                                                                           \
  while (0)

  source = airlock_image_source_open_cached (ref, cache_dir, &error);
  if (source)
    image = airlock_image_resolve (source, r->arch, &error);
  if (!image)
    {
      REFUSE ("image %s (manifest %s): %s", ref, pinned_manifest, error->message);
      if (!given)
        say (stdout, "%s: give the image again with --image REF (any transport airlock takes; it must "
                "resolve to manifest %s for %s)\n", arch_name, pinned_manifest, arch_name);
    }
  else if (given && g_strcmp0 (image->manifest_digest, pinned_manifest) != 0)
    /* Nothing else is compared: a different manifest is a different image. */
    REFUSE ("--image %s resolves to manifest %s for %s, the bundle pins manifest %s: "
            "not the image the bundle ran", ref, image->manifest_digest, arch_name, pinned_manifest);
  else
    {
      static const char *const fields[] = { "index", "manifest", "config" };
      const char *have[] = { image->index_digest, image->manifest_digest, image->config_digest };
      JsonNode *layers_node = json_object_get_member (r->image, "layers");
      JsonArray *layers = layers_node && JSON_NODE_HOLDS_ARRAY (layers_node)
                              ? json_node_get_array (layers_node) : NULL;

      for (guint i = 0; i < G_N_ELEMENTS (fields); i++)
        if (g_strcmp0 (airlock_json_get_string (r->image, fields[i]), have[i]) != 0)
          {
            if (given && i == 0)
              say (stdout, "%s: note: --image %s lists the manifest in index %s, the bundle's run in %s\n",
                      arch_name, ref, have[i] ? have[i] : "(none)",
                      airlock_json_get_string (r->image, fields[i]) ? airlock_json_get_string (r->image, fields[i]) : "(none)");
            else
              REFUSE ("image %s: its %s is %s, the bundle pins %s", ref, fields[i],
                      have[i] ? have[i] : "(none)", airlock_json_get_string (r->image, fields[i]) ? airlock_json_get_string (r->image, fields[i]) : "(none)");
          }
      *ret_index_digest = g_strdup (image->index_digest);
      if (!layers || json_array_get_length (layers) != image->layers->len)
        REFUSE ("image %s: %u layers, the bundle pins %u", ref, image->layers->len,
                layers ? json_array_get_length (layers) : 0);
      /* Every layer read through and checked now: the cached rootfs disk
       * would otherwise stand in for a blob that changed. */
      for (guint i = 0; i < image->layers->len; i++)
        {
          const AirlockImageLayer *l = image->layers->pdata[i];
          g_autoptr (GInputStream) in = NULL;
          g_autoptr (GError) lerror = NULL;
          guint8 buf[65536];
          gssize n = 0;

          in = airlock_image_open_layer (source, l, &lerror);
          while (in && (n = g_input_stream_read (in, buf, sizeof buf, NULL, &lerror)) > 0)
            ;
          if (!in || n < 0)
            REFUSE ("image %s: layer blob %s: %s", ref, l->digest, lerror->message);
        }
    }
  if (g_strcmp0 (airlock_json_get_string (kernel, "sha256"), guest->kernel_sha256) != 0)
    REFUSE ("guest kernel: the bundle pins sha256 %s (%s), this airlock has %s (%s)",
            airlock_json_get_string (kernel, "sha256"), airlock_json_get_string (kernel, "source") ? airlock_json_get_string (kernel, "source") : "?",
            guest->kernel_sha256, guest->kernel_source);
  if (g_strcmp0 (airlock_json_get_string (initramfs, "sha256"), guest->initramfs_sha256) != 0)
    REFUSE ("guest initramfs: the bundle pins sha256 %s, this airlock builds %s",
            airlock_json_get_string (initramfs, "sha256"), guest->initramfs_sha256);
  {
    g_autofree char *init_path = g_strdup_printf ("%s/init-%s", airlock_guest_programs_dir (), arch_name);
    g_autofree char *init_sha = airlock_sha256_file (init_path, NULL);

    if (g_strcmp0 (airlock_json_get_string (supervisor, "sha256"), init_sha) != 0)
      REFUSE ("supervisor: the bundle pins guest init sha256 %s, '%s' is %s",
              airlock_json_get_string (supervisor, "sha256"), init_path, init_sha ? init_sha : "missing");
  }
#undef REFUSE
  *ret_refused = refused;
  return refused == 0;
}

/* The recorded run's start, as the guest clock of the replay. */
static guint64
recorded_clock_ns (const Recorded *r)
{
  gint64 set = int_or (r->kase, "clock_ns", 0);
  g_autoptr (GDateTime) t = NULL;

  if (set > 0)
    return (guint64) set;
  if (airlock_json_get_string (r->run, "started"))
    t = g_date_time_new_from_iso8601 (airlock_json_get_string (r->run, "started"), NULL);
  return t ? (guint64) g_date_time_to_unix (t) * 1000000000u : 0;
}

/* With --out: the replay's bundles make a set of their own, as a gate's
 * do (lib/bundle/bundle-set.c), written after the last arch. */
typedef struct {
  char *gate_id;
  gboolean arches[AIRLOCK_N_ARCHES];   /* the arches replayed */
  char *reference, *index_digest;      /* the image as the bundles record it */
} ReplaySet;

static void
replay_set_clear (ReplaySet *set)
{
  g_free (set->gate_id);
  g_free (set->reference);
  g_free (set->index_digest);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (ReplaySet, replay_set_clear)

/* Replays one bundle; returns the exit status for it. */
static int
replay_arch (const char *dir, const AirlockSessionOptions *options, const char *clock_name,
            const char *image_ref, const char *const *serve,
            const char *out_dir, GBytes *key, ReplaySet *set)
{
  AirlockSessionOptions opts = *options;
  const AirlockSessionOptions *session_opts = &opts;
  Recorded r = { NULL };
  g_autoptr (GError) error = NULL;
  g_autoptr (AirlockSession) session = NULL;
  g_autoptr (AirlockCase) c = NULL;
  g_autoptr (AirlockResult) result = NULL;
  g_autoptr (GPtrArray) diffs = g_ptr_array_new_with_free_func (g_free);
  g_auto (GStrv) args = NULL;
  g_auto (GStrv) env_set = NULL;
  g_autofree char *policy_path = NULL;
  g_autoptr (GBytes) policy_text = NULL;
  g_autoptr (AirlockPolicy) policy = NULL;
  g_autoptr (GBytes) stdin_bytes = NULL;
  g_autofree char *ref = NULL;
  g_autofree char *index_digest = NULL;
  const char *arch_name;
  guint refused = 0;
  int status = HARNESS_EXIT_OK;
  gboolean compared_network;

  if (!load_recorded (dir, &r, &error))
    {
      say (stderr, "airlock replay: %s\n", error->message);
      recorded_clear (&r);
      return HARNESS_EXIT_REPLAY_INPUT;
    }
  arch_name = airlock_arch_to_string (r.arch);
  current->arch = g_strdup (arch_name);
  /* The recorded clock unless told otherwise: a bundle from before the
   * warped clock ran on the real one. */
  if (!clock_name)
    clock_name = airlock_json_get_string (r.kase, "clock") ? airlock_json_get_string (r.kase, "clock")
                                                            : "real";
  if (!airlock_clock_from_string (clock_name, &opts.clock))
    {
      say (stderr, "airlock replay: %s: the bundle records clock '%s', which this airlock "
               "does not know\n", arch_name, clock_name);
      recorded_clear (&r);
      return HARNESS_EXIT_REPLAY_INPUT;
    }
  session = airlock_session_new (r.arch, session_opts, &error);
  harness_progress_done ();
  if (!session)
    {
      say (stderr, "airlock replay: %s: %s\n", arch_name, error->message);
      recorded_clear (&r);
      return HARNESS_EXIT_SETUP;
    }
  if (image_ref)
    ref = g_strdup (image_ref);
  else
    {
      const char *recorded = airlock_json_get_string (r.image, "reference");

      ref = locate_recorded_reference (recorded, dir);
      if (!g_str_equal (ref, recorded))
        say (stderr, "airlock: %s: the recorded image %s is not in the working directory; "
                 "using %s, next to the bundle\n", arch_name, recorded, ref);
    }
  if (!check_inputs (&r, ref, image_ref != NULL, session, opts.cache_dir, &refused, &index_digest))
    {
      say (stdout, "%s: not replayed: %u pinned input%s missing or changed\n", arch_name, refused,
              refused == 1 ? " is" : "s are");
      recorded_clear (&r);
      return HARNESS_EXIT_REPLAY_INPUT;
    }
  if (replay_bool_or (r.kase, "shell", FALSE))
    {
      /* What was typed depended on what the terminal showed: a rerun of
       * the bytes is not the same session. */
      say (stdout, "%s: not replayed: an interactive `airlock shell` session is not a case to rerun\n",
              arch_name);
      recorded_clear (&r);
      return HARNESS_EXIT_REPLAY_INPUT;
    }
  if (replay_bool_or (r.run, "stdin_truncated", FALSE))
    {
      say (stdout, "%s: not replayed: the recorded stdin was cut at the bundle's cap\n", arch_name);
      recorded_clear (&r);
      return HARNESS_EXIT_REPLAY_INPUT;
    }

  c = airlock_case_new (ref);
  airlock_case_set_name (c, airlock_json_get_string (r.kase, "name"));
  args = airlock_json_get_strv (r.kase, "args", NULL);
  airlock_case_set_args (c, (const char *const *) args);
  env_set = airlock_json_get_strv (r.kase, "env_set", NULL);
  for (guint i = 0; env_set && env_set[i]; i++)
    {
      const char *eq = strchr (env_set[i], '=');
      g_autofree char *name = eq ? g_strndup (env_set[i], (gsize) (eq - env_set[i])) : g_strdup (env_set[i]);

      airlock_case_set_env (c, name, eq ? eq + 1 : NULL);
    }
  airlock_case_set_timeout (c, (guint) MAX (1, int_or (r.kase, "timeout_ms", 30000) / 1000));
  if (int_or (r.kase, "guest_time_ms", 0) > 0)
    airlock_case_set_guest_time (c, (guint) MAX (1, int_or (r.kase, "guest_time_ms", 0) / 1000));
  airlock_case_set_controls (c, replay_bool_or (r.kase, "controls", TRUE));
  airlock_case_set_clock (c, recorded_clock_ns (&r));
  /* The fixtures the run served, by digest: given again with the same
   * bytes, or the replay would answer the workload differently. */
  {
    g_auto (GStrv) recorded = airlock_json_get_strv (r.kase, "serve", NULL);
    g_autoptr (GPtrArray) given = g_ptr_array_new_with_free_func (g_free);
    g_autoptr (GError) serve_error = NULL;

    if (!harness_apply_serve (c, serve, given, &serve_error))
      {
        say (stderr, "airlock replay: %s\n", serve_error->message);
        recorded_clear (&r);
        return HARNESS_EXIT_USAGE;
      }
    for (guint i = 0; recorded && recorded[i]; i++)
      {
        gboolean found = FALSE;
        for (guint k = 0; k < given->len && !found; k++)
          found = g_str_equal (given->pdata[k], recorded[i]);
        if (!found)
          {
            say (stderr, "airlock replay: %s: the run served the fixture %s: give it again "
                     "with --serve NAME:PORT=FILE holding the same bytes\n", arch_name, recorded[i]);
            recorded_clear (&r);
            return HARNESS_EXIT_REPLAY_INPUT;
          }
      }
    for (guint k = 0; k < given->len; k++)
      if (!recorded || !g_strv_contains ((const char *const *) recorded, given->pdata[k]))
        {
          say (stderr, "airlock replay: %s: --serve gives %s, which the run did not serve\n",
                   arch_name, (const char *) given->pdata[k]);
          recorded_clear (&r);
          return HARNESS_EXIT_REPLAY_INPUT;
        }
  }
  /* The recorded run's files, read as verify reads them: a bundle from
   * anywhere may hold a FIFO or a huge file where one should be. */
  policy_path = g_build_filename (dir, "policy.txt", NULL);
  policy_text = airlock_bundle_read_file (dir, "policy.txt", &error);
  policy = airlock_policy_new_default ();
  if (!policy_text
      || !airlock_policy_append (policy, g_bytes_get_data (policy_text, NULL),
                                 g_bytes_get_size (policy_text), policy_path, &error))
    {
      say (stderr, "airlock replay: %s: %s\n", arch_name, error->message);
      recorded_clear (&r);
      return HARNESS_EXIT_REPLAY_INPUT;
    }
  airlock_case_set_policy (c, policy);
  stdin_bytes = airlock_bundle_read_file (dir, "stdin", &error);
  if (!stdin_bytes)
    {
      say (stderr, "airlock replay: %s: %s\n", arch_name, error->message);
      recorded_clear (&r);
      return HARNESS_EXIT_REPLAY_INPUT;
    }
  airlock_case_set_stdin_bytes (c, stdin_bytes);
  if (out_dir)
    {
      g_autofree char *bundle = g_build_filename (out_dir, arch_name, NULL);

      airlock_case_set_bundle_dir (c, bundle);
      airlock_case_set_bundle_key (c, key);
      airlock_case_set_bundle_gate (c, set->gate_id);
      set->arches[r.arch] = TRUE;
      if (!set->reference)
        {
          set->reference = g_strdup (ref);
          set->index_digest = g_strdup (index_digest);
        }
    }

  say (stderr, "airlock: %s: replaying %s (%s), clock %s\n", arch_name, dir,
           airlock_json_get_string (r.image, "manifest"), airlock_clock_to_string (opts.clock));
  result = airlock_session_run (session, c, &error);
  if (!result)
    {
      say (stderr, "airlock replay: %s: %s\n", arch_name, error->message);
      recorded_clear (&r);
      return error->domain == AIRLOCK_IMAGE_ERROR ? HARNESS_EXIT_REPLAY_INPUT : HARNESS_EXIT_SETUP;
    }
  {
    JsonObject *qemu = airlock_json_get_object (r.inputs, "qemu"), *libvirt = airlock_json_get_object (r.inputs, "libvirt");
    const char *qemu_now = airlock_result_get_record (result)->qemu_version;
    const char *libvirt_now = airlock_result_get_record (result)->libvirt_version;

    if (g_strcmp0 (airlock_json_get_string (qemu, "version"), qemu_now) != 0)
      say (stdout, "%s: note: QEMU %s recorded, %s now\n", arch_name, airlock_json_get_string (qemu, "version"), qemu_now);
    if (g_strcmp0 (airlock_json_get_string (libvirt, "version"), libvirt_now) != 0)
      say (stdout, "%s: note: libvirt %s recorded, %s now\n", arch_name, airlock_json_get_string (libvirt, "version"), libvirt_now);
  }
  if (!replay_compare (&r, result, diffs, &compared_network, &error))
    {
      say (stderr, "airlock replay: %s: %s\n", arch_name, error->message);
      recorded_clear (&r);
      return HARNESS_EXIT_REPLAY_INPUT;
    }
  if (!compared_network)
    say (stdout, "%s: note: the recorded run has no network.jsonl (a bundle from before the sinkhole): "
            "what its network served is not compared\n", arch_name);
  {
    GPtrArray *calls = airlock_result_get_attempts (result);

    /* Counted as the gate's table counts attempts (egress: a destination
     * off the guest); every network call was compared. */
    current->ran = TRUE;
    current->network_calls = calls->len;
    for (guint i = 0; i < calls->len; i++)
      if (((const AirlockAttempt *) calls->pdata[i])->egress)
        current->attempts++;
    current->verdict = g_strdup (airlock_verdict_kind_to_string (airlock_result_get_verdict (result)));
    for (guint i = 0; i < diffs->len; i++)
      g_ptr_array_add (current->differences, g_strdup (diffs->pdata[i]));
  }
  if (diffs->len == 0)
    {
      GPtrArray *calls = airlock_result_get_attempts (result);
      guint n_egress = current->attempts;

      say (stdout, "%s: same: %u attempt%s (of %u network call%s),%s the controls and the verdict (%s) "
              "as recorded\n", arch_name, n_egress, n_egress == 1 ? "" : "s", calls->len,
              calls->len == 1 ? "" : "s",
              compared_network ? " the network's names and destinations," : "",
              airlock_verdict_kind_to_string (airlock_result_get_verdict (result)));
    }
  else
    {
      say (stdout, "%s: different (%u):\n", arch_name, diffs->len);
      for (guint i = 0; i < diffs->len; i++)
        say (stdout, "  %s\n", (const char *) diffs->pdata[i]);
      status = HARNESS_EXIT_FAIL;
    }
  if (airlock_result_get_bundle_dir (result))
    say (stderr, "airlock: %s: the replay's bundle is in %s%s%s\n", arch_name,
             airlock_result_get_bundle_dir (result),
             airlock_result_get_bundle_error (result) ? ", incomplete: " : "",
             airlock_result_get_bundle_error (result) ? airlock_result_get_bundle_error (result) : "");
  recorded_clear (&r);
  return status;
}

static void
replay_report_free (ReplayReport *rep)
{
  g_free (rep->arch);
  g_free (rep->bundle);
  g_ptr_array_unref (rep->messages);
  g_ptr_array_unref (rep->differences);
  g_free (rep->verdict);
  g_free (rep);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (ReplayReport, replay_report_free)

/* The replay's outcome in one word, from its exit status. */
static const char *
replay_outcome (int status)
{
  switch (status)
    {
    case HARNESS_EXIT_OK:
      return "same";
    case HARNESS_EXIT_FAIL:
      return "different";
    case HARNESS_EXIT_REPLAY_INPUT:
      return "not-replayed";
    default:
      return "error";
    }
}

static void
add_replay_members (JsonBuilder *b, const ReplayReport *rep)
{
  airlock_json_set_str (b, "arch", rep->arch);
  airlock_json_set_str (b, "bundle", rep->bundle);
  airlock_json_set_str (b, "outcome", replay_outcome (rep->status));
  airlock_json_set_int (b, "exit_status", rep->status);
  /* Counts of a replay that did not run are null, not 0. */
  json_builder_set_member_name (b, "attempts");
  if (rep->ran)
    json_builder_add_int_value (b, rep->attempts);
  else
    json_builder_add_null_value (b);
  json_builder_set_member_name (b, "network_calls");
  if (rep->ran)
    json_builder_add_int_value (b, rep->network_calls);
  else
    json_builder_add_null_value (b);
  airlock_json_set_str (b, "verdict", rep->verdict);
  airlock_json_set_string_array (b, "differences", rep->differences);
  airlock_json_set_string_array (b, "messages", rep->messages);
}

/* Replays the bundle in @dir; under --json (@reports non-NULL) prints its
 * `replay` line and keeps what the summary needs. */
static int
replay_one (const char *dir, const AirlockSessionOptions *options, const char *clock_name,
            const char *image_ref, const char *const *serve,
            const char *out_dir, GBytes *key, ReplaySet *set, GPtrArray *reports)
{
  ReplayReport *rep = g_new0 (ReplayReport, 1);
  int status;

  rep->bundle = g_strdup (dir);
  rep->messages = g_ptr_array_new_with_free_func (g_free);
  rep->differences = g_ptr_array_new_with_free_func (g_free);
  current = rep;
  status = replay_arch (dir, options, clock_name, image_ref, serve, out_dir, key, set);
  current = NULL;
  if (reports)
    {
      g_autoptr (JsonBuilder) b = json_builder_new ();

      json_builder_begin_object (b);
      airlock_json_set_str (b, "type", "replay");
      rep->status = status;
      add_replay_members (b, rep);
      json_builder_end_object (b);
      harness_print_json_line (b);
      g_ptr_array_add (reports, rep);
    }
  else
    replay_report_free (rep);
  return status;
}

/* The last line under --json, whatever happened once the options parsed. */
static void
print_summary (int status, GPtrArray *reports, const char *error)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();

  json_builder_begin_object (b);
  airlock_json_set_str (b, "type", "summary");
  airlock_json_set_str (b, "command", "replay");
  airlock_json_set_int (b, "exit_status", status);
  airlock_json_set_str (b, "outcome", reports && reports->len ? replay_outcome (status) : "error");
  airlock_json_set_str (b, "error", error);
  json_builder_set_member_name (b, "arches");
  json_builder_begin_array (b);
  for (guint i = 0; reports && i < reports->len; i++)
    {
      json_builder_begin_object (b);
      add_replay_members (b, reports->pdata[i]);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);
  harness_print_json_line (b);
}

/* An error after the options parsed: said on stderr, kept for the --json
 * summary, which still comes last. */
#define FAIL(code, ...)                                                        \
  do                                                                           \
    {                                                                          \
      failure = g_strdup_printf (__VA_ARGS__);                                 \
      fprintf (stderr, "airlock replay: %s\n", failure);                       \
      status = (code);                                                         \
      goto done;                                                               \
    }                                                                          \
  while (0)

int
cmd_replay (int argc, char **argv)
{
  g_autofree char *arch_spec = NULL;
  g_autofree char *uri = NULL;
  g_autofree char *accel_name = NULL;
  g_autofree char *cache_dir = NULL;
  g_autofree char *out_dir = NULL;
  g_autofree char *key_file = NULL;
  g_autoptr (GBytes) key = NULL;
  g_autofree char *clock_name = NULL;
  g_autofree char *image_ref = NULL;
  g_auto (GStrv) serve = NULL;
  g_autoptr (GPtrArray) reports = g_ptr_array_new_with_free_func ((GDestroyNotify) replay_report_free);
  g_autofree char *failure = NULL;
  gboolean json = FALSE;
  gboolean icount = FALSE;
  gboolean arches[AIRLOCK_N_ARCHES] = { TRUE, TRUE };
  AirlockClock clock = AIRLOCK_CLOCK_WARP;
  AirlockAccel accel = AIRLOCK_ACCEL_AUTO;
  AirlockSessionOptions session_opts = { 0 };
  g_autoptr (GError) error = NULL;
  g_autoptr (GOptionContext) ctx = g_option_context_new ("BUNDLE_DIR - run a bundle's case again from "
                                                         "the same pinned inputs and compare");
  GOptionEntry entries[] = {
    { "arch", 'a', 0, G_OPTION_ARG_STRING, &arch_spec,
      "with a directory of ARCH/ bundles: the arch to replay (default: every one)", "ARCH" },
    { "clock", 0, 0, G_OPTION_ARG_STRING, &clock_name,
      "the guest's clock: warp (it runs ahead while the guest is idle; TCG only) or real (default: as recorded)", "CLOCK" },
    { "icount", 0, 0, G_OPTION_ARG_NONE, &icount,
      "the older name of --clock warp (QEMU's deterministic instruction counting, -icount)", NULL },
    { "image", 'i', 0, G_OPTION_ARG_STRING, &image_ref,
      "the image the bundle ran, from REF (any transport) instead of the recorded reference: "
      "refused unless it resolves to the manifest digest the bundle pins", "REF" },
    { "serve", 0, 0, G_OPTION_ARG_STRING_ARRAY, &serve,
      "the fixture the bundle's run served NAME on PORT (the same bytes: its manifest names their SHA-256; repeatable)",
      "NAME:PORT=FILE" },
    { "out", 'o', 0, G_OPTION_ARG_FILENAME, &out_dir, "write the replay's bundle to DIR/ARCH/", "DIR" },
    { "key-file", 0, 0, G_OPTION_ARG_FILENAME, &key_file, "with --out: sign the replay's bundle", "FILE" },
    { "connect", 'c', 0, G_OPTION_ARG_STRING, &uri,
      "libvirt URI (default: $AIRLOCK_CONNECT, else the embedded driver)", "URI" },
    { "accel", 0, 0, G_OPTION_ARG_STRING, &accel_name, "auto, tcg or kvm (default: auto)", "ACCEL" },
    { "cache-dir", 0, 0, G_OPTION_ARG_FILENAME, &cache_dir,
      "cache directory (default: $AIRLOCK_CACHE_DIR or ~/.cache/airlock)", "DIR" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &json,
      "print JSON Lines only on stdout: a replay line per arch, a summary last (docs/json.md); text goes to stderr", NULL },
    { NULL },
  };
  int status = HARNESS_EXIT_OK;
  guint n = 0;
  g_auto (ReplaySet) set = { NULL };

  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    {
      fprintf (stderr, "airlock replay: %s\n", error->message);
      return HARNESS_EXIT_USAGE;
    }
  text_out = json ? stderr : stdout;
  if (argc != 2)
    FAIL (HARNESS_EXIT_USAGE, "give one bundle directory");
  if (arch_spec && !harness_parse_arches (arch_spec, arches, &error))
    {
      FAIL (HARNESS_EXIT_USAGE, "%s", error->message);
    }
  if (accel_name && !airlock_accel_from_string (accel_name, &accel))
    {
      FAIL (HARNESS_EXIT_USAGE, "unknown accelerator '%s' (expected auto, tcg or kvm)", accel_name);
    }
  if (icount && clock_name && !g_str_equal (clock_name, "warp"))
    {
      FAIL (HARNESS_EXIT_USAGE, "--icount is --clock warp: give one or the other");
    }
  if (icount && !clock_name)
    clock_name = g_strdup ("warp");
  if (clock_name && !harness_parse_clock ("airlock replay", clock_name, accel, -1, 0, &clock))
    {
      /* It said why on stderr. */
      failure = g_strdup_printf ("--clock %s refused", clock_name);
      status = HARNESS_EXIT_USAGE;
      goto done;
    }
  if (key_file)
    {
      if (!out_dir)
        {
          FAIL (HARNESS_EXIT_USAGE, "--key-file signs the bundle of --out DIR: give --out too");
        }
      if (!(key = airlock_bundle_key_load (key_file, &error)))
        {
          FAIL (HARNESS_EXIT_USAGE, "--key-file: %s", error->message);
        }
    }
  session_opts.uri = uri;
  session_opts.cache_dir = cache_dir;
  session_opts.accel = accel;
  session_opts.progress = harness_progress;

  if (out_dir)
    {
      g_autofree char *record = g_build_filename (out_dir, AIRLOCK_BUNDLE_SET_FILE, NULL);

      if (g_file_test (record, G_FILE_TEST_EXISTS | G_FILE_TEST_IS_SYMLINK))
        {
          FAIL (HARNESS_EXIT_USAGE, "'%s' exists; a set of bundles is never overwritten",
                   record);
        }
      set.gate_id = airlock_bundle_set_new_id ();
    }
  if (harness_is_bundle (argv[1]))
    status = replay_one (argv[1], &session_opts, clock_name, image_ref, (const char *const *) serve, out_dir, key,
                         &set, json ? reports : NULL);
  else
    for (unsigned a = 0; a < AIRLOCK_N_ARCHES; a++)
      {
        g_autofree char *sub = g_build_filename (argv[1], airlock_arch_to_string ((AirlockArch) a), NULL);

        if (!arches[a] || !g_file_test (sub, G_FILE_TEST_IS_DIR))
          continue;
        n++;
        {
          /* Not inside MAX(): a macro would replay twice. */
          int s = replay_one (sub, &session_opts, clock_name, image_ref, (const char *const *) serve, out_dir,
                             key, &set, json ? reports : NULL);

          status = MAX (status, s);
        }
      }
  if (n == 0 && !harness_is_bundle (argv[1]))
    {
      FAIL (HARNESS_EXIT_USAGE, "'%s' holds no manifest.json and no bundle for the arch asked",
               argv[1]);
    }
  if (out_dir && (set.arches[AIRLOCK_ARCH_AMD64] || set.arches[AIRLOCK_ARCH_ARM64]))
    {
      AirlockBundleSetInput in = {
        .gate_id = set.gate_id,
        .arches = set.arches,
        .reference = set.reference,
        .index_digest = set.index_digest,
        .key = key,
      };

      if (!airlock_bundle_set_write (out_dir, &in, &error))
        {
          failure = g_strdup_printf ("the replay's set record: %s", error->message);
          fprintf (stderr, "airlock replay: %s\n", failure);
          status = MAX (status, HARNESS_EXIT_SETUP);
        }
    }
done:
  if (json)
    print_summary (status, reports, failure);
  return status;
}
