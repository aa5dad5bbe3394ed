/* Runs the sample OCI images (images/sample) the way `airlock run --image`
 * does, on both arches, and checks what a user relies on:
 *
 *   clean         runs to completion with no attempt at all (the only record
 *                 is the entrypoint's execve), and from inside the workload:
 *                 the image's User (app, 1000:1000), WorkingDir (/srv), Env,
 *                 and a whiteout-deleted file that is really absent;
 *   egress        (from the oci-archive) its exact attempts, each recorded
 *                 (the DNS query and the connects at the kernel's socket
 *                 hooks) and answered by the sinkhole network
 *                 (the DNS query gets example.com's address, both connects
 *                 are accepted), and the digests it is bound to: the same
 *                 index, manifest and config as the OCI layout of the same
 *                 image, and the blobs' own SHA-256;
 *   clean-cached  a second run reuses the cached rootfs disk: the same file,
 *                 no layer extracted again.
 *
 * Paths: /image-run/<arch>/<case>; six boots in all.  Needs QEMU for both
 * arches, the guest images (built into $AIRLOCK_CACHE_DIR on first use),
 * libguestfs for the rootfs disks (built into $AIRLOCK_CACHE_DIR/image on
 * first use) and the sample images ($AIRLOCK_SAMPLE_DIR, <build>/images/sample);
 * skips with the reason when the guest image or the samples are missing. */
#include "config.h"

#include <airlock.h>

#include "evidence/event.h"
#include "protocol.h"
#include "probe-controls.h"
#include "vm-test-util.h"

#include <string.h>
#include <sys/stat.h>

#define IMAGE_ROOT "/airlock/image"
#define IMAGE_DISK_SERIAL "airlock-root"
#define DEFAULT_PATH "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#define RUN_TIMEOUT_MS 30000

static const char clean_stdin[] = "id\n"
                                  "cwd\n"
                                  "getenv AIRLOCK_SAMPLE\n"
                                  "getenv PATH\n"
                                  "exists /etc/airlock-deleted\n"
                                  "exists /bin/sh\n"
                                  "quit\n";

/* The records each sample must produce: a multiset of key lines, nothing
 * missing, nothing extra. */
static const char *const clean_records[] = {
  "execve continue -",
  NULL,
};
static const char *const egress_records[] = {
  "execve continue -",
  "socket continue inet/dgram/udp -",
  "sendto continue inet/dgram/udp 10.0.2.3:53 dns=example.com.",
  "socket continue inet/stream/tcp -",
  "connect continue inet/stream/tcp 198.18.243.18:80",
  "sendto continue inet/stream/tcp 198.18.243.18:80",
  "socket continue inet/stream/tcp -",
  "connect continue inet/stream/tcp 198.18.243.18:443",
  "sendto continue inet/stream/tcp 198.18.243.18:443",
  NULL,
};

/* What egress-probe prints inside airlock: the sinkhole answers its query
 * with the address it hands out for example.com (the same in every run:
 * docs/sinkhole.md), accepts both connections, takes in the request and
 * the ClientHello and closes without a reply (no fixture was served). */
static const char egress_stdout[] =
  "egress-probe: example.com (198.51.100.80 without an answer), ports 53/udp, 80/tcp, 443/tcp\n"
  "dns: query for example.com sent to 10.0.2.3:53\n"
  "dns: example.com A 198.18.243.18\n"
  "http: connected to 198.18.243.18:80\n"
  "http: sent 90 bytes\n"
  "http: closed without a reply\n"
  "https: connected to 198.18.243.18:443\n"
  "https: sent 114 bytes\n"
  "https: closed without a reply\n"
  "egress-probe: done\n";

static char *cache_dir;
static VmTestImages guest_images;

/* The clean disk of each arch as the first run saw it, for the cached run. */
static char *clean_disks[AIRLOCK_N_ARCHES];
static struct stat clean_disk_stats[AIRLOCK_N_ARCHES];

static AirlockGuestImage *
guest_image_for (AirlockArch arch)
{
  AirlockGuestImageOptions o = { .cache_dir = cache_dir };

  return vm_test_guest_image (&guest_images, arch, &o, "guest image");
}

/* "oci:<samples>/NAME" or "oci-archive:<samples>/NAME.tar", or NULL (the
 * test skipped) when the sample is not there. */
