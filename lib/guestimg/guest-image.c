#define _GNU_SOURCE

#include "config.h"

#include "guestimg/guest-image.h"
#include "fsutil-private.h"

#include "guestimg/bzimage-private.h"
#include "guestimg/cpio-private.h"
#include "guestimg/manifest-private.h"
#include "guestimg/modules-private.h"
#include "guestimg/package-private.h"
#include "guestimg/recipe-private.h"
#include "guestimg/testroot-private.h"
#include "guestimg/shell-private.h"
#include "guestimg/transfer-private.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

G_DEFINE_QUARK (airlock-guest-image-error-quark, airlock_guest_image_error)

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

void
airlock_guest_image_free (AirlockGuestImage *image)
{
  if (!image)
    return;
  g_free (image->dir);
  g_free (image->kernel_path);
  g_free (image->initramfs_path);
  g_free (image->manifest_path);
  g_free (image->kernel_release);
  g_free (image->kernel_sha256);
  g_free (image->initramfs_sha256);
  g_free (image->kernel_source);
  g_free (image);
}

static void
report (const AirlockGuestImageOptions *options, const char *stage, guint64 done, guint64 total)
{
  if (options->progress)
    options->progress (stage, done, total, options->progress_data);
}

static gboolean
set_io_error (GError **error, int saved_errno, const char *what, const char *path)
{
  g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_FAILED,
               "cannot %s '%s': %s", what, path, g_strerror (saved_errno));
  return FALSE;
}

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

static gboolean
release_is_valid (const char *release)
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
  if (!release_is_valid (in->custom_release))
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
static gboolean
check_data_file (const char *path, const char *what, GError **error)
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

static AirlockGuestInputs *
load_inputs (AirlockArch arch, const AirlockGuestImageOptions *options, GError **error)
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
    {
      g_autofree char *cache_dir = airlock_default_cache_dir ();
      in->cache_dir = g_canonicalize_filename (cache_dir, NULL);
    }
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
      if (!check_data_file (kernels_ini, "guest kernel recipe", error))
        return NULL;
      in->pin = airlock_kernel_pin_load (kernels_ini, arch, error);
      if (!in->pin)
        return NULL;
    }

  if (!check_data_file (modules_list, "module list", error))
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

/* "kernel/fs/ext4/ext4.ko.xz" → "kernel/fs/ext4/ext4.ko": the initramfs
 * holds modules decompressed, so the guest's init loads any of them the
 * same way. */
static char *
module_stored_path (const char *path)
{
  if (g_str_has_suffix (path, ".ko.xz") || g_str_has_suffix (path, ".ko.gz"))
    return g_strndup (path, strlen (path) - 3);
  if (g_str_has_suffix (path, ".ko.zst"))
    return g_strndup (path, strlen (path) - 4);
  return g_strdup (path);
}

/* Writes @data to @dir/@rel, creating the directories on the way. */
static gboolean
write_stage_file (const char *dir, const char *rel, GBytes *data, GError **error)
{
  g_autofree char *path = g_build_filename (dir, rel, NULL);
  g_autofree char *parent = g_path_get_dirname (path);

  if (g_mkdir_with_parents (parent, 0755) < 0)
    return set_io_error (error, errno, "create directory", parent);
  return g_file_set_contents_full (path, g_bytes_get_data (data, NULL), g_bytes_get_size (data),
                                   G_FILE_SET_CONTENTS_NONE, 0644, error);
}

static AirlockGuestFile *
stage_file_new (const char *name, const char *path, GBytes *data)
{
  AirlockGuestFile *f = g_new0 (AirlockGuestFile, 1);

  f->name = g_strdup (name);
  f->path = g_strdup (path);
  f->size = g_bytes_get_size (data);
  f->sha256 = g_compute_checksum_for_bytes (G_CHECKSUM_SHA256, data);
  return f;
}

/* Copies one module into the stage, decompressed, and records it.  With
 * @strip_signature (Debian's pinned kernels), without the signature its
 * build appended: the guest kernel would verify it at every load (SHA-256
 * of the whole module and an RSA check, under TCG ~40% of a module's load:
 * ext4.ko 260 → 170 ms on amd64), and it vouches for nothing the pin has
 * not: the package was checked against its pinned SHA-256 before anything
 * was taken from it, which no other signed Debian module would match.  The
 * kernel does not enforce signatures there (no lockdown without Secure
 * Boot), so an unsigned module loads; a custom kernel (--kernel), which
 * may enforce them, keeps its modules as they are. */
