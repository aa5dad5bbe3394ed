/* The image's /etc/passwd and /etc/group (image-files.h): apart from
 * supervisor.c so that they build for the host, where
 * tests/fuzz/fuzz-guest-passwd.c fuzzes them. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "image-files.h"

bool
parse_id (const char *s, uint32_t *ret)
{
  char *end;
  unsigned long v;

  if (*s < '0' || *s > '9')
    return false;
  errno = 0;
  v = strtoul (s, &end, 10);
  if (errno || *end || v > UINT32_MAX - 1)
    return false;
  *ret = (uint32_t) v;
  return true;
}

/* Finds the line of an /etc/passwd or /etc/group-style @file whose first
 * field is @name (or whose third field is the number @id when @name is
 * NULL), and splits it into @fields.  Returns the number of fields, 0 when
 * there is no such line. */
size_t
find_entry (char *file, const char *name, uint32_t id, char **fields, size_t max)
{
  for (char *line = file, *next; line && *line; line = next)
    {
      size_t n = 0;
      char *p = line;
      uint32_t v;

      next = strchr (line, '\n');
      if (next)
        *next++ = '\0';
      while (n < max)
        {
          fields[n++] = p;
          p = strchr (p, ':');
          if (!p)
            break;
          *p++ = '\0';
        }
      if (n < 3)
        continue;
      if (name ? strcmp (fields[0], name) == 0 : (parse_id (fields[2], &v) && v == id))
        return n;
    }
  return 0;
}

/* See image-files.h.  The body is the supervisor's resolve_user() as it
 * was, after its reads of the two files. */
int
resolve_user_in (struct run_spec *spec, const char *passwd, const char *group,
                 char *scratch, size_t scratch_size, char *error, size_t error_size)
{
  char *const copy = scratch;
  char user[256], *group_part, *fields[8];
  bool have_passwd = passwd != NULL;
  bool have_group = group != NULL;
  const char *user_name = NULL;
  uint32_t uid, gid = 0;

  /* Every strcpy into @scratch below copies one of the two files or "". */
  if (scratch_size == 0 || (passwd && strlen (passwd) >= scratch_size)
      || (group && strlen (group) >= scratch_size))
    return spec_fail (error, error_size,
                      "user '%s': /etc/passwd or /etc/group is larger than %zu bytes", spec->user,
                      scratch_size);

  if (strlen (spec->user) >= sizeof user)
    return spec_fail (error, error_size, "user '%s' is too long", spec->user);
  strcpy (user, spec->user);
  group_part = strchr (user, ':');
  if (group_part)
    *group_part++ = '\0';

  strcpy (copy, have_passwd ? passwd : "");
  if (parse_id (user, &uid))
    {
      if (find_entry (copy, NULL, uid, fields, 8) >= 4)
        {
          parse_id (fields[3], &gid);
          user_name = NULL;   /* numeric users get no supplementary groups */
        }
    }
  else
    {
      if (!have_passwd)
        return spec_fail (error, error_size, "user '%s': the image has no /etc/passwd", user);
      if (find_entry (copy, user, 0, fields, 8) < 4 || !parse_id (fields[2], &uid)
          || !parse_id (fields[3], &gid))
        return spec_fail (error, error_size, "user '%s' is not in the image's /etc/passwd", user);
      user_name = user;
    }
  if (group_part && *group_part)
    {
      strcpy (copy, have_group ? group : "");
      if (!parse_id (group_part, &gid))
        {
          if (!have_group || find_entry (copy, group_part, 0, fields, 8) < 3
              || !parse_id (fields[2], &gid))
            return spec_fail (error, error_size, "group '%s' is not in the image's /etc/group",
                              group_part);
        }
    }
  spec->uid = uid;
  spec->gid = gid;
  spec->n_groups = 0;
  if (user_name && have_group)
    {
      /* Supplementary groups: every group listing the user as a member. */
      strcpy (copy, group);
      for (char *line = copy, *next; line && *line && spec->n_groups < SPEC_MAX_GROUPS; line = next)
        {
          size_t n = 0;
          char *p = line;
          uint32_t g;

          next = strchr (line, '\n');
          if (next)
            *next++ = '\0';
          while (n < 4)
            {
              fields[n++] = p;
              p = strchr (p, ':');
              if (!p)
                break;
              *p++ = '\0';
            }
          if (n < 4 || !parse_id (fields[2], &g))
            continue;
          for (char *m = strtok (fields[3], ","); m; m = strtok (NULL, ","))
            if (strcmp (m, user_name) == 0)
              {
                spec->groups[spec->n_groups++] = g;
                break;
              }
        }
    }
  return 0;
}
