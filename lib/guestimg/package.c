#include "config.h"

#include "guestimg/package-private.h"

#include "guestimg/guest-image.h"
#include "json-bounded-private.h"
#include "json-util-private.h"

#include <errno.h>
#include <fcntl.h>
#include <gio/gio.h>
#include <glib-unix.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <string.h>
#include <unistd.h>

/* How often the download's progress is sampled. */
#define DOWNLOAD_POLL_MS 200

char *
airlock_kernel_pin_deb_name (const AirlockKernelPin *pin, AirlockArch arch)
{
  g_autofree char *version = NULL;
  g_auto (GStrv) parts = g_strsplit (pin->version, ":", -1);

  version = g_strjoinv ("%3a", parts);
  return g_strdup_printf ("%s_%s_%s.deb", pin->package, version, airlock_arch_to_string (arch));
}

/* Tools in /usr/sbin are not on an ordinary user's PATH on Debian. */
static char *
find_tool (const char *name)
{
  static const char *const sbin_dirs[] = { "/usr/sbin", "/sbin" };
  char *path = g_find_program_in_path (name);

  if (path)
    return path;
  for (guint i = 0; i < G_N_ELEMENTS (sbin_dirs); i++)
    {
      path = g_build_filename (sbin_dirs[i], name, NULL);
      if (g_file_test (path, G_FILE_TEST_IS_EXECUTABLE))
        return path;
      g_free (path);
    }
  return NULL;
}

/* The lines of a tool's output worth quoting in an error: apt's "E:" lines
 * when there are any, else the last few lines. */
static char *
tool_complaint (GBytes *output)
{
  g_autofree char *text = NULL;
  g_auto (GStrv) lines = NULL;
  g_autoptr (GString) errors = g_string_new (NULL);
  guint n;

  if (!output || g_bytes_get_size (output) == 0)
    return g_strdup ("no output");
  text = g_utf8_make_valid (g_bytes_get_data (output, NULL), g_bytes_get_size (output));
  lines = g_strsplit (g_strstrip (text), "\n", -1);
  n = g_strv_length (lines);
  for (guint i = 0; i < n; i++)
    if (g_str_has_prefix (lines[i], "E: "))
      g_string_append_printf (errors, "%s%s", errors->len ? "; " : "", lines[i]);
  if (errors->len)
    return g_string_free (g_steal_pointer (&errors), FALSE);
  for (guint i = n > 3 ? n - 3 : 0; i < n; i++)
    g_string_append_printf (errors, "%s%s", errors->len ? "; " : "", lines[i]);
  return g_string_free (g_steal_pointer (&errors), FALSE);
}

/* "kernel package", "testroot package" or "shell package", for messages. */
static const char *
pin_noun (const AirlockKernelPin *pin)
{
  return pin->role == AIRLOCK_PIN_KERNEL ? "kernel package"
         : pin->role == AIRLOCK_PIN_SHELL ? "shell package" : "testroot package";
}

/* The other way out when a pin cannot be had, or "". */
static const char *
pin_alternative (const AirlockKernelPin *pin)
{
  return pin->role == AIRLOCK_PIN_KERNEL
           ? ", or pass --kernel and --modules to use another kernel"
           : "";
}

/* Checks @path against the pin: size first (cheap, and catches a partial
 * download), then sha256.  On mismatch returns FALSE with the reason in
 * @ret_why. */
static gboolean
deb_matches_pin (const char *path, const AirlockKernelPin *pin, char **ret_why, GError **error)
{
  GStatBuf st;
  g_autofree char *sha256 = NULL;

  if (g_stat (path, &st) < 0)
    {
      int saved_errno = errno;
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_FAILED,
                   "cannot read %s '%s': %s", pin_noun (pin), path, g_strerror (saved_errno));
      return FALSE;
    }
  if ((guint64) st.st_size != pin->size)
    {
      *ret_why = g_strdup_printf ("it is %" G_GUINT64_FORMAT " bytes, the pin says %" G_GUINT64_FORMAT,
                                  (guint64) st.st_size, pin->size);
      return FALSE;
    }
  sha256 = airlock_sha256_file (path, error);
  if (!sha256)
    return FALSE;
  if (!g_str_equal (sha256, pin->sha256))
    {
      *ret_why = g_strdup_printf ("its sha256 is %s, the pin says %s", sha256, pin->sha256);
      return FALSE;
    }
  *ret_why = NULL;
  return TRUE;
}