static gboolean
stage_module (const char *stage_dir, const char *modules_dir, const char *release,
              const char *rel, gboolean strip_signature, GPtrArray *files, GError **error)
{
  g_autofree char *source = g_build_filename (modules_dir, rel, NULL);
  g_autofree char *stored = module_stored_path (rel);
  g_autofree char *dest = g_build_filename ("lib", "modules", release, stored, NULL);
  g_autofree char *what = g_strdup_printf ("module '%s'", source);
  g_autofree char *name = airlock_module_name_from_path (rel);
  g_autoptr (GMappedFile) mapped = NULL;
  g_autoptr (GBytes) contents = NULL;
  g_autoptr (GBytes) ko = NULL;
  const guint8 *data;
  gsize len;

  mapped = g_mapped_file_new (source, FALSE, error);
  if (!mapped)
    {
      g_prefix_error (error, "cannot read %s: ", what);
      return FALSE;
    }
  contents = g_mapped_file_get_bytes (mapped);
  data = g_bytes_get_data (contents, &len);
  if (g_str_has_suffix (rel, ".ko.xz"))
    ko = airlock_xz_decompress (data, len, 0, what, error);
  else if (g_str_has_suffix (rel, ".ko.gz"))
    ko = airlock_gzip_decompress (data, len, 0, what, error);
  else if (g_str_has_suffix (rel, ".ko.zst"))
    {
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_MODULES,
                   "cannot use %s: it is zstd-compressed and airlock reads .ko, .ko.xz and "
                   ".ko.gz modules; decompress the modules into a copy of the directory "
                   "(zstd -d) and pass that", what);
      return FALSE;
    }
  else
    ko = g_bytes_ref (contents);
  if (ko && strip_signature)
    {
      GBytes *unsigned_ko = airlock_module_strip_signature (ko, what, error);

      g_bytes_unref (ko);
      ko = unsigned_ko;
    }
  if (!ko || !write_stage_file (stage_dir, dest, ko, error))
    return FALSE;
  g_ptr_array_add (files, stage_file_new (name, dest, ko));
  return TRUE;
}

/* The modules of the closure, then their indexes: modules.dep for exactly
 * these modules (as depmod wrote it for the full tree: the closure is
 * closed under dependencies, so every line is complete), and load.list, the
 * order the guest's init loads them in. */
static gboolean
stage_modules (const char *stage_dir, const char *modules_dir, AirlockGuestBuild *build,
               AirlockModuleDep *dep, GPtrArray *load_order, gboolean strip_signatures,
               GError **error)
{
  g_autoptr (GString) load_list = g_string_new (NULL);
  g_autofree char *dep_path = g_build_filename ("lib", "modules", build->release, "modules.dep", NULL);
  g_autofree char *dep_text = airlock_module_dep_format (dep, load_order, module_stored_path);
  g_autoptr (GBytes) dep_bytes = NULL;
  g_autoptr (GBytes) list_bytes = NULL;

  build->files = g_ptr_array_new_with_free_func ((GDestroyNotify) airlock_guest_file_free);
  for (guint i = 0; i < load_order->len; i++)
    {
      AirlockGuestFile *f;

      if (!stage_module (stage_dir, modules_dir, build->release, load_order->pdata[i],
                         strip_signatures, build->files, error))
        return FALSE;
      f = build->files->pdata[build->files->len - 1];
      g_string_append_printf (load_list, "%s\n", f->path);
    }
  dep_bytes = g_bytes_new (dep_text, strlen (dep_text));
  list_bytes = g_string_free_to_bytes (g_steal_pointer (&load_list));
  if (!write_stage_file (stage_dir, dep_path, dep_bytes, error)
      || !write_stage_file (stage_dir, "lib/modules/load.list", list_bytes, error))
    return FALSE;
  g_ptr_array_add (build->files, stage_file_new (NULL, dep_path, dep_bytes));
  g_ptr_array_add (build->files, stage_file_new (NULL, "lib/modules/load.list", list_bytes));
  return TRUE;
}

static const char *
boot_format_name (AirlockBootKernelFormat format)
{
  switch (format)
    {
    case AIRLOCK_BOOT_KERNEL_VMLINUX_PVH:
      return "vmlinux-pvh";
    case AIRLOCK_BOOT_KERNEL_BZIMAGE:
      return "bzimage";
    case AIRLOCK_BOOT_KERNEL_ARM64_IMAGE:
      return "arm64-image";
    }
  return "unknown";
}

/* Builds the kernel stage into the empty directory @tmp: the kernel to boot,
 * the modules the guest needs and their indexes, kernel.json.  Scratch
 * files (the extracted package, ~400 MB) go to @tmp/.work and are removed
 * on success; on failure the caller removes @tmp. */
