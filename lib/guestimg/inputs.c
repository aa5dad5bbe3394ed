/* What a guest image is made from (inputs-private.h): the kernel, the
 * modules list and the guest programs, each checked and hashed, and the
 * cache keys over them.  Nothing is built here: a lookup of a cached image
 * needs exactly this much. */
#include "config.h"

#include "guestimg/inputs-private.h"

#include <string.h>
#include <sys/stat.h>

/* The static guest programs that go into every initramfs: @name-<arch> in
 * airlock_guest_programs_dir(), stored at @path.  (The supervisor is part of
 * init; the probe is the negative controls it runs before the image.) */
static const struct {
  const char *name;
  const char *path;
  guint mode;
} guest_programs[] = {
  { "init", "init", 0755 },
  { "probe", "airlock/controls/bin/probe", 0755 },
};


static int
compare_strings (gconstpointer a, gconstpointer b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

/* A fingerprint of a modules tree from names, sizes and mtimes: hashing
 * hundreds of megabytes on every lookup would cost seconds, and a rebuilt
 * module changes its mtime.  Symlinks (build, source) are recorded, not
 * followed. */
static void
fingerprint_dir (GChecksum *sum, const char *root, const char *rel)
{
  g_autofree char *path = rel ? g_build_filename (root, rel, NULL) : g_strdup (root);
  g_autoptr (GDir) dir = g_dir_open (path, 0, NULL);
  g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  const char *name;

  while (dir && (name = g_dir_read_name (dir)))
    g_ptr_array_add (names, g_strdup (name));
  g_ptr_array_sort (names, compare_strings);
  for (guint i = 0; i < names->len; i++)
    {
      g_autofree char *child_rel = rel ? g_build_filename (rel, names->pdata[i], NULL)
                                       : g_strdup (names->pdata[i]);
      g_autofree char *child = g_build_filename (root, child_rel, NULL);
      g_autofree char *line = NULL;
      struct stat st;

      if (lstat (child, &st) < 0)
        continue;
      line = g_strdup_printf ("%s %o %" G_GINT64_FORMAT " %" G_GINT64_FORMAT ".%09ld\n",
                              child_rel, (guint) st.st_mode, (gint64) st.st_size,
                              (gint64) st.st_mtim.tv_sec, (long) st.st_mtim.tv_nsec);
      g_checksum_update (sum, (const guchar *) line, -1);
      if (S_ISDIR (st.st_mode))
        fingerprint_dir (sum, root, child_rel);
    }
}

gboolean
airlock_guest_release_is_valid (const char *release)
{
  if (!g_ascii_isalnum (release[0]))
    return FALSE;
  for (const char *p = release; *p; p++)
    if (!g_ascii_isalnum (*p) && !strchr ("._-+~", *p))
      return FALSE;
  return TRUE;
}

static gboolean
load_custom_kernel (AirlockGuestInputs *in, const AirlockGuestImageOptions *options, GError **error)
{
  g_autoptr (GChecksum) sum = g_checksum_new (G_CHECKSUM_SHA256);

  if (!options->modules_dir)
    {
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_MODULES,
                   "cannot use kernel '%s': no modules directory given for it "
                   "(its lib/modules/<release> directory)", options->kernel_path);
      return FALSE;
    }
  in->custom_kernel = g_canonicalize_filename (options->kernel_path, NULL);
  in->custom_modules_dir = g_canonicalize_filename (options->modules_dir, NULL);
  in->custom_release = g_path_get_basename (in->custom_modules_dir);
  if (!g_file_test (in->custom_modules_dir, G_FILE_TEST_IS_DIR))
    {
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_MODULES,
                   "cannot use modules directory '%s': not a directory", in->custom_modules_dir);
      return FALSE;
    }
  if (!airlock_guest_release_is_valid (in->custom_release))
    {
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_MODULES,
                   "cannot use modules directory '%s': its name '%s' is not a kernel release "
                   "(give the lib/modules/<release> directory itself)",
                   in->custom_modules_dir, in->custom_release);
      return FALSE;
    }
  in->custom_kernel_sha256 = airlock_sha256_file (in->custom_kernel, error);
  if (!in->custom_kernel_sha256)
    {
      g_prefix_error (error, "cannot use kernel '%s': ", in->custom_kernel);
      return FALSE;
    }
  fingerprint_dir (sum, in->custom_modules_dir, NULL);
  in->custom_modules_fingerprint = g_strdup (g_checksum_get_string (sum));
  return TRUE;
}

/* The cache keys: SHA-256 over one line per input, in a fixed order.  Every
 * value was checked to hold no newline (pins, names, releases, hex), so the
 * serialisation is unambiguous.  The kernel stage's key covers the kernel
 * and the modules list; the image's key covers that and the programs. */