typedef struct {
  gboolean done;
  GBytes *output;
  GError *error;
} ToolRun;

static void
communicate_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  ToolRun *run = user_data;

  g_subprocess_communicate_finish (G_SUBPROCESS (source), result, &run->output, NULL, &run->error);
  run->done = TRUE;
}

typedef struct {
  const char *dir;
  const char *stage;
  guint64 total;
  AirlockProgressFunc progress;
  gpointer progress_data;
} DownloadWatch;

static guint64
dir_bytes (const char *path)
{
  g_autoptr (GDir) dir = g_dir_open (path, 0, NULL);
  const char *name;
  guint64 bytes = 0;

  while (dir && (name = g_dir_read_name (dir)))
    {
      g_autofree char *file = g_build_filename (path, name, NULL);
      GStatBuf st;

      if (g_lstat (file, &st) == 0 && S_ISREG (st.st_mode))
        bytes += st.st_size;
    }
  return bytes;
}

static gboolean
report_download (gpointer user_data)
{
  DownloadWatch *w = user_data;

  w->progress (w->stage, MIN (dir_bytes (w->dir), w->total), w->total, w->progress_data);
  return G_SOURCE_CONTINUE;
}

/* The download directory and whatever apt left in it besides the package
 * (nothing, normally). */
static void
remove_download_dir (const char *path)
{
  g_autoptr (GDir) dir = g_dir_open (path, 0, NULL);
  const char *entry;

  while (dir && (entry = g_dir_read_name (dir)))
    {
      g_autofree char *file = g_build_filename (path, entry, NULL);
      g_unlink (file);
    }
  g_rmdir (path);
}

static void
remove_stale_downloads (const char *downloads_dir, const char *name)
{
  g_autoptr (GDir) dir = g_dir_open (downloads_dir, 0, NULL);
  g_autofree char *prefix = g_strdup_printf (".download-%s-", name);
  const char *entry;

  while (dir && (entry = g_dir_read_name (dir)))
    if (g_str_has_prefix (entry, prefix) && strlen (entry) == strlen (prefix) + 6)
      {
        g_autofree char *path = g_build_filename (downloads_dir, entry, NULL);
        remove_download_dir (path);
      }
}

/* Runs @argv in @cwd, reporting the bytes that appear in @cwd as the
 * progress of @stage (the tools write their file there as it arrives).
 * Returns FALSE with @error set when the tool cannot run; otherwise TRUE,
 * with whether it succeeded in @ret_ok and what it printed in @ret_output. */
static gboolean
run_download_tool (const char *const *argv, const char *cwd, const char *stage, guint64 total,
                   AirlockProgressFunc progress, gpointer progress_data, gboolean *ret_ok,
                   GBytes **ret_output, GError **error)
{
  g_autoptr (GSubprocessLauncher) launcher = NULL;
  g_autoptr (GSubprocess) proc = NULL;
  g_autoptr (GMainContext) context = g_main_context_new ();
  g_autoptr (GSource) timer = NULL;
  ToolRun run = { FALSE, NULL, NULL };
  DownloadWatch watch = { cwd, stage, total, progress, progress_data };

  launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE
                                        | G_SUBPROCESS_FLAGS_STDERR_MERGE);
  g_subprocess_launcher_set_cwd (launcher, cwd);
  g_subprocess_launcher_setenv (launcher, "LC_ALL", "C", TRUE);
  g_main_context_push_thread_default (context);
  proc = g_subprocess_launcher_spawnv (launcher, argv, error);
  if (proc)
    {
      g_subprocess_communicate_async (proc, NULL, NULL, communicate_done, &run);
      if (progress)
        {
          progress (stage, 0, total, progress_data);
          timer = g_timeout_source_new (DOWNLOAD_POLL_MS);
          g_source_set_callback (timer, report_download, &watch, NULL);
          g_source_attach (timer, context);
        }
      while (!run.done)
        g_main_context_iteration (context, TRUE);
      if (timer)
        g_source_destroy (timer);
    }
  g_main_context_pop_thread_default (context);
  if (!proc)
    return FALSE;
  if (run.error)
    {
      g_propagate_error (error, run.error);
      g_clear_pointer (&run.output, g_bytes_unref);
      return FALSE;
    }
  *ret_ok = g_subprocess_get_successful (proc);
  *ret_output = run.output;
  return TRUE;
}