static gboolean
build_kernel_stage (AirlockGuestInputs *in, const char *tmp,
                    const AirlockGuestImageOptions *options, GError **error)
{
  g_autoptr (AirlockGuestBuild) build = g_new0 (AirlockGuestBuild, 1);
  g_autoptr (AirlockBootKernel) kernel = NULL;
  g_autoptr (AirlockModuleClosure) closure = NULL;
  g_autofree char *work = g_build_filename (tmp, ".work", NULL);
  g_autofree char *what = NULL;
  g_autofree char *kernel_file = NULL;
  g_autofree char *modules_dir = NULL;
  g_autofree char *kernel_out = NULL;
  g_autofree char *manifest_out = g_build_filename (tmp, AIRLOCK_GUEST_STAGE_MANIFEST_FILE, NULL);
  g_autofree char *depmod_root = NULL;
  g_autofree char *link_dir = NULL;
  g_autofree char *link = NULL;
  g_autofree char *depmod_text = NULL;
  g_autofree char *depmod_origin = NULL;
  g_autofree char *builtin_path = NULL;
  g_autofree char *builtin_text = NULL;
  g_autofree char *stage = NULL;
  g_autoptr (GHashTable) builtin = NULL;
  g_autoptr (AirlockModuleDep) dep = NULL;
  g_autoptr (GMappedFile) mapped = NULL;
  g_autoptr (GBytes) kernel_bytes = NULL;

  if (g_mkdir (work, 0755) < 0)
    return set_io_error (error, errno, "create directory", work);

  if (in->pin)
    {
      g_autofree char *downloads = g_build_filename (in->cache_dir, "downloads", NULL);
      g_autofree char *pkg = g_build_filename (work, "pkg", NULL);
      g_autofree char *deb = NULL;
      g_autofree char *kernel_member = NULL;
      g_autofree char *modules_member = NULL;
      g_autoptr (AirlockDebKernelLayout) layout = NULL;
      const char *members[3] = { NULL };
      AirlockPinSources sources = { .local_dir = options->kernel_dir };

      what = g_strdup_printf ("kernel package '%s' version '%s'", in->pin->package, in->pin->version);
      deb = airlock_kernel_pin_fetch (in->pin, in->arch, downloads, &sources, options->progress,
                                      options->progress_data, error);
      if (!deb)
        return FALSE;
      layout = airlock_deb_kernel_layout (deb, what, error);
      if (!layout)
        return FALSE;
      if (!release_is_valid (layout->release))
        {
          g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_KERNEL_FORMAT,
                       "cannot use %s: its kernel release '%s' is not a valid release name",
                       what, layout->release);
          return FALSE;
        }
      stage = g_strdup_printf ("extract %s", in->pin->package);
      report (options, stage, 0, 0);
      kernel_member = g_strconcat ("./", layout->kernel, NULL);
      modules_member = g_strconcat ("./", layout->modules_dir, NULL);
      members[0] = kernel_member;
      members[1] = modules_member;
      if (g_mkdir (pkg, 0755) < 0)
        return set_io_error (error, errno, "create directory", pkg);
      if (!airlock_deb_extract (deb, pkg, members, what, error))
        return FALSE;
      build->release = g_strdup (layout->release);
      kernel_file = g_build_filename (pkg, layout->kernel, NULL);
      modules_dir = g_build_filename (pkg, layout->modules_dir, NULL);
    }
  else
    {
      what = g_strdup_printf ("kernel '%s'", in->custom_kernel);
      build->release = g_strdup (in->custom_release);
      kernel_file = g_strdup (in->custom_kernel);
      modules_dir = g_strdup (in->custom_modules_dir);
    }

  /* depmod wants <root>/lib/modules/<release>: give it a root of its own
   * that links to the modules, wherever they are (a user's directory, which
   * stays untouched; a merged-/usr package's usr/lib/modules). */
  depmod_root = g_build_filename (work, "depmod", NULL);
  link_dir = g_build_filename (depmod_root, "lib", "modules", NULL);
  link = g_build_filename (link_dir, build->release, NULL);
  if (g_mkdir_with_parents (link_dir, 0755) < 0)
    return set_io_error (error, errno, "create directory", link_dir);
  if (symlink (modules_dir, link) < 0)
    return set_io_error (error, errno, "create symlink", link);

  /* The kernel. */
  g_clear_pointer (&stage, g_free);
  stage = g_strdup_printf ("prepare kernel %s", build->release);
  report (options, stage, 0, 0);
  mapped = g_mapped_file_new (kernel_file, FALSE, error);
  if (!mapped)
    {
      g_prefix_error (error, "cannot read %s: ", what);
      return FALSE;
    }
  kernel_bytes = g_mapped_file_get_bytes (mapped);
  kernel = airlock_boot_kernel_prepare (in->arch, kernel_bytes, what, error);
  if (!kernel)
    return FALSE;
  if (kernel->release && !g_str_equal (kernel->release, build->release))
    {
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_MODULES,
                   "cannot use %s: it is release '%s', but its modules are for release '%s' "
                   "('%s'); modules only load into the kernel they were built with",
                   what, kernel->release, build->release, modules_dir);
      return FALSE;
    }
  kernel_out = g_build_filename (tmp, kernel->file_name, NULL);
  if (!g_file_set_contents_full (kernel_out, g_bytes_get_data (kernel->image, NULL),
                                 g_bytes_get_size (kernel->image),
                                 G_FILE_SET_CONTENTS_NONE, 0644, error))
    return FALSE;
  build->kernel_file = g_strdup (kernel->file_name);
  build->kernel_format = g_strdup (boot_format_name (kernel->format));
  build->kernel_how = g_strdup (kernel->how);
  build->kernel_size = g_bytes_get_size (kernel->image);
  build->kernel_sha256 = g_compute_checksum_for_bytes (G_CHECKSUM_SHA256, kernel->image);

  /* The modules: depmod over the whole tree (only it knows which symbols
   * each module needs), then the closure of modules.list over that. */
  g_clear_pointer (&stage, g_free);
  stage = g_strdup_printf ("resolve modules of %s", build->release);
  report (options, stage, 0, 0);
  depmod_text = airlock_depmod_show (depmod_root, build->release, error);
  if (!depmod_text)
    return FALSE;
  build->depmod_version = airlock_depmod_version ();
  depmod_origin = g_strdup_printf ("depmod output for '%s'", modules_dir);
  dep = airlock_module_dep_parse (depmod_text, depmod_origin, error);
  if (!dep)
    return FALSE;
  builtin_path = g_build_filename (modules_dir, "modules.builtin", NULL);
  if (!g_file_get_contents (builtin_path, &builtin_text, NULL, NULL))
    builtin_text = g_strdup ("");   /* a kernel without built-in modules, or an odd tree */
  builtin = airlock_modules_builtin_parse (builtin_text);
  closure = airlock_modules_closure (dep, builtin, in->requests, build->release, error);
  if (!closure)
    return FALSE;
  build->builtin = g_ptr_array_ref (closure->builtin);
  build->absent_optional = g_ptr_array_ref (closure->absent_optional);
  build->module_signatures = g_strdup (in->pin ? "stripped" : "kept");
  if (!stage_modules (tmp, modules_dir, build, dep, closure->load_order, in->pin != NULL, error))
    return FALSE;

  /* Last: kernel.json's mtime vouches for the files written before it. */
  if (!airlock_guest_stage_write (in, build, manifest_out, error))
    return FALSE;
  airlock_rm_rf (work);
  return TRUE;
}