static char *
sample_reference (const char *transport, const char *name)
{
  const char *dir = g_getenv ("AIRLOCK_SAMPLE_DIR");
  g_autofree char *path = NULL;

  if (!dir)
    {
      g_test_skip ("AIRLOCK_SAMPLE_DIR is not set (run through meson test)");
      return NULL;
    }
  if (g_str_equal (transport, "oci-archive"))
    {
      g_autofree char *file = g_strconcat (name, ".tar", NULL);
      path = g_build_filename (dir, file, NULL);
    }
  else
    path = g_build_filename (dir, name, NULL);
  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    {
      g_autofree char *msg = g_strdup_printf ("sample image '%s' is not built (-Dsample_images=false?)",
                                              path);
      g_test_skip (msg);
      return NULL;
    }
  return g_strconcat (transport, ":", path, NULL);
}

static void
collect_stage (const char *stage, guint64 done, guint64 total, gpointer user_data)
{
  GPtrArray *stages = user_data;

  if (stages->len == 0 || !g_str_equal (g_ptr_array_index (stages, stages->len - 1), stage))
    g_ptr_array_add (stages, g_strdup (stage));
}

/* The rootfs disk of @image, with every progress stage it reported in
 * @stages. */
static char *
ensure_disk (AirlockImageSource *source, const AirlockImage *image, GPtrArray *stages)
{
  g_autoptr (GError) error = NULL;
  AirlockImageDiskOptions o = {
    .cache_dir = cache_dir,
    .progress = collect_stage,
    .progress_data = stages,
  };
  g_autofree char *disk = airlock_image_disk_ensure (source, image, &o, &error);
  g_autofree char *image_cache = g_build_filename (cache_dir, "image", NULL);
  const char *hex = strchr (image->manifest_digest, ':') + 1;

  g_assert_no_error (error);
  g_assert_nonnull (disk);
  for (guint i = 0; i < stages->len; i++)
    g_test_message ("%s %s: disk: %s", airlock_arch_to_string (image->arch), image->reference,
                    (const char *) stages->pdata[i]);
  /* In the test cache, keyed by this arch's manifest digest. */
  g_assert_true (g_str_has_prefix (disk, image_cache));
  g_assert_nonnull (strstr (disk, hex));
  return g_steal_pointer (&disk);
}

/* Stages that extract layers: what a build reports and a cache hit must
 * not ("check layer k/n", "layer k/n: …"). */
static guint
count_layer_stages (GPtrArray *stages)
{
  guint n = 0;

  for (guint i = 0; i < stages->len; i++)
    if (strstr (stages->pdata[i], "layer") != NULL)
      n++;
  return n;
}

/* Boots @arch and runs @image's own command from @disk, as `airlock run
 * --image` does: the image's Env (with a PATH when it has none), WorkingDir
 * and User, the workload's stdio on its own port. */
static AirlockVm *
run_image (const AirlockImage *image, const char *disk, const char *stdin_text, gboolean controls)
{
  AirlockGuestImage *guest = guest_image_for (image->arch);
  g_autoptr (GError) error = NULL;
  g_auto (GStrv) argv = NULL;
  g_autoptr (GPtrArray) envp = g_ptr_array_new ();
  g_autoptr (GBytes) stdin_data = stdin_text ? g_bytes_new_static (stdin_text, strlen (stdin_text))
                                             : NULL;
  g_autoptr (AirlockVm) vm = NULL;
  gboolean have_path = FALSE;
  AirlockRunSpec spec = {
    .root = IMAGE_ROOT,
    .root_disk = IMAGE_DISK_SERIAL,
    .timeout_ms = RUN_TIMEOUT_MS,
    .hostname = "airlock",
    .stdio = TRUE,
    .controls = controls,
  };
  AirlockVmOptions o = {
    .cache_dir = cache_dir,
    .accel = AIRLOCK_ACCEL_TCG,
    .heartbeat_ms = 200,
    .boot_timeout_ms = 60000,
    .spec = &spec,
    .root_disk_path = disk,
    .stdin_data = stdin_data,
  };

  if (!guest)
    return NULL;
  argv = airlock_image_command (image, NULL, &error);
  g_assert_no_error (error);
  for (guint i = 0; image->env && image->env[i]; i++)
    {
      have_path = have_path || g_str_has_prefix (image->env[i], "PATH=");
      g_ptr_array_add (envp, image->env[i]);
    }
  if (!have_path)
    g_ptr_array_add (envp, (gpointer) DEFAULT_PATH);
  g_ptr_array_add (envp, NULL);
  spec.argv = (const char *const *) argv;
  spec.envp = (const char *const *) envp->pdata;
  spec.cwd = image->working_dir && *image->working_dir ? image->working_dir : NULL;
  spec.user = image->user && *image->user ? image->user : NULL;

  vm = airlock_vm_new (image->arch, guest, &o, &error);
  g_assert_no_error (error);
  g_assert_true (airlock_vm_run (vm, &error));
  g_assert_no_error (error);
  return g_steal_pointer (&vm);
}