/* A source's attempt: the file it left in @tmp (named @name), or FALSE
 * with why not in @error (the message says it of the source, without the
 * pin's names: the caller lists the sources under them). */
typedef gboolean (*PinSourceFunc) (const AirlockKernelPin *pin, AirlockArch arch,
                                   const AirlockPinSources *sources, const char *tmp,
                                   const char *name, AirlockProgressFunc progress,
                                   gpointer progress_data, char **ret_origin, GError **error);

static gboolean
source_apt (const AirlockKernelPin *pin, AirlockArch arch, const AirlockPinSources *sources,
            const char *tmp, const char *name, AirlockProgressFunc progress,
            gpointer progress_data, char **ret_origin, GError **error)
{
  g_autofree char *spec = g_strdup_printf ("%s:%s=%s", pin->package, airlock_arch_to_string (arch),
                                           pin->version);
  g_autofree char *stage = g_strdup_printf ("download %s %s", pin->package, pin->version);
  g_autofree char *apt_get = find_tool ("apt-get");
  g_autofree char *fetched = g_build_filename (tmp, name, NULL);
  g_autoptr (GBytes) output = NULL;
  g_autoptr (GError) local_error = NULL;
  const char *argv[] = { NULL, "download", spec, NULL };
  gboolean ok = FALSE;

  *ret_origin = g_strdup_printf ("the apt archive ('%s', apt-get download %s)", name, spec);
  if (!apt_get)
    {
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_UNAVAILABLE,
                   "apt-get is not installed");
      return FALSE;
    }
  argv[0] = apt_get;
  if (!run_download_tool (argv, tmp, stage, pin->size, progress, progress_data, &ok, &output,
                          &local_error))
    {
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_UNAVAILABLE,
                   "cannot run apt-get: %s", local_error->message);
      return FALSE;
    }
  if (!ok)
    {
      g_autofree char *complaint = tool_complaint (output);
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_UNAVAILABLE,
                   "apt-get download failed (%s): the pin may have left the archive (%s), or "
                   "apt may not know this arch or its lists may be stale "
                   "(dpkg --add-architecture %s && apt-get update)",
                   complaint,
                   pin->role == AIRLOCK_PIN_KERNEL
                     ? "Debian drops superseded kernel ABIs"
                     : "Debian replaces a package's version when a stable or security update "
                       "supersedes it",
                   airlock_arch_to_string (arch));
      return FALSE;
    }
  if (!g_file_test (fetched, G_FILE_TEST_IS_REGULAR))
    {
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_UNAVAILABLE,
                   "apt-get succeeded but left no '%s'", name);
      return FALSE;
    }
  return TRUE;
}

/* The snapshot base, or NULL when the source is switched off. */
static const char *
snapshot_base (const AirlockPinSources *sources)
{
  const char *base = sources->snapshot_url;

  if (!base)
    base = g_getenv ("AIRLOCK_SNAPSHOT_URL");
  if (!base)
    base = AIRLOCK_SNAPSHOT_DEFAULT_URL;
  return *base ? base : NULL;
}

char *
airlock_snapshot_binfiles_url (const char *base, const AirlockKernelPin *pin)
{
  g_autofree char *package = g_uri_escape_string (pin->package, NULL, FALSE);
  g_autofree char *version = g_uri_escape_string (pin->version, NULL, FALSE);
  gsize len = strlen (base);

  while (len > 0 && base[len - 1] == '/')
    len--;
  return g_strdup_printf ("%.*s/mr/binary/%s/%s/binfiles", (int) len, base, package, version);
}

char *
airlock_snapshot_file_url (const char *base, const char *hash)
{
  gsize len = strlen (base);

  while (len > 0 && base[len - 1] == '/')
    len--;
  return g_strdup_printf ("%.*s/file/%s", (int) len, base, hash);
}