static void
cpio_progress (guint done, guint total, gpointer user_data)
{
  const AirlockGuestImageOptions *options = user_data;

  report (options, "write initramfs", done, total);
}

/* Builds the image into the empty directory @tmp from the kernel stage in
 * @stage_dir (described by @build, which gains the initramfs): the kernel,
 * linked, and an initramfs of the guest programs and the stage's files. */
static gboolean
build_image (AirlockGuestInputs *in, const char *stage_dir, AirlockGuestBuild *build,
             const char *tmp, const AirlockGuestImageOptions *options, GError **error)
{
  g_autoptr (AirlockCpio) cpio = airlock_cpio_new ();
  g_autofree char *kernel_src = g_build_filename (stage_dir, build->kernel_file, NULL);
  g_autofree char *kernel_out = g_build_filename (tmp, build->kernel_file, NULL);
  g_autofree char *initramfs_out = g_build_filename (tmp, AIRLOCK_GUEST_INITRAMFS_FILE, NULL);
  g_autofree char *manifest_out = g_build_filename (tmp, AIRLOCK_GUEST_MANIFEST_FILE, NULL);
  g_autoptr (GFile) initramfs_file = g_file_new_for_path (initramfs_out);
  g_autoptr (GFileOutputStream) file_out = NULL;
  g_autoptr (GOutputStream) out = NULL;
  GStatBuf st;

  /* The kernel is the stage's, byte for byte: a hard link costs nothing
   * (same filesystem: both live under the arch directory). */
  if (link (kernel_src, kernel_out) < 0)
    {
      g_autoptr (GFile) src = g_file_new_for_path (kernel_src);
      g_autoptr (GFile) dest = g_file_new_for_path (kernel_out);

      if (!g_file_copy (src, dest, G_FILE_COPY_NONE, NULL, NULL, NULL, error))
        return FALSE;
    }

  for (guint i = 0; i < in->n_programs; i++)
    if (!airlock_cpio_add_file (cpio, in->programs[i].path, in->programs[i].mode,
                                in->programs[i].host_path, error))
      return FALSE;
  for (guint i = 0; i < build->files->len; i++)
    {
      AirlockGuestFile *f = build->files->pdata[i];
      g_autofree char *source = g_build_filename (stage_dir, f->path, NULL);

      if (!airlock_cpio_add_file (cpio, f->path, 0644, source, error))
        return FALSE;
    }
  file_out = g_file_create (initramfs_file, G_FILE_CREATE_NONE, NULL, error);
  if (!file_out)
    return FALSE;
  out = g_buffered_output_stream_new_sized (G_OUTPUT_STREAM (file_out), 1 << 20);
  if (!airlock_cpio_write (cpio, out, cpio_progress, (gpointer) options, error)
      || !g_output_stream_close (out, NULL, error))
    {
      g_prefix_error (error, "cannot write initramfs '%s': ", initramfs_out);
      return FALSE;
    }
  if (g_stat (initramfs_out, &st) < 0)
    return set_io_error (error, errno, "read", initramfs_out);
  build->initramfs_size = st.st_size;
  build->initramfs_sha256 = airlock_sha256_file (initramfs_out, error);
  if (!build->initramfs_sha256)
    return FALSE;

  /* Last: the manifest's mtime vouches for the files written before it. */
  return airlock_guest_manifest_write (in, build, manifest_out, error);
}

