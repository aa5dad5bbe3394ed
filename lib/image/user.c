/* Running an image: its User resolved against its own /etc files, and the
 * argv `docker run IMAGE ARGS` would run.  Pure functions over bytes the
 * caller read from the image, so they are unit-tested without a disk. */
#include "config.h"

#include "image.h"
#include "image/printable-private.h"

#include <string.h>

/* runc's bound: ids are non-negative 31-bit numbers. */
#define MAX_ID G_MAXINT32

typedef struct {
  char *name;
  guint32 uid;                /* uid (passwd) or gid (group) */
  guint32 gid;                /* passwd only */
  GStrv members;              /* group only */
} EtcEntry;

static void
etc_entry_free (gpointer data)
{
  EtcEntry *e = data;

  g_free (e->name);
  g_strfreev (e->members);
  g_free (e);
}

static gboolean
parse_id (const char *text, guint32 *ret)
{
  guint64 value;

  if (!text || !*text || !g_ascii_isdigit (*text) ||
      !g_ascii_string_to_unsigned (text, 10, 0, MAX_ID, &value, NULL))
    return FALSE;
  *ret = value;
  return TRUE;
}

/* name:x:uid:gid:… (passwd) or name:x:gid:member,member (group); lines
 * that do not parse are skipped, as libc and runc do. */
static GPtrArray *
parse_etc (GBytes *bytes, gboolean is_group)
{
  GPtrArray *entries = g_ptr_array_new_with_free_func (etc_entry_free);
  g_autofree char *text = NULL;
  g_auto (GStrv) lines = NULL;
  gsize size;
  const char *data;

  if (!bytes)
    return entries;
  data = g_bytes_get_data (bytes, &size);
  /* An empty file has no data pointer (g_bytes_get_data() is NULL for no
   * bytes) and g_strndup (NULL, 0) is NULL, which g_strsplit() refuses: an
   * image with an empty /etc/passwd or /etc/group crashed here (found by
   * tests/fuzz/fuzz-intake, seed corpus/intake/oci-etc-files-empty). */
  text = g_strndup (data ? data : "", size);
  lines = g_strsplit (text, "\n", -1);
  for (guint i = 0; lines[i]; i++)
    {
      g_auto (GStrv) fields = NULL;
      EtcEntry *e;
      guint32 id, gid = 0;

      if (!*lines[i] || lines[i][0] == '#')
        continue;
      fields = g_strsplit (lines[i], ":", -1);
      if (g_strv_length (fields) < (is_group ? 3u : 4u) || !*fields[0] ||
          !parse_id (fields[2], &id) || (!is_group && !parse_id (fields[3], &gid)))
        continue;
      e = g_new0 (EtcEntry, 1);
      e->name = g_strdup (fields[0]);
      e->uid = id;
      e->gid = gid;
      if (is_group)
        e->members = g_strsplit (fields[3] ? fields[3] : "", ",", -1);
      g_ptr_array_add (entries, e);
    }
  return entries;
}

static EtcEntry *
find_by_name (GPtrArray *entries, const char *name)
{
  for (guint i = 0; i < entries->len; i++)
    if (g_str_equal (((EtcEntry *) entries->pdata[i])->name, name))
      return entries->pdata[i];
  return NULL;
}

static EtcEntry *
find_by_id (GPtrArray *entries, guint32 id)
{
  for (guint i = 0; i < entries->len; i++)
    if (((EtcEntry *) entries->pdata[i])->uid == id)
      return entries->pdata[i];
  return NULL;
}