/* Fetches @url to @dest with curl; FALSE with curl's complaint. */
static gboolean
curl_fetch (const char *curl, const char *url, const char *cwd, const char *dest,
            const char *stage, guint64 total, AirlockProgressFunc progress,
            gpointer progress_data, GError **error)
{
  g_autofree char *max = g_strdup_printf ("%" G_GUINT64_FORMAT, total);
  g_autoptr (GBytes) output = NULL;
  g_autoptr (GError) local_error = NULL;
  /* https only on the network (file: for a mirror on disk), redirects
   * included; never more bytes than the pin's size: the digest is checked
   * afterwards, but a hostile server should not fill the disk first. */
  const char *argv[] = { curl, "--fail", "--silent", "--show-error", "--location",
                         "--proto", "=https,file", "--proto-redir", "=https",
                         "--connect-timeout", "30", "--retry", "2",
                         "--max-filesize", max, "--output", dest, "--", url, NULL };
  gboolean ok = FALSE;

  if (!run_download_tool (argv, cwd, stage, total, progress, progress_data, &ok, &output,
                          &local_error))
    {
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_UNAVAILABLE,
                   "cannot run curl: %s", local_error->message);
      return FALSE;
    }
  if (!ok)
    {
      g_autofree char *complaint = tool_complaint (output);
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_UNAVAILABLE,
                   "curl failed: %s", complaint);
      return FALSE;
    }
  return TRUE;
}

/* The list of builds is a few hundred bytes; anything bigger is not it. */
#define SNAPSHOT_LIST_MAX (1024 * 1024)

static gboolean
source_snapshot (const AirlockKernelPin *pin, AirlockArch arch, const AirlockPinSources *sources,
                 const char *tmp, const char *name, AirlockProgressFunc progress,
                 gpointer progress_data, char **ret_origin, GError **error)
{
  const char *base = snapshot_base (sources);
  const char *arch_name = airlock_arch_to_string (arch);
  g_autofree char *curl = find_tool ("curl");
  g_autofree char *list_url = NULL;
  g_autofree char *list = g_build_filename (tmp, ".binfiles.json", NULL);
  g_autofree char *file_url = NULL;
  g_autofree char *dest = g_build_filename (tmp, name, NULL);
  g_autofree char *stage = g_strdup_printf ("download %s %s from the snapshot archive",
                                            pin->package, pin->version);
  g_autoptr (JsonNode) root = NULL;
  g_autoptr (GError) local_error = NULL;
  JsonArray *builds;
  const char *hash = NULL;

  if (!base)
    {
      *ret_origin = g_strdup ("the snapshot archive");
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_UNAVAILABLE,
                   "not used (AIRLOCK_SNAPSHOT_URL is empty)");
      return FALSE;
    }
  list_url = airlock_snapshot_binfiles_url (base, pin);
  *ret_origin = g_strdup_printf ("the snapshot archive ('%s')", list_url);
  if (!curl)
    {
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_UNAVAILABLE,
                   "curl is not installed");
      return FALSE;
    }
  /* Which file is this arch's build: the archive knows files by their
   * SHA-1, and the pin has the SHA-256, checked once the file is here. */
  if (progress)
    progress (stage, 0, pin->size, progress_data);
  if (!curl_fetch (curl, list_url, tmp, list, stage, SNAPSHOT_LIST_MAX, NULL, NULL, error))
    return FALSE;
  root = airlock_json_load_bounded (list, "the snapshot archive's list of builds", &local_error);
  builds = root && JSON_NODE_HOLDS_OBJECT (root)
             ? airlock_json_get_array (json_node_get_object (root), "result") : NULL;
  if (!builds)
    {
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_UNAVAILABLE,
                   "'%s' is not a list of builds: %s", list_url,
                   local_error ? local_error->message : "no 'result' array");
      return FALSE;
    }
  for (guint i = 0; i < json_array_get_length (builds) && !hash; i++)
    {
      JsonNode *e = json_array_get_element (builds, i);
      JsonObject *o = JSON_NODE_HOLDS_OBJECT (e) ? json_node_get_object (e) : NULL;
      const char *a = airlock_json_get_string (o, "architecture");
      const char *h = airlock_json_get_string (o, "hash");

      if (g_strcmp0 (a, arch_name) != 0 || !h)
        continue;
      /* It becomes part of a URL: 40 hex digits and nothing else. */
      if (strlen (h) != 40 || strspn (h, "0123456789abcdef") != 40)
        {
          g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_UNAVAILABLE,
                       "'%s' gives the %s build an invalid hash '%s'", list_url, arch_name, h);
          return FALSE;
        }
      hash = h;
    }
  if (!hash)
    {
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_UNAVAILABLE,
                   "'%s' lists no %s build", list_url, arch_name);
      return FALSE;
    }
  file_url = airlock_snapshot_file_url (base, hash);
  g_free (*ret_origin);
  *ret_origin = g_strdup_printf ("the snapshot archive ('%s')", file_url);
  return curl_fetch (curl, file_url, tmp, dest, stage, pin->size, progress, progress_data, error);
}