int
airlock_guest_lock_arch_dir (const char *arch_dir, AirlockArch arch, AirlockProgressFunc progress,
                             gpointer progress_data, GError **error)
{
  g_autofree char *path = g_build_filename (arch_dir, ".lock", NULL);
  g_autofree char *stage = NULL;
  int fd = open (path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  int r;

  if (fd < 0)
    {
      set_io_error (error, errno, "open lock file", path);
      return -1;
    }
  r = flock (fd, LOCK_EX | LOCK_NB);
  if (r < 0 && errno == EWOULDBLOCK)
    {
      stage = g_strdup_printf ("wait for another airlock building the %s guest image",
                               airlock_arch_to_string (arch));
      if (progress)
        progress (stage, 0, 0, progress_data);
      do
        r = flock (fd, LOCK_EX);
      while (r < 0 && errno == EINTR);
    }
  if (r < 0)
    {
      set_io_error (error, errno, "lock", path);
      close (fd);
      return -1;
    }
  return fd;
}

/* Serialises builders of one arch across processes.  Returns the locked
 * fd (closing it unlocks), or -1 with @error set. */
static int
lock_arch (AirlockGuestInputs *in, const AirlockGuestImageOptions *options, GError **error)
{
  return airlock_guest_lock_arch_dir (in->arch_dir, in->arch, options->progress,
                                      options->progress_data, error);
}

/* Leftovers of builders that died: whoever holds the arch lock is the only
 * builder, so any scratch directory present then is abandoned. */
static void
remove_stale_builds (const char *arch_dir)
{
  g_autoptr (GDir) dir = g_dir_open (arch_dir, 0, NULL);
  const char *name;

  while (dir && (name = g_dir_read_name (dir)))
    if (g_str_has_prefix (name, ".build-") || g_str_has_prefix (name, ".old-"))
      {
        g_autofree char *path = g_build_filename (arch_dir, name, NULL);
        airlock_rm_rf (path);
      }
}

gboolean
airlock_guest_install_dir (const char *tmp, const char *dir, const char *arch_dir, GError **error)
{
  g_autofree char *old_tmpl = NULL;
  g_autofree char *old = NULL;

  if (rename (tmp, dir) == 0)
    return TRUE;
  if (errno != ENOTEMPTY && errno != EEXIST)
    return set_io_error (error, errno, "move the new guest image to", dir);
  /* --force over an existing image: swap, then remove the old one. */
  if (renameat2 (AT_FDCWD, tmp, AT_FDCWD, dir, RENAME_EXCHANGE) == 0)
    {
      airlock_rm_rf (tmp);
      return TRUE;
    }
  /* Filesystems without RENAME_EXCHANGE: move the old one aside first. */
  old_tmpl = g_build_filename (arch_dir, ".old-XXXXXX", NULL);
  old = g_mkdtemp (g_steal_pointer (&old_tmpl));
  if (!old)
    return set_io_error (error, errno, "create a directory in", arch_dir);
  if (rename (dir, old) < 0)
    return set_io_error (error, errno, "move the old guest image", dir);
  if (rename (tmp, dir) < 0)
    return set_io_error (error, errno, "move the new guest image to", dir);
  airlock_rm_rf (old);
  return TRUE;
}

/* Moves the finished @tmp to @dir in one step, so a reader sees the old
 * image or the new one, never a mix. */
static gboolean
install_build (const char *tmp, const char *dir, const char *arch_dir, GError **error)
{
  return airlock_guest_install_dir (tmp, dir, arch_dir, error);
}

static char *
make_build_dir (AirlockGuestInputs *in, GError **error)
{
  g_autofree char *tmpl = g_build_filename (in->arch_dir, ".build-XXXXXX", NULL);

  if (!g_mkdtemp_full (tmpl, 0755))
    {
      set_io_error (error, errno, "create a build directory in", in->arch_dir);
      return NULL;
    }
  return g_steal_pointer (&tmpl);
}

/* The kernel stage for @in in @stage_dir, extracted now unless a good one
 * is there (and not forced).  Called with the arch lock held. */
static AirlockGuestBuild *
ensure_kernel_stage (AirlockGuestInputs *in, const char *stage_dir,
                     const AirlockGuestImageOptions *options, GError **error)
{
  g_autofree char *why = NULL;
  g_autofree char *tmp = NULL;
  AirlockGuestBuild *stage = NULL;

  if (!options->force)
    {
      stage = airlock_guest_stage_load (in, stage_dir, &why);
      if (stage)
        return stage;
    }
  tmp = make_build_dir (in, error);
  if (!tmp)
    return NULL;
  if (!build_kernel_stage (in, tmp, options, error) || !install_build (tmp, stage_dir, in->arch_dir, error))
    {
      airlock_rm_rf (tmp);
      return NULL;
    }
  g_clear_pointer (&why, g_free);
  stage = airlock_guest_stage_load (in, stage_dir, &why);
  if (!stage)
    g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_FAILED,
                 "the %s kernel stage just extracted in '%s' does not check out: %s",
                 airlock_arch_to_string (in->arch), stage_dir, why);
  return stage;
}