static char *
bytes_text (GBytes *bytes)
{
  return g_strndup (g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes));
}

/* The console and what the guest's programs logged, for a failure. */
static void
dump_run (AirlockVm *vm, const char *what)
{
  g_autoptr (GBytes) console = airlock_vm_get_console (vm);
  g_autoptr (GBytes) out = airlock_vm_get_stdout (vm);
  g_autoptr (GBytes) err = airlock_vm_get_stderr (vm);
  g_autofree char *console_text = bytes_text (console);
  g_autofree char *out_text = bytes_text (out);
  g_autofree char *err_text = bytes_text (err);
  GPtrArray *log = airlock_channel_get_log (airlock_vm_get_channel (vm));

  for (guint i = 0; i < log->len; i++)
    g_test_message ("%s: guest: %s", what, (const char *) log->pdata[i]);
  g_test_message ("%s: stdout:\n%s", what, out_text);
  g_test_message ("%s: stderr:\n%s", what, err_text);
  g_test_message ("%s: console:\n%s", what, console_text);
}

/* TRUE when the key lines of @events are exactly the multiset @expected;
 * otherwise fails the test, listing what is missing and what is extra. */
static gboolean
check_records (AirlockVm *vm, const char *what, GPtrArray *events, const char *const *expected)
{
  g_autoptr (GPtrArray) got = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) want = g_ptr_array_new ();
  g_autoptr (GString) diff = g_string_new (NULL);

  for (guint k = 0; k < events->len; k++)
    {
      const AirlockEvent *ev = events->pdata[k];
      char *line = ev->phase == AIRLOCK_PHASE_CONTROLS ? NULL : airlock_event_key_line (ev);

      if (line)
        {
          g_test_message ("%s: %s (pid %u uid %u)", what, line, ev->pid, ev->uid);
          g_ptr_array_add (got, line);
        }
    }
  for (const char *const *r = expected; *r; r++)
    g_ptr_array_add (want, (gpointer) *r);
  vm_test_diff_lines (got, want, diff);
  if (diff->len > 0)
    {
      dump_run (vm, what);
      g_test_fail_printf ("%s: the records differ:%s", what, diff->str);
      return FALSE;
    }
  return TRUE;
}

/* The run is complete, the workload exited 0 (trailer and record agree),
 * its only stderr is none, and its first record is the execve of the
 * image's entrypoint by the image's user.  Returns the events, or NULL
 * (the test failed) when the run is not complete. */
static GPtrArray *
check_run (AirlockVm *vm, const AirlockImage *image, const char *what, guint32 uid, guint32 gid)
{
  const AirlockTrailer *trailer = airlock_channel_get_trailer (airlock_vm_get_channel (vm));
  g_autoptr (GBytes) err = airlock_vm_get_stderr (vm);
  const AirlockEvent *exit_ev = NULL, *exec_ev = NULL;
  AirlockEventLog *log;
  GPtrArray *events;

  if (!airlock_vm_is_complete (vm))
    {
      dump_run (vm, what);
      g_test_fail_printf ("%s: run not complete: %s", what, airlock_vm_get_reason (vm));
      return NULL;
    }
  g_assert_nonnull (trailer);
  g_assert_cmpuint (trailer->end_reason, ==, AIRLOCK_END_COMPLETED);
  g_assert_cmpuint (trailer->exit_status, ==, 0);
  g_assert_false (airlock_vm_get_output_truncated (vm));
  g_assert_cmpuint (g_bytes_get_size (err), ==, 0);

  log = airlock_vm_get_events (vm);
  g_assert_nonnull (log);
  events = airlock_event_log_get_events (log);
  for (guint k = 0; k < events->len; k++)
    {
      const AirlockEvent *ev = events->pdata[k];

      if (ev->phase == AIRLOCK_PHASE_CONTROLS)
        continue;   /* the probe's, checked apart */
      if (ev->kind == AIRLOCK_EVENT_WORKLOAD_EXIT)
        exit_ev = ev;
      else if (ev->kind == AIRLOCK_EVENT_SYSCALL && !exec_ev
               && g_strcmp0 (ev->syscall_name, "execve") == 0)
        exec_ev = ev;
    }
  g_assert_nonnull (exit_ev);
  g_assert_true (exit_ev->has_exit_status);
  g_assert_cmpuint (exit_ev->exit_status, ==, 0);

  /* The entrypoint, as the image's config names it, run as its user. */
  g_assert_nonnull (exec_ev);
  g_assert_nonnull (image->entrypoint);
  g_assert_cmpstr (exec_ev->path, ==, image->entrypoint[0]);
  g_assert_true (exec_ev->has_uid && exec_ev->has_gid);
  g_assert_cmpuint (exec_ev->uid, ==, uid);
  g_assert_cmpuint (exec_ev->gid, ==, gid);
  return events;
}

