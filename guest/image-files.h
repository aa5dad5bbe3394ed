/* The image's /etc/passwd and /etc/group, as the supervisor reads them to
 * resolve the image's User.
 *
 * The image chooses these files' bytes.  Apart from supervisor.c (which
 * reads the files in the workload's root) so that the parsing is plain C
 * with no side effect: it builds for the host too, where
 * tests/fuzz/fuzz-guest-passwd.c fuzzes it. */
#ifndef AIRLOCK_IMAGE_FILES_H
#define AIRLOCK_IMAGE_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "run-spec.h"

/* A decimal id: digits only, no sign or blank, at most UINT32_MAX - 1
 * ((uid_t) -1 means "unchanged" to the kernel).  Returns whether @s is one;
 * @ret is set only then. */
bool parse_id (const char *s, uint32_t *ret);

/* Finds the line of an /etc/passwd or /etc/group-style @file whose first
 * field is @name (or whose third field is the number @id when @name is
 * NULL), and splits it into @fields (at most @max of them; the rest of the
 * line is dropped).  Writes NULs into @file as it goes.  Returns the
 * number of fields, 0 when there is no such line. */
size_t find_entry (char *file, const char *name, uint32_t id, char **fields, size_t max);

/* Resolves @spec->user the way container runtimes do: "name" or "uid",
 * optionally ":group" or ":gid"; names through @passwd and @group (the
 * image's files, NUL-terminated, or NULL when the image has none); a named
 * user's gid and supplementary groups from those files, a bare uid gets
 * gid 0... unless passwd knows it.  @scratch (@scratch_size bytes) must
 * hold a copy of either file.  Sets @spec's uid, gid and groups and returns
 * 0, or returns -EINVAL with the reason in @error and @spec unchanged. */
int resolve_user_in (struct run_spec *spec, const char *passwd, const char *group,
                     char *scratch, size_t scratch_size, char *error, size_t error_size);

#endif /* AIRLOCK_IMAGE_FILES_H */
