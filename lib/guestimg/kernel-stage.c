/* The kernel stage of a guest image (kernel-stage-private.h): the kernel
 * prepared for booting, the closure of modules.list over depmod's
 * dependencies copied in decompressed, and their indexes (modules.dep,
 * load.list), recorded in kernel.json. */
#define _GNU_SOURCE

#include "config.h"

#include "guestimg/kernel-stage-private.h"

#include "cache-dir-private.h"
#include "fsutil-private.h"
#include "guestimg/inputs-private.h"
#include "guestimg/package-private.h"

#include <errno.h>
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

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
  const AirlockCacheDir errors = { .error_domain = AIRLOCK_GUEST_IMAGE_ERROR,
                                   .error_code = AIRLOCK_GUEST_IMAGE_ERROR_FAILED };

  if (g_mkdir_with_parents (parent, 0755) < 0)
    return airlock_cache_set_io_error (&errors, error, errno, "create directory", parent);
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

gboolean
airlock_guest_kernel_stage_build (AirlockGuestInputs *in, const char *tmp,
                                  const AirlockGuestImageOptions *options, GError **error)
{
  const AirlockCacheDir cd = { in->arch_dir, AIRLOCK_GUEST_IMAGE_ERROR,
                               AIRLOCK_GUEST_IMAGE_ERROR_FAILED, options->progress,
                               options->progress_data };
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
    return airlock_cache_set_io_error (&cd, error, errno, "create directory", work);

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
      if (!airlock_guest_release_is_valid (layout->release))
        {
          g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_KERNEL_FORMAT,
                       "cannot use %s: its kernel release '%s' is not a valid release name",
                       what, layout->release);
          return FALSE;
        }
      stage = g_strdup_printf ("extract %s", in->pin->package);
      airlock_cache_report (&cd, stage, 0, 0);
      kernel_member = g_strconcat ("./", layout->kernel, NULL);
      modules_member = g_strconcat ("./", layout->modules_dir, NULL);
      members[0] = kernel_member;
      members[1] = modules_member;
      if (g_mkdir (pkg, 0755) < 0)
        return airlock_cache_set_io_error (&cd, error, errno, "create directory", pkg);
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
    return airlock_cache_set_io_error (&cd, error, errno, "create directory", link_dir);
  if (symlink (modules_dir, link) < 0)
    return airlock_cache_set_io_error (&cd, error, errno, "create symlink", link);

  /* The kernel. */
  g_clear_pointer (&stage, g_free);
  stage = g_strdup_printf ("prepare kernel %s", build->release);
  airlock_cache_report (&cd, stage, 0, 0);
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
  airlock_cache_report (&cd, stage, 0, 0);
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