/* The value of NAME in the image's config Env. */
static const char *
config_env (const AirlockImage *image, const char *name)
{
  gsize len = strlen (name);

  for (guint i = 0; image->env && image->env[i]; i++)
    if (strncmp (image->env[i], name, len) == 0 && image->env[i][len] == '=')
      return image->env[i] + len + 1;
  g_error ("the image's config has no %s in its Env", name);
  return NULL;
}

/* Opens and resolves @reference for @arch. */
static AirlockImage *
resolve (const char *reference, AirlockArch arch, AirlockImageSource **ret_source)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (AirlockImageSource) source = airlock_image_source_open (reference, &error);
  AirlockImage *image;

  g_assert_no_error (error);
  image = airlock_image_resolve (source, arch, &error);
  g_assert_no_error (error);
  g_assert_nonnull (image);
  g_assert_cmpint (image->arch, ==, arch);
  *ret_source = g_steal_pointer (&source);
  return image;
}

/* ---- clean ---------------------------------------------------------------- */

/* What clean-server answers to clean_stdin when the image's config was
 * honoured: User app (1000:1000 in the image's /etc/passwd), WorkingDir
 * /srv, the config's Env, the whiteout applied, busybox's /bin/sh there. */
static char *
clean_expected_stdout (const AirlockImage *image)
{
  return g_strdup_printf ("{\"uid\":1000,\"gid\":1000,\"euid\":1000,\"egid\":1000}\n"
                          "{\"cwd\":\"/srv\"}\n"
                          "{\"getenv\":\"AIRLOCK_SAMPLE\",\"value\":\"%s\"}\n"
                          "{\"getenv\":\"PATH\",\"value\":\"%s\"}\n"
                          "{\"exists\":\"/etc/airlock-deleted\",\"value\":false}\n"
                          "{\"exists\":\"/bin/sh\",\"value\":true}\n"
                          "{\"bye\":true}\n",
                          config_env (image, "AIRLOCK_SAMPLE"), config_env (image, "PATH"));
}

/* One run of clean from @disk, checked whole. */
static void
run_clean (const AirlockImage *image, const char *disk, const char *what)
{
  g_autoptr (AirlockVm) vm = run_image (image, disk, clean_stdin, FALSE);
  g_autoptr (GBytes) out = NULL;
  g_autofree char *out_text = NULL;
  g_autofree char *expected = NULL;
  GPtrArray *events;

  if (!vm)
    return;
  events = check_run (vm, image, what, 1000, 1000);
  if (!events)
    return;
  if (!check_records (vm, what, events, clean_records))
    return;
  out = airlock_vm_get_stdout (vm);
  out_text = bytes_text (out);
  expected = clean_expected_stdout (image);
  if (!g_str_equal (out_text, expected))
    dump_run (vm, what);
  g_assert_cmpstr (out_text, ==, expected);
}