gboolean
airlock_image_resolve_user (const char *user, GBytes *etc_passwd, GBytes *etc_group,
                            guint32 *ret_uid, guint32 *ret_gid, GArray **ret_groups,
                            GError **error)
{
  g_autoptr (GPtrArray) passwd = parse_etc (etc_passwd, FALSE);
  g_autoptr (GPtrArray) group = parse_etc (etc_group, TRUE);
  g_autoptr (GArray) groups = g_array_new (FALSE, FALSE, sizeof (guint32));
  g_autofree char *user_part = NULL;
  /* The image's User and its parts, for messages only. */
  g_autofree char *shown = NULL;
  g_autofree char *shown_user = NULL;
  g_autofree char *shown_group = NULL;
  const char *group_part = NULL;
  const char *colon;
  const char *name = NULL;
  guint32 uid = 0, gid = 0;
  EtcEntry *entry;

  user = user ? user : "";
  colon = strchr (user, ':');
  user_part = colon ? g_strndup (user, colon - user) : g_strdup (user);
  if (colon)
    group_part = colon + 1;
  shown = airlock_image_printable (user);
  shown_user = airlock_image_printable (user_part);
  shown_group = airlock_image_printable (group_part);
  if (colon && (!*group_part || strchr (group_part, ':')))
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_USER,
                   "user '%s' is not NAME, UID, NAME:GROUP or UID:GID", shown);
      return FALSE;
    }

  /* The user: empty is root; a number is a uid (its passwd entry, if any,
   * gives the primary group); a name must be in passwd. */
  if (!*user_part || parse_id (user_part, &uid))
    {
      entry = find_by_id (passwd, uid);
      if (entry)
        {
          gid = entry->gid;
          name = entry->name;
        }
    }
  else if (g_ascii_isdigit (*user_part) || *user_part == '-')
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_USER,
                   "user '%s': uid '%s' is not a number from 0 to %d", shown, shown_user, MAX_ID);
      return FALSE;
    }
  else if ((entry = find_by_name (passwd, user_part)))
    {
      uid = entry->uid;
      gid = entry->gid;
      name = entry->name;
    }
  else
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_USER,
                   etc_passwd ? "user '%s': the image's /etc/passwd has no user '%s'"
                              : "user '%s': the image has no /etc/passwd to look up '%s' in",
                   shown, shown_user);
      return FALSE;
    }

  if (group_part)
    {
      /* An explicit group replaces the primary group; as in runc, there
       * are then no supplementary groups. */
      if ((entry = find_by_name (group, group_part)))
        gid = entry->uid;
      else if (!parse_id (group_part, &gid))
        {
          if (g_ascii_isdigit (*group_part) || *group_part == '-')
            g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_USER,
                         "user '%s': gid '%s' is not a number from 0 to %d", shown, shown_group,
                         MAX_ID);
          else
            g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_USER,
                         etc_group ? "user '%s': the image's /etc/group has no group '%s'"
                                   : "user '%s': the image has no /etc/group to look up '%s' in",
                         shown, shown_group);
          return FALSE;
        }
    }
  else if (name)
    for (guint i = 0; i < group->len; i++)
      {
        EtcEntry *g = group->pdata[i];
        gboolean listed = g_strv_contains ((const char *const *) g->members, name);
        gboolean seen = FALSE;

        for (guint j = 0; j < groups->len && !seen; j++)
          seen = g_array_index (groups, guint32, j) == g->uid;
        if (listed && !seen)
          g_array_append_val (groups, g->uid);
      }

  *ret_uid = uid;
  *ret_gid = gid;
  if (ret_groups)
    *ret_groups = g_steal_pointer (&groups);
  return TRUE;
}

GStrv
airlock_image_command (const AirlockImage *image, const char *const *args, GError **error)
{
  g_autoptr (GStrvBuilder) builder = g_strv_builder_new ();
  g_auto (GStrv) argv = NULL;

  if (image->entrypoint)
    g_strv_builder_addv (builder, (const char **) image->entrypoint);
  /* `docker run IMAGE ARGS`: ARGS replace Cmd, never Entrypoint. */
  if (args && args[0])
    g_strv_builder_addv (builder, (const char **) args);
  else if (image->cmd)
    g_strv_builder_addv (builder, (const char **) image->cmd);
  argv = g_strv_builder_end (builder);
  if (!argv[0])
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_NO_COMMAND,
                   "%s: the image (%s) has no Entrypoint and no Cmd, and no arguments were "
                   "given: nothing to run", image->reference, image->platform);
      return NULL;
    }
  return g_steal_pointer (&argv);
}