static gboolean
source_local (const AirlockKernelPin *pin, AirlockArch arch, const AirlockPinSources *sources,
              const char *tmp, const char *name, AirlockProgressFunc progress,
              gpointer progress_data, char **ret_origin, GError **error)
{
  const char *dir = sources->local_dir ? sources->local_dir : g_getenv ("AIRLOCK_KERNEL_DIR");
  g_autofree char *source = NULL;
  g_autofree char *dest = g_build_filename (tmp, name, NULL);
  g_autofree char *stage = NULL;
  g_autoptr (GFile) from = NULL;
  g_autoptr (GFile) to = NULL;

  if (!dir || !*dir)
    {
      *ret_origin = g_strdup ("the local directory");
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_UNAVAILABLE,
                   "none given (--kernel-dir or AIRLOCK_KERNEL_DIR: a directory holding '%s')",
                   name);
      return FALSE;
    }
  source = g_build_filename (dir, name, NULL);
  *ret_origin = g_strdup_printf ("the local directory ('%s')", source);
  if (!g_file_test (dir, G_FILE_TEST_IS_DIR))
    {
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_UNAVAILABLE,
                   "'%s' is not a directory", dir);
      return FALSE;
    }
  if (!g_file_test (source, G_FILE_TEST_IS_REGULAR))
    {
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_UNAVAILABLE,
                   "no such file");
      return FALSE;
    }
  /* A copy, checked after it is made: what is used is what was checked,
   * whatever happens to the user's file meanwhile. */
  stage = g_strdup_printf ("copy %s", source);
  if (progress)
    progress (stage, 0, 0, progress_data);
  from = g_file_new_for_path (source);
  to = g_file_new_for_path (dest);
  return g_file_copy (from, to, G_FILE_COPY_NONE, NULL, NULL, NULL, error);
}

