/* libFuzzer harness for the supervisor's readers of the image's
 * /etc/passwd and /etc/group (guest/image-files.c: parse_id, find_entry,
 * resolve_user_in), built for the host.
 *
 * The image chooses both files and its User string, and the supervisor
 * parses them in PID 1 before the workload starts: a crash there is a run
 * the image can end at will.  The input is
 *
 *   flags (1 byte) | User \0 passwd \0 group
 *
 * where flag bit 0 says the image has /etc/passwd and bit 1 /etc/group
 * (absent otherwise, as read_file's -ENOENT), the other bits and the
 * input's hash pick find_entry's field limit.  The scratch buffer is the
 * exact size the files need, so ASan sees any copy past it.  Besides the
 * sanitizers' findings, the harness aborts when:
 *
 *   - resolve_user_in returns other than 0 or -EINVAL, leaves its reason
 *     empty or unterminated, changes the files it reads, or changes the
 *     spec's ids when it fails;
 *   - a named User (no group) whose first passwd line has a uid and a gid
 *     does not resolve;
 *   - on success: a numeric user is that uid, a named one is a passwd line
 *     with that name and uid; a group given by number is that gid, one
 *     given by name a group line with that name and gid; a numeric user
 *     has no supplementary groups; each supplementary group is the gid of
 *     a group line listing the user as a member; at most SPEC_MAX_GROUPS;
 *   - find_entry returns more fields than asked for, fields outside the
 *     file, or a line whose name (or id) is not the one asked for. */
#include "config.h"

#include "image-files.h"

#include "fuzz-util.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

int LLVMFuzzerInitialize (int *argc, char ***argv);
int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/* The line of @file (split on '\n', then ':') whose first field is @name
 * and whose field @index is @value: an independent reading, by GLib. */
static gboolean
file_has (const char *file, const char *name, guint index, guint32 value)
{
  g_auto (GStrv) lines = g_strsplit (file, "\n", -1);

  for (char **line = lines; *line; line++)
    {
      g_auto (GStrv) fields = g_strsplit (*line, ":", -1);
      guint64 v;

      if (g_strv_length (fields) <= index || strcmp (fields[0], name) != 0)
        continue;
      if (g_ascii_string_to_unsigned (fields[index], 10, 0, G_MAXUINT32 - 1, &v, NULL)
          && fields[index][0] >= '0' && fields[index][0] <= '9' && v == value)
        return TRUE;
    }
  return FALSE;
}

/* A group line with gid @gid listing @user among its members. */
static gboolean
group_lists (const char *group, guint32 gid, const char *user)
{
  g_auto (GStrv) lines = g_strsplit (group, "\n", -1);

  for (char **line = lines; *line; line++)
    {
      /* Fields past the fourth are dropped, as /etc/group has four. */
      g_auto (GStrv) fields = g_strsplit (*line, ":", -1);
      guint64 v;

      if (g_strv_length (fields) < 4 || !(fields[2][0] >= '0' && fields[2][0] <= '9')
          || !g_ascii_string_to_unsigned (fields[2], 10, 0, G_MAXUINT32 - 1, &v, NULL)
          || v != gid)
        continue;
      {
        g_auto (GStrv) members = g_strsplit (fields[3], ",", -1);

        if (g_strv_contains ((const char *const *) members, user))
          return TRUE;
      }
    }
  return FALSE;
}

static gboolean is_id (const char *s, guint32 *ret);

/* Whether the first line of @passwd naming @name (with at least three
 * fields, as find_entry wants) has a uid and a gid: then a named User must
 * resolve, whatever other lines the file holds (blank ones, comments). */
static gboolean
passwd_resolves (const char *passwd, const char *name)
{
  g_auto (GStrv) lines = g_strsplit (passwd, "\n", -1);

  for (char **line = lines; *line; line++)
    {
      g_auto (GStrv) fields = g_strsplit (*line, ":", -1);
      guint32 v;

      if (g_strv_length (fields) < 3 || strcmp (fields[0], name) != 0)
        continue;
      return g_strv_length (fields) >= 4 && is_id (fields[2], &v) && is_id (fields[3], &v);
    }
  return FALSE;
}

static gboolean
is_id (const char *s, guint32 *ret)
{
  guint64 v;

  if (!(s[0] >= '0' && s[0] <= '9')
      || !g_ascii_string_to_unsigned (s, 10, 0, G_MAXUINT32 - 1, &v, NULL))
    return FALSE;
  *ret = (guint32) v;
  return TRUE;
}