static void
compute_keys (AirlockGuestInputs *in)
{
  g_autoptr (GString) s = g_string_new (NULL);

  g_string_append_printf (s, "builder %s\narch %s\n", AIRLOCK_GUEST_IMAGE_BUILDER,
                          airlock_arch_to_string (in->arch));
  if (in->pin)
    g_string_append_printf (s, "kernel debian\npackage %s\nversion %s\nsha256 %s\nsize %" G_GUINT64_FORMAT "\n",
                            in->pin->package, in->pin->version, in->pin->sha256, in->pin->size);
  else
    g_string_append_printf (s, "kernel custom\nkernel-sha256 %s\nrelease %s\nmodules-fingerprint %s\n",
                            in->custom_kernel_sha256, in->custom_release,
                            in->custom_modules_fingerprint);
  for (guint i = 0; i < in->requests->len; i++)
    {
      AirlockModuleRequest *r = in->requests->pdata[i];
      g_string_append_printf (s, "module %s%s\n", r->name, r->optional ? "?" : "");
    }
  in->kernel_key = g_compute_checksum_for_string (G_CHECKSUM_SHA256, s->str, s->len);
  for (guint i = 0; i < in->n_programs; i++)
    g_string_append_printf (s, "program %s %s %o %s\n", in->programs[i].name, in->programs[i].path,
                            in->programs[i].mode, in->programs[i].sha256);
  in->key = g_compute_checksum_for_string (G_CHECKSUM_SHA256, s->str, s->len);
}

/* A file of airlock_data_dir() (@what: "guest kernel recipe", …) must be
 * there before it is read.  When it is not, the usual cause is a build
 * tree's airlock run directly: without `meson devenv` it looks in the
 * datadir it would be installed to, which an uninstalled checkout never
 * filled, and the reader's "No such file or directory" alone does not say
 * what to do about it. */
gboolean
airlock_guest_check_data_file (const char *path, const char *what, GError **error)
{
  g_autofree char *name = NULL;

  if (g_file_test (path, G_FILE_TEST_EXISTS))
    return TRUE;
  name = g_path_get_basename (path);
  g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_RECIPE,
               "cannot read %s '%s': no such file (airlock's data files are not in '%s': "
               "run a build tree's airlock as `meson devenv -C BUILD airlock …`, or point "
               "$AIRLOCK_DATA_DIR at the directory holding %s)",
               what, path, airlock_data_dir (), name);
  return FALSE;
}

AirlockGuestInputs *
airlock_guest_inputs_load (AirlockArch arch, const AirlockGuestImageOptions *options, GError **error)
{
  g_autoptr (AirlockGuestInputs) in = g_new0 (AirlockGuestInputs, 1);
  const char *data_dir = airlock_data_dir ();
  g_autofree char *modules_list = g_build_filename (data_dir, "modules.list", NULL);

  in->arch = arch;
  /* Absolute: the paths handed back go to libvirt and QEMU, which do not
   * share our working directory. */
  if (options->cache_dir)
    in->cache_dir = g_canonicalize_filename (options->cache_dir, NULL);
  else
    in->cache_dir = airlock_default_cache_dir ();
  in->arch_dir = g_build_filename (in->cache_dir, "guest", airlock_arch_to_string (arch), NULL);

  if (options->kernel_path)
    {
      if (!load_custom_kernel (in, options, error))
        return NULL;
    }
  else
    {
      g_autofree char *kernels_ini = g_build_filename (data_dir, "kernels.ini", NULL);

      if (options->modules_dir)
        {
          g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_FAILED,
                       "cannot use modules directory '%s' without the kernel it belongs to",
                       options->modules_dir);
          return NULL;
        }
      if (!airlock_guest_check_data_file (kernels_ini, "guest kernel recipe", error))
        return NULL;
      in->pin = airlock_kernel_pin_load (kernels_ini, arch, error);
      if (!in->pin)
        return NULL;
    }

  if (!airlock_guest_check_data_file (modules_list, "module list", error))
    return NULL;
  in->requests = airlock_modules_list_load (modules_list, error);
  if (!in->requests)
    return NULL;

  in->n_programs = G_N_ELEMENTS (guest_programs);
  in->programs = g_new0 (AirlockGuestProgram, in->n_programs);
  for (guint i = 0; i < in->n_programs; i++)
    {
      AirlockGuestProgram *p = &in->programs[i];
      g_autofree char *file = g_strdup_printf ("%s-%s", guest_programs[i].name,
                                               airlock_arch_to_string (arch));
      g_autoptr (GError) local_error = NULL;

      p->name = guest_programs[i].name;
      p->path = guest_programs[i].path;
      p->mode = guest_programs[i].mode;
      p->host_path = g_build_filename (airlock_guest_programs_dir (), file, NULL);
      p->sha256 = airlock_sha256_file (p->host_path, &local_error);
      if (!p->sha256)
        {
          g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_GUEST_PROGRAM,
                       "cannot use guest program '%s' for %s: %s (build airlock and run a "
                       "build tree's airlock as `meson devenv -C BUILD airlock …`, or point "
                       "$AIRLOCK_GUEST_DIR at the directory holding %s)",
                       p->host_path, airlock_arch_to_string (arch), local_error->message, file);
          return NULL;
        }
    }
  compute_keys (in);
  return g_steal_pointer (&in);
}
