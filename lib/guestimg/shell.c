#include "config.h"

#include "guestimg/shell-private.h"

#include "fsutil-private.h"
#include "guestimg/initramfs-variant-private.h"
#include "guestimg/testroot-private.h"
#include "json-util-private.h"
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

static const AirlockInitramfsVariantKind shell_kind = {
  "shell", AIRLOCK_SHELL_BUILDER, AIRLOCK_SHELL_MANIFEST_FILE, AIRLOCK_SHELL_INITRAMFS_FILE,
};

/* shell.json's own member: the package the binary came from. */
static void
describe_shell (JsonBuilder *b, gpointer user_data)
{
  AirlockShellTools *tools = user_data;
  const AirlockKernelPin *pin = tools->package->pin;

  json_builder_set_member_name (b, "package");
  json_builder_begin_object (b);
  airlock_json_set_str (b, "package", pin->package);
  airlock_json_set_str (b, "version", pin->version);
  airlock_json_set_str (b, "sha256", pin->sha256);
  airlock_json_set_str (b, "file", tools->package->files[0]);
  json_builder_end_object (b);
}

/* airlock_shell_tools_build() once the package's file is in @packages_dir. */
static gboolean
write_shell (AirlockShellTools *tools, const char *key, const char *base_path,
             const char *base_sha256, const char *packages_dir, const char *dir, GError **error)
{
  g_autoptr (AirlockCpio) cpio = airlock_cpio_new ();
  g_autofree char *host_path = g_build_filename (packages_dir, tools->package->files[0], NULL);
  g_autofree char *binary = g_strdup_printf (AIRLOCK_SHELL_PATH "/bin/%s", tools->binary);
  const AirlockKernelPin *pin = tools->package->pin;
  GStatBuf st;

  if (g_lstat (host_path, &st) < 0 || !S_ISREG (st.st_mode))
    {
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_FAILED,
                   "shell package '%s' version '%s' has no file '%s' (named in '%s')",
                   pin->package, pin->version, tools->package->files[0], pin->origin);
      return FALSE;
    }
  /* No progress: the archive is one file, and "write shell" was said. */
  return airlock_cpio_add_file (cpio, binary, 0755, host_path, error)
         && airlock_cpio_add_symlink (cpio, AIRLOCK_SHELL_PATH "/bin/sh", tools->binary, error)
         && airlock_initramfs_variant_write (&shell_kind, cpio, key, tools->arch, base_path,
                                             base_sha256, dir, describe_shell, tools, NULL, NULL,
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
  return airlock_initramfs_variant_cache_load (&shell_kind, dir, key, ret_path, ret_sha256,
                                               ret_why);
}