/* Callers match on AIRLOCK_GUEST_IMAGE_ERROR codes only: GLib's own I/O
 * errors on the way (their messages already say what failed) become
 * AIRLOCK_GUEST_IMAGE_ERROR_FAILED. */
static void
propagate_in_domain (GError **error, GError *local_error)
{
  if (local_error->domain != AIRLOCK_GUEST_IMAGE_ERROR)
    {
      local_error->domain = AIRLOCK_GUEST_IMAGE_ERROR;
      local_error->code = AIRLOCK_GUEST_IMAGE_ERROR_FAILED;
    }
  g_propagate_error (error, local_error);
}

/* The base image (kernel + initramfs) for @arch; @ret_in gets its inputs. */
static AirlockGuestImage *
ensure_base_image (AirlockArch arch, const AirlockGuestImageOptions *options,
                   AirlockGuestInputs **ret_in, GError **error)
{
  g_autoptr (AirlockGuestInputs) in = NULL;
  g_autofree char *dir = NULL;
  g_autofree char *stage_dir = NULL;
  g_autofree char *why = NULL;
  g_autofree char *tmp = NULL;
  g_autoptr (AirlockGuestBuild) stage = NULL;
  g_autoptr (GError) local_error = NULL;
  AirlockGuestImage *image = NULL;
  int lock_fd;

  in = load_inputs (arch, options, &local_error);
  if (!in)
    {
      propagate_in_domain (error, g_steal_pointer (&local_error));
      return NULL;
    }
  dir = g_build_filename (in->arch_dir, in->key, NULL);
  stage_dir = g_strdup_printf ("%s/kernel-%s", in->arch_dir, in->kernel_key);

  if (!options->force || options->offline)
    {
      image = airlock_guest_manifest_load (in, dir, &why);
      if (image || options->offline)
        {
          if (!image && in->pin)
            g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_NOT_BUILT,
                         "no usable %s guest image for these inputs in '%s': %s; build it with "
                         "'airlock images build --arch %s'", airlock_arch_to_string (arch),
                         dir, why, airlock_arch_to_string (arch));
          else if (!image)
            g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_NOT_BUILT,
                         "no usable %s guest image for these inputs in '%s': %s; build it with "
                         "'airlock images build --arch %s --kernel %s --modules %s'",
                         airlock_arch_to_string (arch), dir, why, airlock_arch_to_string (arch),
                         in->custom_kernel, in->custom_modules_dir);
          if (image)
            *ret_in = g_steal_pointer (&in);
          return image;
        }
    }

  if (g_mkdir_with_parents (in->arch_dir, 0755) < 0)
    {
      set_io_error (error, errno, "create cache directory", in->arch_dir);
      return NULL;
    }
  lock_fd = lock_arch (in, options, error);
  if (lock_fd < 0)
    return NULL;

  /* Whoever held the lock before us may have built this very image. */
  if (!options->force)
    {
      g_clear_pointer (&why, g_free);
      image = airlock_guest_manifest_load (in, dir, &why);
      if (image)
        goto out;
    }

  remove_stale_builds (in->arch_dir);
  stage = ensure_kernel_stage (in, stage_dir, options, &local_error);
  if (!stage)
    {
      propagate_in_domain (error, g_steal_pointer (&local_error));
      goto out;
    }
  tmp = make_build_dir (in, &local_error);
  if (!tmp
      || !build_image (in, stage_dir, stage, tmp, options, &local_error)
      || !install_build (tmp, dir, in->arch_dir, &local_error))
    {
      if (tmp)
        airlock_rm_rf (tmp);
      propagate_in_domain (error, g_steal_pointer (&local_error));
      goto out;
    }
  g_clear_pointer (&why, g_free);
  image = airlock_guest_manifest_load (in, dir, &why);
  if (!image)
    g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_FAILED,
                 "the %s guest image just built in '%s' does not check out: %s",
                 airlock_arch_to_string (arch), dir, why);

