#include "config.h"

#include "guestimg/recipe-private.h"

#include "guestimg/guest-image.h"
#include "guestimg/modules-private.h"

#include <string.h>

void
airlock_kernel_pin_free (AirlockKernelPin *pin)
{
  if (!pin)
    return;
  g_free (pin->package);
  g_free (pin->version);
  g_free (pin->sha256);
  g_free (pin->origin);
  g_free (pin);
}

static gboolean
all_chars_in (const char *s, const char *extra)
{
  for (; *s; s++)
    if (!g_ascii_isalnum (*s) && !strchr (extra, *s))
      return FALSE;
  return TRUE;
}

/* Debian policy 5.6.1: lowercase letters, digits, '+', '-', '.', starting
 * with a letter or digit.  Also keeps the value from reading as an option. */
static gboolean
package_name_is_valid (const char *s)
{
  if (!g_ascii_islower (s[0]) && !g_ascii_isdigit (s[0]))
    return FALSE;
  for (; *s; s++)
    if (!g_ascii_islower (*s) && !g_ascii_isdigit (*s) && !strchr ("+-.", *s))
      return FALSE;
  return TRUE;
}

/* Debian policy 5.6.12: [epoch:]upstream[-revision], starting with a digit. */
static gboolean
version_is_valid (const char *s)
{
  return g_ascii_isdigit (s[0]) && all_chars_in (s, ".+~:-");
}

static gboolean
sha256_is_valid (const char *s)
{
  if (strlen (s) != 64)
    return FALSE;
  for (; *s; s++)
    if (!g_ascii_isdigit (*s) && !(*s >= 'a' && *s <= 'f'))
      return FALSE;
  return TRUE;
}

/* "guest kernel recipe" or "testroot recipe", for messages. */
static const char *
recipe_noun (AirlockPinRole role)
{
  return role == AIRLOCK_PIN_KERNEL ? "guest kernel recipe" : "testroot recipe";
}

static char *
get_checked (GKeyFile *kf, const char *path, AirlockPinRole role, const char *group,
             const char *key, gboolean (*valid) (const char *), const char *expected,
             GError **error)
{
  g_autoptr (GError) local_error = NULL;
  g_autofree char *value = g_key_file_get_string (kf, group, key, &local_error);

  if (!value)
    {
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_RECIPE,
                   "invalid %s '%s': [%s] has no key '%s'", recipe_noun (role), path, group, key);
      return NULL;
    }
  g_strstrip (value);
  if (!valid (value))
    {
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_RECIPE,
                   "invalid %s '%s': key '%s' in [%s] is '%s', expected %s",
                   recipe_noun (role), path, key, group, value, expected);
      return NULL;
    }
  return g_steal_pointer (&value);
}

static gboolean
size_is_valid (const char *s)
{
  guint64 v;

  return g_ascii_string_to_unsigned (s, 10, 1, G_MAXUINT64, &v, NULL);
}

/* version, sha256 and size of @group into a pin for @package. */
static AirlockKernelPin *
pin_from_group (GKeyFile *kf, const char *path, AirlockPinRole role, const char *group,
                char *package, GError **error)
{
  g_autoptr (AirlockKernelPin) pin = g_new0 (AirlockKernelPin, 1);
  g_autofree char *size = NULL;

  pin->package = package;
  pin->role = role;
  pin->version = get_checked (kf, path, role, group, "version", version_is_valid,
                              "a Debian version", error);
  if (!pin->version)
    return NULL;
  pin->sha256 = get_checked (kf, path, role, group, "sha256", sha256_is_valid,
                             "64 lowercase hex digits", error);
  if (!pin->sha256)
    return NULL;
  size = get_checked (kf, path, role, group, "size", size_is_valid,
                      "the package size in bytes", error);
  if (!size)
    return NULL;
  pin->size = g_ascii_strtoull (size, NULL, 10);
  pin->origin = g_strdup (path);
  return g_steal_pointer (&pin);
}

static GKeyFile *
load_key_file (const char *path, AirlockPinRole role, GError **error)
{
  g_autoptr (GKeyFile) kf = g_key_file_new ();
  g_autoptr (GError) local_error = NULL;

  if (!g_key_file_load_from_file (kf, path, G_KEY_FILE_NONE, &local_error))
    {
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_RECIPE,
                   "cannot read %s '%s': %s", recipe_noun (role), path, local_error->message);
      return NULL;
    }
  return g_steal_pointer (&kf);
}