char *
airlock_kernel_pin_fetch (const AirlockKernelPin *pin, AirlockArch arch, const char *downloads_dir,
                          const AirlockPinSources *sources, AirlockProgressFunc progress,
                          gpointer progress_data, GError **error)
{
  static const AirlockPinSources environment = { NULL, NULL };
  static const PinSourceFunc source_funcs[] = { source_apt, source_snapshot, source_local };
  g_autofree char *name = airlock_kernel_pin_deb_name (pin, arch);
  g_autofree char *path = g_build_filename (downloads_dir, name, NULL);
  g_autofree char *stage = g_strdup_printf ("verify %s %s", pin->package, pin->version);
  g_autoptr (GString) reasons = g_string_new (NULL);
  gboolean mismatch = FALSE;

  if (!sources)
    sources = &environment;
  if (g_mkdir_with_parents (downloads_dir, 0755) < 0)
    {
      int saved_errno = errno;
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_FAILED,
                   "cannot create download directory '%s': %s", downloads_dir,
                   g_strerror (saved_errno));
      return NULL;
    }

  /* A copy from an earlier fetch, or one put there by hand. */
  if (g_file_test (path, G_FILE_TEST_EXISTS))
    {
      g_autofree char *why = NULL;

      if (progress)
        progress (stage, 0, 0, progress_data);
      if (deb_matches_pin (path, pin, &why, error))
        return g_steal_pointer (&path);
      if (!why)
        return NULL;
      g_string_append_printf (reasons, "\n  '%s' (cached): %s; removed", path, why);
      mismatch = TRUE;
      g_unlink (path);
    }

  /* Named after the package, so leftovers of a killed download can be told
   * apart from another arch's download in progress (each arch's builder
   * holds its own lock, and each arch has its own package). */
  remove_stale_downloads (downloads_dir, name);
  for (guint s = 0; s < G_N_ELEMENTS (source_funcs); s++)
    {
      g_autofree char *tmp = g_strdup_printf ("%s/.download-%s-XXXXXX", downloads_dir, name);
      g_autofree char *fetched = NULL;
      g_autofree char *origin = NULL;
      g_autofree char *why = NULL;
      g_autoptr (GError) local_error = NULL;

      if (!g_mkdtemp (tmp))
        {
          int saved_errno = errno;
          g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_FAILED,
                       "cannot create a download directory in '%s': %s", downloads_dir,
                       g_strerror (saved_errno));
          return NULL;
        }
      fetched = g_build_filename (tmp, name, NULL);
      if (!source_funcs[s] (pin, arch, sources, tmp, name, progress, progress_data, &origin,
                            &local_error))
        {
          g_string_append_printf (reasons, "\n  %s: %s", origin, local_error->message);
          remove_download_dir (tmp);
          continue;
        }
      if (progress)
        progress (stage, 0, 0, progress_data);
      if (!deb_matches_pin (fetched, pin, &why, &local_error))
        {
          /* Never used, never kept: the next source may have the right one. */
          g_string_append_printf (reasons, "\n  %s: %s", origin,
                                  why ? why : local_error->message);
          mismatch = mismatch || why != NULL;
          remove_download_dir (tmp);
          continue;
        }
      if (g_rename (fetched, path) < 0)
        {
          int saved_errno = errno;
          g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_FAILED,
                       "cannot move the downloaded '%s' to '%s': %s", fetched, path,
                       g_strerror (saved_errno));
          remove_download_dir (tmp);
          return NULL;
        }
      remove_download_dir (tmp);
      if (progress)
        progress (stage, pin->size, pin->size, progress_data);
      return g_steal_pointer (&path);
    }

  g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR,
               mismatch ? AIRLOCK_GUEST_IMAGE_ERROR_DIGEST : AIRLOCK_GUEST_IMAGE_ERROR_UNAVAILABLE,
               "cannot fetch %s '%s' version '%s' for %s (pinned in '%s') from any source:%s\n"
               "To fix it: update the pin (the comments of '%s' say how), or put '%s' "
               "(snapshot.debian.org keeps every version) in a directory given by "
               "--kernel-dir or AIRLOCK_KERNEL_DIR, or in '%s'%s",
               pin_noun (pin), pin->package, pin->version, airlock_arch_to_string (arch),
               pin->origin, reasons->str, pin->origin, name, downloads_dir,
               pin_alternative (pin));
  return NULL;
}

void
airlock_deb_kernel_layout_free (AirlockDebKernelLayout *layout)
{
  if (!layout)
    return;
  g_free (layout->release);
  g_free (layout->kernel);
  g_free (layout->modules_dir);
  g_free (layout);
}

/* "lib/modules/<release>/…" or "usr/lib/modules/<release>/…" → the
 * modules directory, else NULL. */
static char *
modules_dir_of (const char *path)
{
  static const char *const roots[] = { "lib/modules/", "usr/lib/modules/" };

  for (guint i = 0; i < G_N_ELEMENTS (roots); i++)
    if (g_str_has_prefix (path, roots[i]))
      {
        const char *release = path + strlen (roots[i]);
        const char *slash = strchr (release, '/');

        if (slash && slash > release)
          return g_strndup (path, slash - path);
      }
  return NULL;
}