out:
  close (lock_fd);
  if (image)
    *ret_in = g_steal_pointer (&in);
  return image;
}

/* An initramfs variant: the base image's initramfs (or the variant before
 * it) with one more archive appended, cached in <arch>/PREFIX-<key>/. */
typedef struct {
  const char *what;          /* "testroot", "static shell": messages */
  const char *prefix;        /* the cache directory's name before the key */
  const char *stage;         /* the progress stage of a build */
  gboolean (*cache_load) (const char *dir, const char *key, char **ret_path, char **ret_sha256,
                          char **ret_why);
  /* Writes the variant of @base_path into @tmp from @recipe (the loaded
   * testroot or shell recipe). */
  gboolean (*build) (gpointer recipe, const char *key, const char *base_path,
                     const char *base_sha256, const char *downloads, const char *tmp,
                     AirlockProgressFunc progress, gpointer progress_data, GError **error);
} InitramfsVariant;

static gboolean
build_testroot (gpointer recipe, const char *key, const char *base_path, const char *base_sha256,
                const char *downloads, const char *tmp, AirlockProgressFunc progress,
                gpointer progress_data, GError **error)
{
  return airlock_testroot_build (recipe, key, base_path, base_sha256, downloads, tmp, progress,
                                 progress_data, error);
}

static gboolean
build_shell (gpointer recipe, const char *key, const char *base_path, const char *base_sha256,
             const char *downloads, const char *tmp, AirlockProgressFunc progress,
             gpointer progress_data, GError **error)
{
  return airlock_shell_tools_build (recipe, key, base_path, base_sha256, downloads, tmp, progress,
                                    progress_data, error);
}

static const InitramfsVariant testroot_variant = {
  "testroot", "testroot", "write testroot", airlock_testroot_cache_load, build_testroot,
};
static const InitramfsVariant shell_variant = {
  "static shell", "shell", "write shell", airlock_shell_tools_cache_load, build_shell,
};

/* Points @image at variant @v of its initramfs for @recipe, whose cache key
 * is @key (it covers the initramfs it builds on and every input of the
 * recipe, the pins of its packages included; those are downloaded into
 * <cache>/downloads/ like the kernel's, only to build): found in the cache,
 * or built now under the arch's lock (or rebuilt with options->force).
 * Returns FALSE with @error set. */