static void
check_find_entry (const char *file, const char *name, guint32 id, size_t max)
{
  size_t len = strlen (file);
  g_autofree char *copy = g_memdup2 (file, len + 1);
  char *fields[8];
  size_t n;
  guint32 v;

  n = find_entry (copy, name, id, fields, max);
  if (n == 0)
    return;
  fuzz_check (n >= 3 && n <= max);
  for (size_t i = 0; i < n; i++)
    fuzz_check (fields[i] >= copy && fields[i] <= copy + len);
  if (name)
    fuzz_check (strcmp (fields[0], name) == 0);
  else
    fuzz_check (parse_id (fields[2], &v) && v == id);
}

FUZZ_DEFINE_INITIALIZE_GLIB_WARNINGS_ABORT ()

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static struct run_spec spec;
  g_autofree char *text = NULL;
  g_autofree char *scratch = NULL;
  g_autofree char *passwd_before = NULL, *group_before = NULL;
  const char *user, *passwd, *group, *end;
  char user_name[256], *group_part;
  char reason[256];
  guint8 flags;
  size_t scratch_size;
  guint32 id;
  int r;

  if (size < 1)
    return 0;
  flags = data[0];
  /* NUL-terminated pieces: the input, then two NULs in case it has fewer. */
  text = g_malloc (size + 2);
  memcpy (text, data + 1, size - 1);
  text[size - 1] = text[size] = text[size + 1] = '\0';
  end = text + size - 1;
  user = text;
  passwd = user + strlen (user) + 1;
  group = passwd <= end ? passwd + strlen (passwd) + 1 : end;
  if (group > end)
    group = end;
  if (!(flags & 1))
    passwd = NULL;
  if (!(flags & 2))
    group = NULL;
  passwd_before = g_strdup (passwd);
  group_before = g_strdup (group);

  /* find_entry on each file, by a name and an id taken from the User. */
  is_id (user, &id) || (id = (guint32) fuzz_input_hash (data, size), TRUE);
  if (passwd)
    {
      check_find_entry (passwd, user, 0, 1 + (flags >> 2) % 8);
      check_find_entry (passwd, NULL, id, 1 + (flags >> 5) % 8);
    }
  if (group)
    check_find_entry (group, user, 0, 8);

  scratch_size = MAX (passwd ? strlen (passwd) : 0, group ? strlen (group) : 0) + 1;
  scratch = g_malloc (scratch_size);
  memset (&spec, 0, sizeof spec);
  spec.user = (char *) user;
  spec.uid = spec.gid = 0xdeadbeef;
  spec.n_groups = 3;
  memset (reason, 0x5a, sizeof reason);
  r = resolve_user_in (&spec, passwd, group, scratch, scratch_size, reason, sizeof reason);

  fuzz_check (g_strcmp0 (passwd, passwd_before) == 0);
  fuzz_check (g_strcmp0 (group, group_before) == 0);
  fuzz_check (r == 0 || r == -EINVAL);
  if (passwd && !strchr (user, ':') && strlen (user) < sizeof user_name && !is_id (user, &id)
      && passwd_resolves (passwd, user))
    fuzz_check (r == 0);
  if (r != 0)
    {
      fuzz_check (memchr (reason, '\0', sizeof reason) != NULL && reason[0] != '\0');
      fuzz_check (spec.uid == 0xdeadbeef && spec.gid == 0xdeadbeef && spec.n_groups == 3);
      return 0;
    }

  /* The User it resolved: "name" or "uid", then ":group" or ":gid". */
  fuzz_check (strlen (user) < sizeof user_name);
  strcpy (user_name, user);
  group_part = strchr (user_name, ':');
  if (group_part)
    *group_part++ = '\0';

  fuzz_check (spec.n_groups <= SPEC_MAX_GROUPS);
  if (is_id (user_name, &id))
    {
      fuzz_check (spec.uid == id);
      fuzz_check (spec.n_groups == 0);
    }
  else
    {
      fuzz_check (passwd != NULL);
      fuzz_check (file_has (passwd, user_name, 2, spec.uid));
      if (!(group_part && *group_part))
        fuzz_check (file_has (passwd, user_name, 3, spec.gid));
      for (size_t i = 0; i < spec.n_groups; i++)
        fuzz_check (group && group_lists (group, spec.groups[i], user_name));
    }
  if (group_part && *group_part)
    {
      if (is_id (group_part, &id))
        fuzz_check (spec.gid == id);
      else
        fuzz_check (group && file_has (group, group_part, 2, spec.gid));
    }
  return 0;
}