AirlockDebKernelLayout *
airlock_deb_kernel_layout (const char *deb, const char *what, GError **error)
{
  g_autofree char *dpkg_deb = find_tool ("dpkg-deb");
  g_autoptr (AirlockDebKernelLayout) layout = g_new0 (AirlockDebKernelLayout, 1);
  g_autoptr (GSubprocess) proc = NULL;
  g_autoptr (GBytes) out = NULL;
  g_autoptr (GBytes) err = NULL;
  g_autoptr (GError) local_error = NULL;
  g_autofree char *text = NULL;
  g_auto (GStrv) lines = NULL;

  if (!dpkg_deb)
    {
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_FAILED,
                   "cannot read %s: dpkg-deb is not installed", what);
      return NULL;
    }
  proc = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE,
                           &local_error, dpkg_deb, "--info", deb, "md5sums", NULL);
  if (!proc || !g_subprocess_communicate (proc, NULL, NULL, &out, &err, &local_error))
    {
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_FAILED,
                   "cannot read %s: %s", what, local_error->message);
      return NULL;
    }
  if (!g_subprocess_get_successful (proc))
    {
      g_autofree char *complaint = tool_complaint (err);
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_KERNEL_FORMAT,
                   "cannot use %s: it has no file list (md5sums): %s", what, complaint);
      return NULL;
    }

  /* Lines are "<md5>  <path>". */
  text = g_strndup (g_bytes_get_data (out, NULL), g_bytes_get_size (out));
  lines = g_strsplit (text, "\n", -1);
  for (guint i = 0; lines[i]; i++)
    {
      const char *path = strstr (lines[i], "  ");
      g_autofree char *modules_dir = NULL;

      if (!path)
        continue;
      path += 2;
      if (g_str_has_prefix (path, "boot/vmlinuz-") && !strchr (path + 5, '/'))
        {
          if (layout->kernel)
            {
              g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_KERNEL_FORMAT,
                           "cannot use %s: it holds two kernels ('%s' and '%s')",
                           what, layout->kernel, path);
              return NULL;
            }
          layout->kernel = g_strdup (path);
          layout->release = g_strdup (path + strlen ("boot/vmlinuz-"));
        }
      modules_dir = modules_dir_of (path);
      if (modules_dir && !layout->modules_dir)
        layout->modules_dir = g_steal_pointer (&modules_dir);
      else if (modules_dir && !g_str_equal (modules_dir, layout->modules_dir))
        {
          g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_KERNEL_FORMAT,
                       "cannot use %s: it holds two module trees ('%s' and '%s')",
                       what, layout->modules_dir, modules_dir);
          return NULL;
        }
    }
  if (!layout->kernel || !layout->modules_dir)
    {
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_KERNEL_FORMAT,
                   "cannot use %s: it has no %s", what,
                   layout->kernel ? "lib/modules/<release> directory" : "boot/vmlinuz-<release>");
      return NULL;
    }
  if (!g_str_has_suffix (layout->modules_dir, layout->release)
      || layout->modules_dir[strlen (layout->modules_dir) - strlen (layout->release) - 1] != '/')
    {
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_KERNEL_FORMAT,
                   "cannot use %s: its kernel '%s' and its modules '%s' are of different releases",
                   what, layout->kernel, layout->modules_dir);
      return NULL;
    }
  return g_steal_pointer (&layout);
}

