#include "config.h"

#include "guestimg/testroot-private.h"

#include "guestimg/shell-private.h"

#include "fsutil-private.h"
#include "guestimg/guest-image.h"
#include "guestimg/package-private.h"

#include <errno.h>
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <string.h>
#include <sys/stat.h>

void
airlock_shell_tools_free (AirlockShellTools *tools)
{
  if (!tools)
    return;
  airlock_testroot_package_free (tools->package);
  g_free (tools->binary);
  g_free (tools);
}

AirlockShellTools *
airlock_shell_tools_load (AirlockArch arch, const char *recipe_path, GError **error)
{
  g_autoptr (AirlockShellTools) tools = g_new0 (AirlockShellTools, 1);
  g_autoptr (GPtrArray) packages = airlock_testroot_packages_load (recipe_path, arch, error);
  AirlockTestrootPackage *pkg;
  const char *base_name;

  if (!packages)
    return NULL;
  if (packages->len != 1)
    {
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_RECIPE,
                   "invalid shell recipe '%s': it pins %u packages for %s, where airlock's "
                   "static shell is one package", recipe_path, packages->len,
                   airlock_arch_to_string (arch));
      return NULL;
    }
  pkg = packages->pdata[0];
  base_name = strrchr (pkg->files[0], '/') ? strrchr (pkg->files[0], '/') + 1 : pkg->files[0];
  if (g_strv_length (pkg->files) != 1 || !g_str_equal (base_name, "busybox"))
    {
      /* The guest runs it as "sh": a multi-call busybox is what answers
       * to that name (and brings the tools a shell session needs). */
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_RECIPE,
                   "invalid shell recipe '%s': [%s %s] must name exactly one file, a static "
                   "busybox (files=bin/busybox)", recipe_path, airlock_arch_to_string (arch),
                   pkg->pin->package);
      return NULL;
    }
  pkg->pin->role = AIRLOCK_PIN_SHELL;
  tools->arch = arch;
  tools->binary = g_strdup ("busybox");
  tools->package = g_ptr_array_steal_index (packages, 0);
  return g_steal_pointer (&tools);
}

char *
airlock_shell_tools_key (AirlockShellTools *tools, const char *base_initramfs_sha256)
{
  g_autoptr (GString) s = g_string_new (NULL);
  const AirlockKernelPin *pin = tools->package->pin;

  /* One line per input, as the testroot's key; the pin fixes the file's
   * bytes, so nothing needs downloading to know the key. */
  g_string_append_printf (s, "builder %s\narch %s\nbase %s\n", AIRLOCK_SHELL_BUILDER,
                          airlock_arch_to_string (tools->arch), base_initramfs_sha256);
  g_string_append_printf (s, "deb %s %s %s %" G_GUINT64_FORMAT "\n", pin->package, pin->version,
                          pin->sha256, pin->size);
  g_string_append_printf (s, "from %s %s/bin/%s <- %s\n", pin->package, AIRLOCK_SHELL_PATH,
                          tools->binary, tools->package->files[0]);
  g_string_append_printf (s, "link %s/bin/sh %s\n", AIRLOCK_SHELL_PATH, tools->binary);
  return g_compute_checksum_for_string (G_CHECKSUM_SHA256, s->str, s->len);
}

