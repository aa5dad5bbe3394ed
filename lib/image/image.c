/* The AirlockImage (image-private.h, and airlock_image_free() of
 * image.h): made by oci.c and docker-archive.c for one platform, with the
 * run settings of the image's config and its layer list held against the
 * config's diff_ids. */
#include "config.h"

#include <string.h>

#include "image/image-private.h"
#include "image/descriptor-private.h"
#include "image/printable-private.h"
#include "json-util-private.h"

void
airlock_image_layer_free (gpointer data)
{
  AirlockImageLayer *layer = data;

  g_free (layer->digest);
  g_free (layer->media_type);
  g_free (layer);
}

/* A config string list (Entrypoint, Cmd, Env): absent or null → NULL;
 * anything but an array of strings → FALSE.  Stricter than
 * airlock_json_get_strv(), which reads a member of the wrong type as absent
 * and skips elements that are not strings: a config whose Cmd is
 * ["sh", 1] or "sh" is refused, never run as something it did not say. */
static gboolean
config_strv (JsonObject *object, const char *name, GStrv *ret_strv)
{
  JsonNode *node = object ? json_object_get_member (object, name) : NULL;
  JsonArray *array = airlock_json_get_array (object, name);
  g_auto (GStrv) strv = NULL;

  *ret_strv = NULL;
  if (!node || JSON_NODE_HOLDS_NULL (node))
    return TRUE;
  if (!array)
    return FALSE;
  strv = airlock_json_get_strv (object, name, NULL);
  /* Fewer strings than elements: one was not a string. */
  if (g_strv_length (strv) != json_array_get_length (array))
    return FALSE;
  *ret_strv = g_steal_pointer (&strv);
  return TRUE;
}

/* The signals a config's StopSignal may name, as Docker reads it (moby's
 * ParseSignal: a number, or a name with or without "SIG", in any case).
 * Linux's numbers, the same on amd64 and arm64 (asm-generic). */
static const struct {
  const char *name;
  int number;
} signal_names[] = {
  { "HUP", 1 }, { "INT", 2 }, { "QUIT", 3 }, { "ILL", 4 }, { "TRAP", 5 }, { "ABRT", 6 },
  { "IOT", 6 }, { "BUS", 7 }, { "FPE", 8 }, { "KILL", 9 }, { "USR1", 10 }, { "SEGV", 11 },
  { "USR2", 12 }, { "PIPE", 13 }, { "ALRM", 14 }, { "TERM", 15 }, { "STKFLT", 16 },
  { "CHLD", 17 }, { "CLD", 17 }, { "CONT", 18 }, { "STOP", 19 }, { "TSTP", 20 },
  { "TTIN", 21 }, { "TTOU", 22 }, { "URG", 23 }, { "XCPU", 24 }, { "XFSZ", 25 },
  { "VTALRM", 26 }, { "PROF", 27 }, { "WINCH", 28 }, { "IO", 29 }, { "POLL", 29 },
  { "PWR", 30 }, { "SYS", 31 }, { "RTMIN", 34 }, { "RTMAX", 64 },
};

/* @s as a signal number (1-64), or 0 when it names none.  "RTMIN+N" and
 * "RTMAX-N" name the real-time signals between (systemd's images stop on
 * SIGRTMIN+3). */
static int
parse_signal (const char *s)
{
  g_autofree char *up = g_ascii_strup (s, -1);
  const char *name = g_str_has_prefix (up, "SIG") ? up + 3 : up;
  guint64 n;

  if (g_ascii_string_to_unsigned (s, 10, 1, 64, &n, NULL))
    return (int) n;
  for (gsize i = 0; i < G_N_ELEMENTS (signal_names); i++)
    if (strcmp (name, signal_names[i].name) == 0)
      return signal_names[i].number;
  if (g_str_has_prefix (name, "RTMIN+") && g_ascii_string_to_unsigned (name + 6, 10, 1, 15, &n, NULL))
    return 34 + (int) n;
  if (g_str_has_prefix (name, "RTMAX-") && g_ascii_string_to_unsigned (name + 6, 10, 1, 14, &n, NULL))
    return 64 - (int) n;
  return 0;
}

gboolean
airlock_image_take_config (JsonObject *config, const char *what, AirlockImage *image,
                           GError **error)
{
  JsonObject *run = airlock_json_get_object (config, "config");
  const char *working_dir = airlock_json_get_string (run, "WorkingDir");
  const char *user = airlock_json_get_string (run, "User");
  const char *stop_signal = airlock_json_get_string (run, "StopSignal");

  if (!config_strv (run, "Entrypoint", &image->entrypoint) ||
      !config_strv (run, "Cmd", &image->cmd) || !config_strv (run, "Env", &image->env))
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED,
                   "%s: Entrypoint, Cmd or Env is not a list of strings", what);
      return FALSE;
    }
  /* Empty means unset, as in docker. */
  image->working_dir = working_dir && *working_dir ? g_strdup (working_dir) : NULL;
  image->user = user && *user ? g_strdup (user) : NULL;
  /* A signal Docker would refuse to stop the container with: refused too,
   * rather than stopping it some other way than its image says. */
  image->stop_signal = stop_signal && *stop_signal ? parse_signal (stop_signal) : 0;
  if (stop_signal && *stop_signal && !image->stop_signal)
    {
      g_autofree char *shown = airlock_image_printable (stop_signal);

      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED,
                   "%s: StopSignal '%s' is not a signal (a number 1-64 or a name such as "
                   "SIGTERM)", what, shown);
      return FALSE;
    }
  return TRUE;
}

JsonArray *
airlock_image_config_diff_ids (JsonObject *config, JsonArray *layers, const char *layers_what,
                               const char *whose, const char *config_what, GError **error)
{
  guint n_layers = json_array_get_length (layers);
  JsonArray *diff_ids;

  if (n_layers > AIRLOCK_IMAGE_MAX_LAYERS)
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_LIMIT,
                   "%s: %u layers, more than the %d allowed", layers_what, n_layers,
                   AIRLOCK_IMAGE_MAX_LAYERS);
      return NULL;
    }
  diff_ids = airlock_json_get_array (airlock_json_get_object (config, "rootfs"), "diff_ids");
  if (!diff_ids || json_array_get_length (diff_ids) != n_layers)
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED,
                   "%s: rootfs.diff_ids lists %u layers, %s %u", config_what,
                   diff_ids ? json_array_get_length (diff_ids) : 0, whose, n_layers);
      return NULL;
    }
  return diff_ids;
}

AirlockImage *
airlock_image_new_for_choice (AirlockImageSource *source, AirlockArch arch,
                              AirlockManifestChoice *choice)
{
  AirlockImage *image = g_new0 (AirlockImage, 1);

  image->reference = g_strdup (source->reference);
  image->arch = arch;
  image->platform = airlock_image_platform_string (choice->os, choice->architecture,
                                                   choice->variant);
  image->index_digest = g_strdup (choice->index_digest);
  image->layers = g_ptr_array_new_with_free_func (airlock_image_layer_free);
  return image;
}

void
airlock_image_free (AirlockImage *image)
{
  if (!image)
    return;
  g_free (image->reference);
  g_free (image->platform);
  g_free (image->index_digest);
  g_free (image->manifest_digest);
  g_free (image->config_digest);
  g_clear_pointer (&image->layers, g_ptr_array_unref);
  g_strfreev (image->entrypoint);
  g_strfreev (image->cmd);
  g_strfreev (image->env);
  g_free (image->working_dir);
  g_free (image->user);
  g_free (image);
}
