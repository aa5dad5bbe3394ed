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

static char *
get_checked (GKeyFile *kf, const char *path, const char *group, const char *key,
             gboolean (*valid) (const char *), const char *expected, GError **error)
{
  g_autoptr (GError) local_error = NULL;
  g_autofree char *value = g_key_file_get_string (kf, group, key, &local_error);

  if (!value)
    {
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_RECIPE,
                   "invalid guest kernel recipe '%s': [%s] has no key '%s'", path, group, key);
      return NULL;
    }
  g_strstrip (value);
  if (!valid (value))
    {
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_RECIPE,
                   "invalid guest kernel recipe '%s': key '%s' in [%s] is '%s', expected %s",
                   path, key, group, value, expected);
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

AirlockKernelPin *
airlock_kernel_pin_load (const char *path, AirlockArch arch, GError **error)
{
  g_autoptr (GKeyFile) kf = g_key_file_new ();
  g_autoptr (GError) local_error = NULL;
  g_autoptr (AirlockKernelPin) pin = g_new0 (AirlockKernelPin, 1);
  const char *group = airlock_arch_to_string (arch);
  g_autofree char *size = NULL;

  if (!g_key_file_load_from_file (kf, path, G_KEY_FILE_NONE, &local_error))
    {
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_RECIPE,
                   "cannot read guest kernel recipe '%s': %s", path, local_error->message);
      return NULL;
    }
  if (!g_key_file_has_group (kf, group))
    {
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_RECIPE,
                   "invalid guest kernel recipe '%s': no [%s] group", path, group);
      return NULL;
    }
  pin->package = get_checked (kf, path, group, "package", package_name_is_valid,
                              "a Debian package name", error);
  if (!pin->package)
    return NULL;
  pin->version = get_checked (kf, path, group, "version", version_is_valid,
                              "a Debian version", error);
  if (!pin->version)
    return NULL;
  pin->sha256 = get_checked (kf, path, group, "sha256", sha256_is_valid,
                             "64 lowercase hex digits", error);
  if (!pin->sha256)
    return NULL;
  size = get_checked (kf, path, group, "size", size_is_valid,
                      "the package size in bytes", error);
  if (!size)
    return NULL;
  pin->size = g_ascii_strtoull (size, NULL, 10);
  pin->origin = g_strdup (path);
  return g_steal_pointer (&pin);
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