/* airlock_shell_tools_build() once the package's file is in @packages_dir. */
static gboolean
write_shell (AirlockShellTools *tools, const char *key, const char *base_path,
             const char *base_sha256, const char *packages_dir, const char *dir, GError **error)
{
  g_autoptr (AirlockCpio) cpio = airlock_cpio_new ();
  g_autofree char *host_path = g_build_filename (packages_dir, tools->package->files[0], NULL);
  g_autofree char *binary = g_strdup_printf (AIRLOCK_SHELL_PATH "/bin/%s", tools->binary);
  g_autofree char *out_path = g_build_filename (dir, AIRLOCK_SHELL_INITRAMFS_FILE, NULL);
  g_autofree char *manifest_path = g_build_filename (dir, AIRLOCK_SHELL_MANIFEST_FILE, NULL);
  g_autoptr (GFile) out_file = g_file_new_for_path (out_path);
  g_autoptr (GFileOutputStream) file_out = NULL;
  g_autoptr (GOutputStream) out = NULL;
  g_autoptr (GMappedFile) base = NULL;
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  g_autoptr (JsonNode) root = NULL;
  g_autofree char *json = NULL;
  g_autofree char *sha256 = NULL;
  const AirlockKernelPin *pin = tools->package->pin;
  GStatBuf st;

  if (g_lstat (host_path, &st) < 0 || !S_ISREG (st.st_mode))
    {
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_FAILED,
                   "shell package '%s' version '%s' has no file '%s' (named in '%s')",
                   pin->package, pin->version, tools->package->files[0], pin->origin);
      return FALSE;
    }
  if (!airlock_cpio_add_file (cpio, binary, 0755, host_path, error)
      || !airlock_cpio_add_symlink (cpio, AIRLOCK_SHELL_PATH "/bin/sh", tools->binary, error))
    return FALSE;
  base = g_mapped_file_new (base_path, FALSE, error);
  if (!base)
    {
      g_prefix_error (error, "cannot read initramfs '%s': ", base_path);
      return FALSE;
    }
  file_out = g_file_create (out_file, G_FILE_CREATE_NONE, NULL, error);
  if (!file_out)
    return FALSE;
  out = g_buffered_output_stream_new_sized (G_OUTPUT_STREAM (file_out), 1 << 20);
  /* The base archive ends with its trailer, padded to 4 bytes: the kernel
   * starts the next archive right after it. */
  if (!g_output_stream_write_all (out, g_mapped_file_get_contents (base),
                                  g_mapped_file_get_length (base), NULL, NULL, error)
      || !airlock_cpio_write (cpio, out, NULL, NULL, error)
      || !g_output_stream_close (out, NULL, error))
    {
      g_prefix_error (error, "cannot write shell initramfs '%s': ", out_path);
      return FALSE;
    }
  if (g_stat (out_path, &st) < 0)
    {
      int saved_errno = errno;
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_FAILED,
                   "cannot read '%s': %s", out_path, g_strerror (saved_errno));
      return FALSE;
    }
  sha256 = airlock_sha256_file (out_path, error);
  if (!sha256)
    return FALSE;

  /* Last: the manifest's mtime vouches for the file written before it. */
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "builder");
  json_builder_add_string_value (b, AIRLOCK_SHELL_BUILDER);
  json_builder_set_member_name (b, "key");
  json_builder_add_string_value (b, key);
  json_builder_set_member_name (b, "arch");
  json_builder_add_string_value (b, airlock_arch_to_string (tools->arch));
  json_builder_set_member_name (b, "base_initramfs_sha256");
  json_builder_add_string_value (b, base_sha256);
  json_builder_set_member_name (b, "package");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "package");
  json_builder_add_string_value (b, pin->package);
  json_builder_set_member_name (b, "version");
  json_builder_add_string_value (b, pin->version);
  json_builder_set_member_name (b, "sha256");
  json_builder_add_string_value (b, pin->sha256);
  json_builder_set_member_name (b, "file");
  json_builder_add_string_value (b, tools->package->files[0]);
  json_builder_end_object (b);
  json_builder_set_member_name (b, "initramfs");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "file");
  json_builder_add_string_value (b, AIRLOCK_SHELL_INITRAMFS_FILE);
  json_builder_set_member_name (b, "size");
  json_builder_add_int_value (b, st.st_size);
  json_builder_set_member_name (b, "sha256");
  json_builder_add_string_value (b, sha256);
  json_builder_end_object (b);
  json_builder_end_object (b);
  root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  json_generator_set_pretty (gen, TRUE);
  json = json_generator_to_data (gen, NULL);
  return g_file_set_contents_full (manifest_path, json, -1, G_FILE_SET_CONTENTS_CONSISTENT, 0644,
                                   error);
}

gboolean
airlock_shell_tools_build (AirlockShellTools *tools, const char *key, const char *base_path,
                           const char *base_sha256, const char *downloads_dir, const char *dir,
                           AirlockProgressFunc progress, gpointer progress_data, GError **error)
{
  g_autofree char *packages_dir = g_build_filename (dir, "packages", NULL);
  g_autofree char *deb = NULL;
  g_autofree char *member = g_strconcat ("./", tools->package->files[0], NULL);
  g_autofree char *what = g_strdup_printf ("shell package '%s' version '%s'",
                                           tools->package->pin->package,
                                           tools->package->pin->version);
  const char *members[] = { member, NULL };
  gboolean ok;

  if (g_mkdir (packages_dir, 0755) < 0)
    {
      int saved_errno = errno;
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_FAILED,
                   "cannot create directory '%s': %s", packages_dir, g_strerror (saved_errno));
      return FALSE;
    }
  deb = airlock_kernel_pin_fetch (tools->package->pin, tools->arch, downloads_dir, NULL, progress,
                                  progress_data, error);
  if (progress)
    progress ("write shell", 0, 0, progress_data);
  ok = deb && airlock_deb_extract (deb, packages_dir, members, what, error)
       && write_shell (tools, key, base_path, base_sha256, packages_dir, dir, error);
  /* The cache keeps the archive, not the extracted file. */
  airlock_rm_rf (packages_dir);
  return ok;
}

gboolean
airlock_shell_tools_cache_load (const char *dir, const char *key, char **ret_path,
                                char **ret_sha256, char **ret_why)
{
  return airlock_initramfs_variant_cache_load (dir, key, AIRLOCK_SHELL_BUILDER,
                                               AIRLOCK_SHELL_MANIFEST_FILE,
                                               AIRLOCK_SHELL_INITRAMFS_FILE, ret_path, ret_sha256,
                                               ret_why);
}