static gboolean
ensure_variant (AirlockGuestInputs *in, AirlockGuestImage *image,
                const AirlockGuestImageOptions *options, const InitramfsVariant *v,
                gpointer recipe, const char *key, GError **error)
{
  g_autoptr (GError) local_error = NULL;
  g_autofree char *name = g_strdup_printf ("%s-%s", v->prefix, key);
  g_autofree char *dir = g_build_filename (in->arch_dir, name, NULL);
  g_autofree char *tmp = NULL;
  g_autofree char *why = NULL;
  g_autofree char *path = NULL;
  g_autofree char *sha256 = NULL;
  g_autofree char *downloads = g_build_filename (in->cache_dir, "downloads", NULL);
  gboolean ok = FALSE;
  int lock_fd;

  if (!options->force || options->offline)
    {
      ok = v->cache_load (dir, key, &path, &sha256, &why);
      if (!ok && options->offline)
        {
          g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_NOT_BUILT,
                       "no usable %s %s for these inputs in '%s': %s; build it by "
                       "running without --offline", airlock_arch_to_string (in->arch), v->what,
                       dir, why);
          return FALSE;
        }
    }
  if (!ok)
    {
      lock_fd = lock_arch (in, options, error);
      if (lock_fd < 0)
        return FALSE;
      g_clear_pointer (&why, g_free);
      /* Whoever held the lock before us may have built it. */
      if (!options->force)
        ok = v->cache_load (dir, key, &path, &sha256, &why);
      if (!ok)
        {
          report (options, v->stage, 0, 0);
          tmp = make_build_dir (in, &local_error);
          if (!tmp
              || !v->build (recipe, key, image->initramfs_path, image->initramfs_sha256, downloads,
                            tmp, options->progress, options->progress_data, &local_error)
              || !install_build (tmp, dir, in->arch_dir, &local_error))
            {
              if (tmp)
                airlock_rm_rf (tmp);
              close (lock_fd);
              propagate_in_domain (error, g_steal_pointer (&local_error));
              return FALSE;
            }
          g_clear_pointer (&why, g_free);
          ok = v->cache_load (dir, key, &path, &sha256, &why);
          if (!ok)
            g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_FAILED,
                         "the %s %s just built in '%s' does not check out: %s",
                         airlock_arch_to_string (in->arch), v->what, dir, why);
        }
      close (lock_fd);
      if (!ok)
        return FALSE;
    }
  g_free (image->initramfs_path);
  image->initramfs_path = g_steal_pointer (&path);
  g_free (image->initramfs_sha256);
  image->initramfs_sha256 = g_steal_pointer (&sha256);
  return TRUE;
}

/* The testroot variant: the test programs of tests/guest and testroot.ini's
 * files at /airlock/testroot. */
static gboolean
ensure_testroot (AirlockGuestInputs *in, AirlockGuestImage *image,
                 const AirlockGuestImageOptions *options, GError **error)
{
  g_autofree char *recipe = g_build_filename (airlock_data_dir (), "testroot.ini", NULL);
  g_autoptr (AirlockTestroot) testroot = NULL;
  g_autofree char *key = NULL;

  if (!check_data_file (recipe, "testroot recipe", error))
    return FALSE;
  testroot = airlock_testroot_load (in->arch, airlock_guest_programs_dir (), recipe, error);
  if (!testroot)
    return FALSE;
  key = airlock_testroot_key (testroot, image->initramfs_sha256);
  return ensure_variant (in, image, options, &testroot_variant, testroot, key, error);
}

/* The static-shell variant (shell.ini's pinned busybox), on whatever
 * initramfs @image has by now (the base's, or the testroot's). */
static gboolean
ensure_shell (AirlockGuestInputs *in, AirlockGuestImage *image,
              const AirlockGuestImageOptions *options, GError **error)
{
  g_autofree char *recipe = g_build_filename (airlock_data_dir (), "shell.ini", NULL);
  g_autoptr (AirlockShellTools) tools = NULL;
  g_autofree char *key = NULL;

  if (!check_data_file (recipe, "shell recipe", error))
    return FALSE;
  tools = airlock_shell_tools_load (in->arch, recipe, error);
  if (!tools)
    return FALSE;
  key = airlock_shell_tools_key (tools, image->initramfs_sha256);
  return ensure_variant (in, image, options, &shell_variant, tools, key, error);
}

AirlockGuestImage *
airlock_guest_image_ensure (AirlockArch arch, const AirlockGuestImageOptions *options,
                            GError **error)
{
  static const AirlockGuestImageOptions defaults = { NULL };
  g_autoptr (AirlockGuestInputs) in = NULL;
  g_autoptr (AirlockGuestImage) image = NULL;

  g_return_val_if_fail ((unsigned) arch < AIRLOCK_N_ARCHES, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!options)
    options = &defaults;
  image = ensure_base_image (arch, options, &in, error);
  if (!image)
    return NULL;
  if (options->with_testroot && !ensure_testroot (in, image, options, error))
    return NULL;
  if (options->with_shell && !ensure_shell (in, image, options, error))
    return NULL;
  return g_steal_pointer (&image);
}
