#include "config.h"

#include "guestimg/package-private.h"

#include "guestimg/guest-image.h"

#include <errno.h>
#include <fcntl.h>
#include <gio/gio.h>
#include <glib-unix.h>
#include <glib/gstdio.h>
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

static gboolean
apt_download (const AirlockKernelPin *pin, AirlockArch arch, const char *downloads_dir,
              const char *dest, AirlockProgressFunc progress, gpointer progress_data,
              GError **error)
{
  g_autofree char *tmpl = NULL;
  g_autofree char *tmp = NULL;
  g_autofree char *spec = g_strdup_printf ("%s:%s=%s", pin->package, airlock_arch_to_string (arch),
                                           pin->version);
  g_autofree char *stage = g_strdup_printf ("download %s %s", pin->package, pin->version);
  g_autofree char *name = airlock_kernel_pin_deb_name (pin, arch);
  g_autofree char *fetched = NULL;
  g_autofree char *apt_get = find_tool ("apt-get");
  g_autoptr (GSubprocessLauncher) launcher = NULL;
  g_autoptr (GSubprocess) proc = NULL;
  g_autoptr (GMainContext) context = g_main_context_new ();
  g_autoptr (GSource) timer = NULL;
  g_autoptr (GError) local_error = NULL;
  g_autofree char *complaint = NULL;
  ToolRun run = { FALSE, NULL, NULL };
  DownloadWatch watch = { NULL, stage, pin->size, progress, progress_data };
  gboolean ok = FALSE;

  if (!apt_get)
    {
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_UNAVAILABLE,
                   "cannot download %s '%s' version '%s': apt-get is not installed; "
                   "put '%s' (from a Debian mirror or snapshot.debian.org) in '%s'%s",
                   pin_noun (pin), pin->package, pin->version, name, downloads_dir,
                   pin_alternative (pin));
      return FALSE;
    }
  /* Named after the package, so leftovers of a killed download can be
   * told apart from another arch's download in progress (each arch's
   * builder holds its own lock, and each arch has its own package). */
  remove_stale_downloads (downloads_dir, name);
  tmpl = g_strdup_printf ("%s/.download-%s-XXXXXX", downloads_dir, name);
  tmp = g_mkdtemp (g_steal_pointer (&tmpl));
  if (!tmp)
    {
      int saved_errno = errno;
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_FAILED,
                   "cannot create a download directory in '%s': %s", downloads_dir,
                   g_strerror (saved_errno));
      return FALSE;
    }
  watch.dir = tmp;

  /* apt writes into its working directory, where the file grows as it
   * arrives: its size is the progress. */
  launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE
                                        | G_SUBPROCESS_FLAGS_STDERR_MERGE);
  g_subprocess_launcher_set_cwd (launcher, tmp);
  g_subprocess_launcher_setenv (launcher, "LC_ALL", "C", TRUE);
  g_main_context_push_thread_default (context);
  proc = g_subprocess_launcher_spawn (launcher, &local_error, apt_get, "download", spec, NULL);
  if (proc)
    {
      g_subprocess_communicate_async (proc, NULL, NULL, communicate_done, &run);
      if (progress)
        {
          progress (stage, 0, pin->size, progress_data);
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

  if (!proc || run.error)
    {
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_UNAVAILABLE,
                   "cannot download %s '%s' version '%s': cannot run apt-get: %s",
                   pin_noun (pin), pin->package, pin->version,
                   proc ? run.error->message : local_error->message);
      goto out;
    }
  if (!g_subprocess_get_successful (proc))
    {
      complaint = tool_complaint (run.output);
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_UNAVAILABLE,
                   "cannot download %s '%s' version '%s' for %s: apt-get download "
                   "failed (%s). The pin may have left the archive (%s), or apt may not know "
                   "this arch or its lists may be stale (dpkg --add-architecture %s && "
                   "apt-get update). To fix it: update the pin in '%s' (its comments say "
                   "how), put '%s' in '%s' by hand (snapshot.debian.org keeps every "
                   "version)%s",
                   pin_noun (pin), pin->package, pin->version, airlock_arch_to_string (arch),
                   complaint,
                   pin->role == AIRLOCK_PIN_KERNEL
                     ? "Debian drops superseded kernel ABIs"
                     : "Debian replaces a package's version when a stable or security update "
                       "supersedes it",
                   airlock_arch_to_string (arch), pin->origin, name, downloads_dir,
                   pin_alternative (pin));
      goto out;
    }
  fetched = g_build_filename (tmp, name, NULL);
  if (!g_file_test (fetched, G_FILE_TEST_IS_REGULAR))
    {
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_UNAVAILABLE,
                   "cannot download %s '%s' version '%s': apt-get succeeded but left no '%s'",
                   pin_noun (pin), pin->package, pin->version, name);
      goto out;
    }
  if (g_rename (fetched, dest) < 0)
    {
      int saved_errno = errno;
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_FAILED,
                   "cannot move the downloaded '%s' to '%s': %s", fetched, dest,
                   g_strerror (saved_errno));
      goto out;
    }
  if (progress)
    progress (stage, pin->size, pin->size, progress_data);
  ok = TRUE;

out:
  remove_download_dir (tmp);
  g_clear_pointer (&run.output, g_bytes_unref);
  g_clear_error (&run.error);
  return ok;
}

char *
airlock_kernel_pin_fetch (const AirlockKernelPin *pin, AirlockArch arch, const char *downloads_dir,
                          AirlockProgressFunc progress, gpointer progress_data, GError **error)
{
  g_autofree char *name = airlock_kernel_pin_deb_name (pin, arch);
  g_autofree char *path = g_build_filename (downloads_dir, name, NULL);
  g_autofree char *stage = g_strdup_printf ("verify %s %s", pin->package, pin->version);

  if (g_mkdir_with_parents (downloads_dir, 0755) < 0)
    {
      int saved_errno = errno;
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_FAILED,
                   "cannot create download directory '%s': %s", downloads_dir,
                   g_strerror (saved_errno));
      return NULL;
    }

  /* A file that does not match the pin is deleted and downloaded again, at
   * most twice in all: a second bad download means the archive serves
   * something else than what was pinned, and retrying will not change it. */
  for (guint downloads = 0;; downloads++)
    {
      if (g_file_test (path, G_FILE_TEST_EXISTS))
        {
          g_autofree char *why = NULL;

          if (progress)
            progress (stage, 0, 0, progress_data);
          if (deb_matches_pin (path, pin, &why, error))
            return g_steal_pointer (&path);
          if (!why)
            return NULL;
          g_unlink (path);
          if (downloads == 2)
            {
              g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_DIGEST,
                           "%s '%s' version '%s' downloaded twice does not match "
                           "its pin in '%s': %s; the archive's copy is not the pinned one",
                           pin_noun (pin), pin->package, pin->version, pin->origin, why);
              return NULL;
            }
        }
      if (!apt_download (pin, arch, downloads_dir, path, progress, progress_data, error))
        return NULL;
    }
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