AirlockKernelPin *
airlock_kernel_pin_load (const char *path, AirlockArch arch, GError **error)
{
  g_autoptr (GKeyFile) kf = load_key_file (path, AIRLOCK_PIN_KERNEL, error);
  const char *group = airlock_arch_to_string (arch);
  char *package;

  if (!kf)
    return NULL;
  if (!g_key_file_has_group (kf, group))
    {
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_RECIPE,
                   "invalid guest kernel recipe '%s': no [%s] group", path, group);
      return NULL;
    }
  package = get_checked (kf, path, AIRLOCK_PIN_KERNEL, group, "package", package_name_is_valid,
                         "a Debian package name", error);
  if (!package)
    return NULL;
  return pin_from_group (kf, path, AIRLOCK_PIN_KERNEL, group, package, error);
}

void
airlock_testroot_package_free (AirlockTestrootPackage *package)
{
  if (!package)
    return;
  airlock_kernel_pin_free (package->pin);
  g_strfreev (package->files);
  g_free (package);
}

/* A path inside the package that becomes a path inside the testroot: no
 * leading '/', no empty, "." or ".." component (it must not leave the
 * testroot), nothing a tar member pattern or the key's lines could read
 * otherwise. */
static gboolean
member_path_is_valid (const char *s)
{
  g_auto (GStrv) parts = NULL;

  if (!*s || s[0] == '/' || !all_chars_in (s, "/._+-"))
    return FALSE;
  parts = g_strsplit (s, "/", -1);
  for (guint i = 0; parts[i]; i++)
    if (!*parts[i] || g_str_equal (parts[i], ".") || g_str_equal (parts[i], ".."))
      return FALSE;
  return TRUE;
}

GPtrArray *
airlock_testroot_packages_load (const char *path, AirlockArch arch, GError **error)
{
  g_autoptr (GKeyFile) kf = load_key_file (path, AIRLOCK_PIN_TESTROOT, error);
  g_autoptr (GPtrArray) packages = NULL;
  g_auto (GStrv) groups = NULL;
  g_autofree char *prefix = g_strdup_printf ("%s ", airlock_arch_to_string (arch));

  if (!kf)
    return NULL;
  packages = g_ptr_array_new_with_free_func ((GDestroyNotify) airlock_testroot_package_free);
  groups = g_key_file_get_groups (kf, NULL);
  for (guint i = 0; groups[i]; i++)
    {
      const char *group = groups[i];
      const char *name = group + strlen (prefix);
      g_autoptr (AirlockTestrootPackage) package = NULL;
      g_auto (GStrv) files = NULL;
      gsize n_files = 0;

      if (!g_str_has_prefix (group, prefix))
        {
          AirlockArch other;
          const char *space = strchr (group, ' ');
          g_autofree char *arch_name = space ? g_strndup (group, space - group) : NULL;

          /* Another arch's package; anything else is a typo worth naming. */
          if (arch_name && airlock_arch_from_string (arch_name, &other))
            continue;
          g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_RECIPE,
                       "invalid testroot recipe '%s': group [%s] is not [ARCH PACKAGE] "
                       "(ARCH amd64 or arm64)", path, group);
          return NULL;
        }
      if (!package_name_is_valid (name))
        {
          g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_RECIPE,
                       "invalid testroot recipe '%s': '%s' in [%s] is not a Debian package name",
                       path, name, group);
          return NULL;
        }
      package = g_new0 (AirlockTestrootPackage, 1);
      package->pin = pin_from_group (kf, path, AIRLOCK_PIN_TESTROOT, group, g_strdup (name), error);
      if (!package->pin)
        return NULL;
      files = g_key_file_get_string_list (kf, group, "files", &n_files, NULL);
      if (!files || n_files == 0)
        {
          g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_RECIPE,
                       "invalid testroot recipe '%s': [%s] has no key 'files' (the paths to "
                       "take from the package, ';'-separated)", path, group);
          return NULL;
        }
      for (gsize f = 0; f < n_files; f++)
        {
          g_strstrip (files[f]);
          if (!member_path_is_valid (files[f]))
            {
              g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_RECIPE,
                           "invalid testroot recipe '%s': file '%s' in [%s] is not a relative "
                           "path inside the package", path, files[f], group);
              return NULL;
            }
        }
      package->files = g_steal_pointer (&files);
      g_ptr_array_add (packages, g_steal_pointer (&package));
    }
  return g_steal_pointer (&packages);
}

GPtrArray *
airlock_modules_list_load (const char *path, GError **error)
{
  g_autoptr (GError) local_error = NULL;
  g_autofree char *text = NULL;

  if (!g_file_get_contents (path, &text, NULL, &local_error))
    {
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_RECIPE,
                   "cannot read module list '%s': %s", path, local_error->message);
      return NULL;
    }
  return airlock_modules_list_parse (text, path, error);
}