static void
test_clean (gconstpointer data)
{
  AirlockArch arch = GPOINTER_TO_INT (data);
  const char *arch_name = airlock_arch_to_string (arch);
  g_autofree char *reference = sample_reference ("oci", "clean");
  g_autofree char *what = NULL;
  g_autoptr (AirlockImageSource) source = NULL;
  g_autoptr (AirlockImage) image = NULL;
  g_autoptr (GPtrArray) stages = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *disk = NULL;

  if (!reference || !guest_image_for (arch))
    return;
  what = g_strdup_printf ("%s %s", arch_name, reference);
  image = resolve (reference, arch, &source);
  /* What the checks from inside the workload compare against. */
  g_assert_cmpstr (image->user, ==, "app");
  g_assert_cmpstr (image->working_dir, ==, "/srv");
  g_assert_cmpstr (config_env (image, "AIRLOCK_SAMPLE"), ==, "clean");

  disk = ensure_disk (source, image, stages);
  g_test_message ("%s: disk %s (%s)", what, disk,
                  count_layer_stages (stages) ? "built now" : "cached before this test");
  g_free (clean_disks[arch]);
  clean_disks[arch] = g_strdup (disk);
  g_assert_cmpint (stat (disk, &clean_disk_stats[arch]), ==, 0);

  run_clean (image, disk, what);
}

/* ---- clean, again: the cached disk ----------------------------------------- */

static void
test_clean_cached (gconstpointer data)
{
  AirlockArch arch = GPOINTER_TO_INT (data);
  const char *arch_name = airlock_arch_to_string (arch);
  g_autofree char *reference = sample_reference ("oci", "clean");
  g_autofree char *what = NULL;
  g_autoptr (AirlockImageSource) source = NULL;
  g_autoptr (AirlockImage) image = NULL;
  g_autoptr (GPtrArray) stages = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *disk = NULL;
  struct stat st;

  if (!reference || !guest_image_for (arch))
    return;
  what = g_strdup_printf ("%s %s (cached disk)", arch_name, reference);
  image = resolve (reference, arch, &source);
  if (!clean_disks[arch])
    {
      /* Run alone (-p): the first run's disk is made here. */
      g_autoptr (GPtrArray) first = g_ptr_array_new_with_free_func (g_free);

      clean_disks[arch] = ensure_disk (source, image, first);
      g_assert_cmpint (stat (clean_disks[arch], &clean_disk_stats[arch]), ==, 0);
    }

  disk = ensure_disk (source, image, stages);
  /* The same file, untouched: no layer checked or extracted again, no new
   * file renamed over it, not rewritten in place. */
  g_assert_cmpstr (disk, ==, clean_disks[arch]);
  if (count_layer_stages (stages) > 0)
    g_test_fail_printf ("%s: the cached disk was rebuilt (stage '%s')", what,
                        (const char *) stages->pdata[0]);
  g_assert_cmpint (stat (disk, &st), ==, 0);
  g_assert_cmpuint (st.st_dev, ==, clean_disk_stats[arch].st_dev);
  g_assert_cmpuint (st.st_ino, ==, clean_disk_stats[arch].st_ino);
  g_assert_cmpint (st.st_size, ==, clean_disk_stats[arch].st_size);
  g_assert_cmpint (st.st_mtim.tv_sec, ==, clean_disk_stats[arch].st_mtim.tv_sec);
  g_assert_cmpint (st.st_mtim.tv_nsec, ==, clean_disk_stats[arch].st_mtim.tv_nsec);

  /* And the disk serves a second run just as well: every run starts from
   * the pristine image. */
  run_clean (image, disk, what);
}

/* ---- egress: attempts and digests ------------------------------------------ */