gboolean
airlock_deb_extract (const char *deb, const char *dest, const char *const *members,
                     const char *what, GError **error)
{
  g_autofree char *dpkg_deb = find_tool ("dpkg-deb");
  g_autofree char *tar = find_tool ("tar");
  g_autofree char *dpkg_log = g_build_filename (dest, ".dpkg-deb.log", NULL);
  g_autofree char *tar_log = g_build_filename (dest, ".tar.log", NULL);
  g_autoptr (GSubprocessLauncher) dpkg_launcher = NULL;
  g_autoptr (GSubprocessLauncher) tar_launcher = NULL;
  g_autoptr (GSubprocess) dpkg_proc = NULL;
  g_autoptr (GSubprocess) tar_proc = NULL;
  g_autoptr (GError) local_error = NULL;
  g_autoptr (GPtrArray) tar_argv = g_ptr_array_new ();
  const char *const tar_options[] = { "-x", "-f", "-", "-C", dest, "--no-same-owner",
                                      "--no-wildcards", "--" };
  int pipe_fds[2];
  gboolean dpkg_ok, tar_ok;

  if (!dpkg_deb || !tar)
    {
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_FAILED,
                   "cannot extract %s: %s is not installed", what, dpkg_deb ? "tar" : "dpkg-deb");
      return FALSE;
    }
  if (!g_unix_open_pipe (pipe_fds, FD_CLOEXEC, &local_error))
    {
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_FAILED,
                   "cannot extract %s: %s", what, local_error->message);
      return FALSE;
    }

  /* dpkg-deb | tar, with only @members written out: the package also
   * ships System.map, config and docs the guest never needs.  Members are
   * literal names, never patterns. */
  g_ptr_array_add (tar_argv, tar);
  for (guint i = 0; i < G_N_ELEMENTS (tar_options); i++)
    g_ptr_array_add (tar_argv, (gpointer) tar_options[i]);
  for (guint i = 0; members[i]; i++)
    g_ptr_array_add (tar_argv, (gpointer) members[i]);
  g_ptr_array_add (tar_argv, NULL);
  dpkg_launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_NONE);
  g_subprocess_launcher_take_stdout_fd (dpkg_launcher, pipe_fds[1]);
  g_subprocess_launcher_set_stderr_file_path (dpkg_launcher, dpkg_log);
  tar_launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_NONE);
  g_subprocess_launcher_take_stdin_fd (tar_launcher, pipe_fds[0]);
  g_subprocess_launcher_set_stderr_file_path (tar_launcher, tar_log);
  g_subprocess_launcher_setenv (tar_launcher, "LC_ALL", "C", TRUE);

  dpkg_proc = g_subprocess_launcher_spawn (dpkg_launcher, &local_error, dpkg_deb,
                                           "--fsys-tarfile", deb, NULL);
  /* The launchers own the pipe's ends: drop them now, or tar never sees
   * the end of its input. */
  g_clear_object (&dpkg_launcher);
  if (dpkg_proc)
    tar_proc = g_subprocess_launcher_spawnv (tar_launcher, (const char *const *) tar_argv->pdata,
                                             &local_error);
  g_clear_object (&tar_launcher);
  if (!dpkg_proc || !tar_proc)
    {
      if (dpkg_proc)
        {
          g_subprocess_force_exit (dpkg_proc);
          g_subprocess_wait (dpkg_proc, NULL, NULL);
        }
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_FAILED,
                   "cannot extract %s: %s", what, local_error->message);
      return FALSE;
    }
  g_subprocess_wait (tar_proc, NULL, NULL);
  g_subprocess_wait (dpkg_proc, NULL, NULL);
  dpkg_ok = g_subprocess_get_successful (dpkg_proc);
  tar_ok = g_subprocess_get_successful (tar_proc);
  if (!dpkg_ok || !tar_ok)
    {
      g_autofree char *log = NULL;
      g_file_get_contents (dpkg_ok ? tar_log : dpkg_log, &log, NULL, NULL);
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_FAILED,
                   "cannot extract %s: %s failed: %s", what, dpkg_ok ? "tar" : "dpkg-deb",
                   log && *log ? g_strstrip (log) : "no message");
      return FALSE;
    }
  g_unlink (dpkg_log);
  g_unlink (tar_log);
  return TRUE;
}

char *
airlock_depmod_show (const char *root, const char *release, GError **error)
{
  g_autofree char *depmod = find_tool ("depmod");
  g_autoptr (GSubprocess) proc = NULL;
  g_autoptr (GBytes) out = NULL;
  g_autoptr (GBytes) err = NULL;
  g_autoptr (GError) local_error = NULL;

  if (!depmod)
    {
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_FAILED,
                   "cannot compute the module dependencies of kernel '%s': depmod is not "
                   "installed (Debian package kmod)", release);
      return NULL;
    }
  proc = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE,
                           &local_error, depmod, "-n", "-C", "/dev/null", "-b", root, release,
                           NULL);
  if (!proc || !g_subprocess_communicate (proc, NULL, NULL, &out, &err, &local_error))
    {
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_FAILED,
                   "cannot run depmod for kernel '%s': %s", release, local_error->message);
      return NULL;
    }
  if (!g_subprocess_get_successful (proc))
    {
      g_autofree char *complaint = tool_complaint (err);
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_MODULES,
                   "cannot compute the module dependencies of kernel '%s': depmod failed: %s",
                   release, complaint);
      return NULL;
    }
  return g_strndup (g_bytes_get_data (out, NULL), g_bytes_get_size (out));
}

char *
airlock_depmod_version (void)
{
  g_autofree char *depmod = find_tool ("depmod");
  g_autofree char *out = NULL;
  const char *argv[] = { NULL, "--version", NULL };
  char *nl;

  if (!depmod)
    return NULL;
  argv[0] = depmod;
  if (!g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, &out,
                     NULL, NULL, NULL))
    return NULL;
  nl = strchr (out, '\n');
  if (nl)
    *nl = '\0';
  return *out ? g_steal_pointer (&out) : NULL;
}