/* The SHA-256 of the layout's blob for @digest is @digest itself. */
static GBytes *
layout_blob (const char *layout, const char *digest)
{
  g_autofree char *path = g_build_filename (layout, "blobs", "sha256", strchr (digest, ':') + 1,
                                            NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (GBytes) bytes = NULL;
  g_autofree char *hex = NULL;
  char *contents = NULL;
  gsize len = 0;

  g_assert_true (g_str_has_prefix (digest, "sha256:"));
  g_file_get_contents (path, &contents, &len, &error);
  g_assert_no_error (error);
  bytes = g_bytes_new_take (contents, len);
  hex = g_compute_checksum_for_bytes (G_CHECKSUM_SHA256, bytes);
  g_assert_cmpstr (hex, ==, digest + strlen ("sha256:"));
  return g_steal_pointer (&bytes);
}

/* The archive's image is the layout's, blob for blob; and the digests are
 * those of the blobs themselves. */
static void
check_digests (const AirlockImage *from_archive, const char *archive_disk)
{
  g_autofree char *reference = sample_reference ("oci", "egress");
  const char *layout = strchr (reference, ':') + 1;
  g_autoptr (AirlockImageSource) source = NULL;
  g_autoptr (AirlockImage) image = resolve (reference, from_archive->arch, &source);
  g_autoptr (GBytes) index = NULL;
  g_autoptr (GBytes) manifest = NULL;
  g_autoptr (GBytes) config = NULL;
  g_autoptr (GPtrArray) stages = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *disk = NULL;
  g_autofree char *index_text = NULL;
  g_autofree char *manifest_text = NULL;

  /* A multi-arch image: an index, then a manifest per arch. */
  g_assert_nonnull (from_archive->index_digest);
  g_assert_cmpstr (image->index_digest, ==, from_archive->index_digest);
  g_assert_cmpstr (image->manifest_digest, ==, from_archive->manifest_digest);
  g_assert_cmpstr (image->config_digest, ==, from_archive->config_digest);
  g_assert_cmpstr (image->platform, ==, from_archive->platform);
  g_assert_cmpuint (image->layers->len, ==, from_archive->layers->len);
  g_assert_cmpuint (image->layers->len, ==, 3);
  for (guint i = 0; i < image->layers->len; i++)
    {
      const AirlockImageLayer *a = image->layers->pdata[i];
      const AirlockImageLayer *b = from_archive->layers->pdata[i];

      g_assert_cmpstr (a->digest, ==, b->digest);
      g_assert_cmpuint (a->size, ==, b->size);
    }

  /* Each digest is its blob's, and names the next link of the chain. */
  index = layout_blob (layout, image->index_digest);
  manifest = layout_blob (layout, image->manifest_digest);
  config = layout_blob (layout, image->config_digest);
  index_text = bytes_text (index);
  manifest_text = bytes_text (manifest);
  g_assert_nonnull (strstr (index_text, image->manifest_digest));
  g_assert_nonnull (strstr (manifest_text, image->config_digest));
  g_assert_cmpstr (image->manifest_digest, !=, image->config_digest);

  /* Same manifest, same disk: the layout finds the one the archive built. */
  disk = ensure_disk (source, image, stages);
  g_assert_cmpstr (disk, ==, archive_disk);
  g_assert_cmpuint (count_layer_stages (stages), ==, 0);
}

/* The negative controls ran first in the same boot: every control of
 * guest/probe-controls.h is a record of the controls phase, with the
 * destination the table names. */
static void
check_controls (GPtrArray *events, const char *what)
{
  for (gsize c = 0; c < PROBE_N_CONTROLS; c++)
    {
      const struct probe_control *pc = &probe_controls[c];
      gboolean v6 = pc->family == AF_INET6;
      gboolean tcp = pc->protocol == IPPROTO_TCP;
      /* Both the kernel-hook recorder's: the kernel makes the call. */
      g_autofree char *prefix = g_strdup_printf ("%s continue %s/%s/%s %s%s%s:%u",
                                                 tcp ? "connect" : "sendto", v6 ? "inet6" : "inet",
                                                 tcp ? "stream" : "dgram", tcp ? "tcp" : "udp",
                                                 v6 ? "[" : "", pc->address, v6 ? "]" : "", pc->port);
      gboolean found = FALSE;

      for (guint k = 0; k < events->len && !found; k++)
        {
          const AirlockEvent *ev = events->pdata[k];
          g_autofree char *line = NULL;

          if (ev->phase != AIRLOCK_PHASE_CONTROLS)
            continue;
          line = airlock_event_key_line (ev);
          found = line && g_str_has_prefix (line, prefix)
                  && (line[strlen (prefix)] == '\0' || line[strlen (prefix)] == ' ');
        }
      if (!found)
        g_test_fail_printf ("%s: negative control %s (%s) has no record '%s…'", what, pc->name,
                            v6 ? "ipv6" : "ipv4", prefix);
    }
}

/* The NIC's frames were captured host-side: a pcap (QEMU's filter-dump,
 * little-endian magic) holding at least the controls' datagrams. */
static void
check_pcap (AirlockVm *vm, const char *what)
{
  g_autoptr (GBytes) pcap = airlock_vm_get_pcap (vm);
  gsize len = 0;
  const guint8 *d = pcap ? g_bytes_get_data (pcap, &len) : NULL;
  guint records = 0;

  g_assert_nonnull (pcap);
  g_assert_cmpuint (len, >, 24);
  g_assert_cmpuint (d[0] | d[1] << 8 | d[2] << 16 | (guint) d[3] << 24, ==, 0xa1b2c3d4u);
  for (gsize off = 24; off + 16 <= len; records++)
    off += 16 + (d[off + 8] | d[off + 9] << 8 | d[off + 10] << 16 | (gsize) d[off + 11] << 24);
  g_test_message ("%s: %" G_GSIZE_FORMAT " bytes of capture, %u frames", what, len, records);
  /* 12 controls, the image's three attempts, and their answers. */
  g_assert_cmpuint (records, >=, PROBE_N_CONTROLS + 3);
}

static void
test_egress (gconstpointer data)
{
  AirlockArch arch = GPOINTER_TO_INT (data);
  const char *arch_name = airlock_arch_to_string (arch);
  g_autofree char *reference = sample_reference ("oci-archive", "egress");
  g_autofree char *what = NULL;
  g_autoptr (AirlockImageSource) source = NULL;
  g_autoptr (AirlockImage) image = NULL;
  g_autoptr (GPtrArray) stages = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *disk = NULL;
  g_autoptr (AirlockVm) vm = NULL;
  g_autoptr (GBytes) out = NULL;
  g_autofree char *out_text = NULL;
  GPtrArray *events;

  if (!reference || !guest_image_for (arch))
    return;
  what = g_strdup_printf ("%s %s", arch_name, reference);
  image = resolve (reference, arch, &source);
  g_assert_cmpstr (image->user, ==, "root");
  g_assert_cmpstr (config_env (image, "AIRLOCK_SAMPLE"), ==, "egress");
  disk = ensure_disk (source, image, stages);

  vm = run_image (image, disk, NULL, TRUE);
  if (!vm)
    return;
  events = check_run (vm, image, what, 0, 0);
  if (!events)
    return;
  if (!check_records (vm, what, events, egress_records))
    return;

  /* Every attempt has its outcome: the datagram the supervisor sent with
   * the bytes it recorded, the non-blocking connects the kernel-hook
   * recorder saw start (their return comes from the system call's exit). */
  for (guint k = 0; k < events->len; k++)
    {
      const AirlockEvent *ev = events->pdata[k];
      g_autofree char *outcome = NULL;

      if (ev->kind != AIRLOCK_EVENT_SYSCALL || ev->phase == AIRLOCK_PHASE_CONTROLS
          || (ev->action != AIRLOCK_ACTION_EMULATE
              && g_strcmp0 (ev->syscall_name, "connect") != 0))
        continue;
      outcome = airlock_event_outcome (ev);
      g_assert_cmpstr (outcome, ==,
                       g_strcmp0 (ev->syscall_name, "sendto") == 0 ? "sent" : "EINPROGRESS");
      g_assert_cmpstr (ev->exe, ==, image->entrypoint[0]);
    }
  check_controls (events, what);
  check_pcap (vm, what);

  out = airlock_vm_get_stdout (vm);
  out_text = bytes_text (out);
  if (!g_str_equal (out_text, egress_stdout))
    dump_run (vm, what);
  g_assert_cmpstr (out_text, ==, egress_stdout);

  check_digests (image, disk);
}

int
main (int argc, char **argv)
{
  int status;

  g_test_init (&argc, &argv, NULL);
  g_assert_true (airlock_vm_adopt_qemu (NULL));
  cache_dir = airlock_default_cache_dir ();

  for (unsigned a = 0; a < AIRLOCK_N_ARCHES; a++)
    {
      const char *arch = airlock_arch_to_string ((AirlockArch) a);
      g_autofree char *clean = g_strdup_printf ("/image-run/%s/clean", arch);
      g_autofree char *egress = g_strdup_printf ("/image-run/%s/egress", arch);
      g_autofree char *cached = g_strdup_printf ("/image-run/%s/clean-cached", arch);

      g_test_add_data_func (clean, GINT_TO_POINTER (a), test_clean);
      g_test_add_data_func (egress, GINT_TO_POINTER (a), test_egress);
      g_test_add_data_func (cached, GINT_TO_POINTER (a), test_clean_cached);
    }
  status = g_test_run ();
  vm_test_images_clear (&guest_images);
  for (unsigned a = 0; a < AIRLOCK_N_ARCHES; a++)
    g_free (clean_disks[a]);
  g_free (cache_dir);
  return status;
}
